// Reads what NCCL prints with NCCL_DEBUG=INFO (or WARN): the version, the communicator's shape,
// the network it chose and its devices, GPUDirect RDMA per connection, NVLS, multi-node NVLink
// (collectives/nccl_info_mnnvl.h), channel counts, the variables it says the environment set, the
// tuner it loaded, its per-size choices (TUNING lines, the symmetric-kernel and copy-engine ones
// included), its own model of each collective (the tuning table, collectives/nccl_info_tuning_table.h)
// and its WARN lines.
//
// Any NCCL from 2.18 on, one rank's file or many ranks mixed, with other program output in
// between (nccl-tests headers, timestamps, launcher tags, prefixes stripped by a log collector).
// A line NCCL would not print is skipped, never an error. What no line shows stays unknown
// (nullopt): nothing is inferred from what is missing.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "collectives/nccl_info_tuning_table.h"

namespace nccltune {

// One device of "NET/IB : Using [0]mlx5_0:1/IB/SHARP ..." or "NET/Socket : Using [0]eth0:...".
struct NcclNetDevice {
  std::string name;                       // as printed: "mlx5_0", "mlx5_0+mlx5_1" (merged), "eth0"
  std::optional<int> port;                // IB devices only
  std::optional<std::string> link_layer;  // "IB" or "RoCE"; null for sockets
  bool sharp = false;                     // "/SHARP": the HPC-X plugin sees SHARP on it
  friend bool operator==(const NcclNetDevice&, const NcclNetDevice&) = default;
};

// One TUNING line: what NCCL chose for one collective at one size.
struct NcclLoggedChoice {
  std::optional<std::string> op;  // "AllReduce"; null before 2.23, whose lines do not say
  int64_t bytes = 0;
  std::string algo;   // "RING", "NVLS_TREE" (older numeric values are named the same way)
  std::string proto;  // "LL", "LL128", "SIMPLE"
  friend auto operator<=>(const NcclLoggedChoice&, const NcclLoggedChoice&) = default;
};

// A "[Symmetric]" (2.27+) or "[Copy Engine]" (2.29+) TUNING line: a collective NCCL ran with a
// symmetric-memory kernel or with cudaMemcpy, outside its algorithm and protocol kernels.
//   "%s [Symmetric]: %ld Bytes -> Kernel %s nchannels %d nthreads %d" (2.27, every rank; 2.28+
//   rank 0 only, with " nWorks %d" appended: src/scheduler/symmetric_sched.cc)
//   "%s [Copy Engine]: %ld Bytes -> cudaMemcpy%s" (rank 0; "%s" is "; CE synchronization with
//   NVLS" or nothing: src/enqueue.cc)
struct NcclKernelChoice {
  std::string op;  // "AllReduce"
  int64_t bytes = 0;
  std::string path;                             // "symmetric" or "copy_engine"
  std::string kernel;                           // "AllReduce_AGxLLMC_R"; "cudaMemcpy" on the copy engine
  std::optional<int> channels, threads, works;  // symmetric only; works from 2.28
  bool nvls_sync = false;                       // copy engine synchronized with NVLS
  friend auto operator<=>(const NcclKernelChoice&, const NcclKernelChoice&) = default;
};

// A line that says something went wrong: a WARN, or a known failure text anywhere.
struct NcclLogLine {
  std::string source;  // the file name ("-" for stdin)
  int line = 0;        // 1-based, within `source`
  std::string text;    // the message, prefix removed, at most kMaxLogLineChars
};

// Failure signatures with a usual cause (the verdicts explain them).
enum class NcclFailureKind {
  ib_completion,  // "Got completion from peer ... status=N" / "with error N"
  system_error,   // "unhandled system error"
  remote_error,   // "remote process exited or there was a network error"
  timeout,        // a collective or a connection timed out
};

struct NcclFailure {
  NcclFailureKind kind = NcclFailureKind::ib_completion;
  std::optional<int> status;  // the ibv_wc_status of an IB completion error
  NcclLogLine where;
};

// The values ranks printed alike in "MNNVL busId ... fabric UUID ... cliqueId ... state ...
// healthMask ..." (collectives/nccl_info_mnnvl.h), with how many lines did and the first.
struct NcclMnnvlFabric {
  std::string fabric_uuid;
  std::uint32_t clique_id = 0;
  int state = 0;  // NVML's fabric state; 3 is COMPLETED
  std::uint32_t health_mask = 0;
  int lines = 0;
  NcclLogLine first;
};

struct NcclInfoLog {
  std::optional<std::string> nccl_version;  // "2.21.5"
  std::optional<std::string> cuda_version;  // "12.4": the CUDA NCCL was built with
  std::optional<std::string> cuda_driver;   // "12.8", from "cudaDriverVersion 12080"
  std::optional<int> ranks, nodes, local_ranks;
  std::vector<std::string> hosts;  // sorted, from the line prefixes and nccl-tests' rank list

  std::optional<std::string> net_plugin;  // "Using network X", "Loaded net plugin X", "via NET/X/0"
  bool net_plugin_in_use = false;         // from "Using network X", which the other lines never override
  std::optional<std::string> connection_network;  // the X of the first "via NET/X/0" line
  std::optional<std::string> transport;           // IB, RoCE, Socket, OFI, plugin; see the .cpp
  std::optional<std::string> plugin_library;      // "Plugin Path : /.../libnccl-net.so"
  std::vector<NcclNetDevice> devices;             // first seen first, each name once
  bool ib_devices_listed = false;                 // a "NET/IB : Using [...]" line: verbs devices exist
  bool ofi_lines = false;                         // "NET/OFI ..." lines (aws-ofi-nccl)
  std::optional<std::string> net_plugin_requested;  // "NET/Plugin: Plugin name set by env to X"
  // Variables a net plugin put into the environment before NCCL read them (aws-ofi-nccl's "NET/OFI
  // Adding NCCL_PROTO=simple to environment"), and the reason it gave for forcing the protocol.
  std::map<std::string, std::string> plugin_env;
  std::optional<std::string> plugin_proto_reason;  // "byte delivery ordering not supported"

  int net_connections = 0;  // "... via NET/..." lines
  int gdr_connections = 0;  // those ending in /GDRDMA
  // Where NCCL or its net plugin says why GPUDirect RDMA is off: "NET/IB : GPU Direct RDMA
  // Disabled for HCA 0 'mlx5_0'", "GPU Direct RDMA Disabled for GPU 0 / HCA ... (distance 5 > 4)",
  // "NET/OFI Could not disable CUDA API usage for HMEM, disabling GDR". Each text once, first seen first.
  std::vector<NcclLogLine> gdr_causes;

  std::optional<bool> nvls_available;          // false when any device says it is not
  // NVLS in the matrix NCCL prints when NCCL_ALGO or NCCL_PROTO is set ("Enabled NCCL Func/Proto/
  // Algo Matrix:"): whether any function has NVLS or NVLSTree enabled. See nvls_enabled().
  std::optional<bool> nvls_in_enabled_matrix;
  std::optional<int> nvls_channels;            // the most any rank reported
  std::optional<bool> mnnvl;                   // what NCCL decided ("MNNVL %d" of the comm and clique lines)
  std::vector<NcclMnnvlFabric> mnnvl_fabrics;  // sorted by their values
  std::optional<int> mnnvl_clique_size;        // the largest "cliqueSize"
  std::optional<int> mnnvl_nvl_domain_size;    // 2.30+: the largest "nvlDomainSize"
  std::vector<int> mnnvl_clique_ranks;         // the "cliqueRank"s printed, sorted, each once
  std::optional<int> coll_channels, collnet_channels;

  std::map<std::string, std::string> env;  // "NCCL_X set by environment to V" and alike

  std::optional<std::string> tuner_loaded;     // "TUNER/Plugin: Using X"
  std::optional<std::string> tuner_fallback;   // "internal" when NCCL says it uses its own
  // NCCL_TUNER_PLUGIN as NCCL reports it ("TUNER/Plugin: NCCL_TUNER_PLUGIN set to X", 2.21 to 2.25),
  // or the name NCCL made of it and could not find ("Could not find: libnccl-tuner-X.so").
  std::optional<std::string> tuner_requested;
  bool tuner_symbol_missing = false;           // a library was opened without a tuner symbol
  // "TUNER/Plugin: Plugin name set by env to X" (2.21 to 2.27): the library NCCL opened for a tuner,
  // named by NCCL_TUNER_PLUGIN or, for a tuner packed in the net plugin, by NCCL_NET_PLUGIN.
  std::optional<std::string> tuner_library_from_env;
  bool tuner_not_found = false;  // "TUNER/Plugin: Could not find: ..." or "External tuner plugin X is unsupported"
  // The plugin loaded but hands every choice back to NCCL: aws-ofi-nccl's "NCCL_OFI_TUNER is not
  // available for platform : X, Fall back to NCCL's tuner" (the text, first seen).
  std::optional<std::string> tuner_declined;
  bool tuner_initialized = false;  // a plugin's "Initializing tuner for N nodes, M ranks"

  std::vector<NcclLoggedChoice> choices;         // sorted, each once
  std::vector<NcclKernelChoice> kernel_choices;  // sorted, each once
  std::vector<NcclModelTable> model_tables;      // the tuning tables, first seen first, each once
  std::vector<NcclLogLine> warnings;
  int warnings_dropped = 0;  // beyond kMaxLogWarnings
  std::vector<NcclFailure> failures;
  int nccl_lines = 0;  // lines recognised as NCCL's own
  // Lines of NCCL's INFO account: "NCCL INFO" lines, and lines a collector stripped of that prefix
  // that read as one. 0 for a log of NCCL_DEBUG=WARN or VERSION, whatever version line it has.
  int info_lines = 0;
};

// Whether NCCL enabled NVLS for this job, as NCCL says it: its tuning table (an NVLS cell with a
// bandwidth), else the enabled matrix, else an NCCL_ALGO list that names algorithms (as NCCL's
// parseList reads it: without NVLS or NVLSTree, neither runs). nullopt when nothing says.
std::optional<bool> nvls_enabled(const NcclInfoLog& log);

// The tuner whose choices count: the plugin NCCL loaded, unless it handed them back (tuner_declined);
// "internal" when NCCL uses its own; nullopt when no line says.
std::optional<std::string> tuner_in_effect(const NcclInfoLog& log);

inline constexpr std::size_t kMaxLogWarnings = 1000;
inline constexpr std::size_t kMaxLogLineChars = 1000;

// Reads several inputs into one NcclInfoLog (a job's per-rank files); each call adds one.
class NcclInfoLogReader {
 public:
  void add(std::string_view text, std::string_view source);
  // Adds what another reader's result() holds (a node's ranks, read on that node): the same facts
  // as reading its texts here, but for the order of warnings and which ones fit under the caps.
  void add(const NcclInfoLog& read_elsewhere);
  NcclInfoLog result() const;

  // Sets beside the vectors, so that a long or hostile log costs a lookup per line, not a scan.
  struct Index {
    std::set<std::string> hosts;
    std::map<std::string, std::size_t> device_at;
    std::set<NcclLoggedChoice> choices;
    std::set<NcclKernelChoice> kernel_choices;
    std::set<int> clique_ranks;
    // A fabric's values -> its place in mnnvl_fabrics.
    std::map<std::tuple<std::string, std::uint32_t, int, std::uint32_t>, std::size_t> fabric_at;
  };

 private:
  NcclInfoLog log_;
  Index index_;
};

// One input; the same as a reader with one add().
NcclInfoLog parse_nccl_info_log(std::string_view text, std::string_view source);

// The facts as nccltune/nccl-log/v1 (without "verdicts", which the caller adds).
nlohmann::ordered_json nccl_info_log_to_json(const NcclInfoLog& log);

}  // namespace nccltune
