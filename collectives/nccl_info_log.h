// Reads what NCCL prints with NCCL_DEBUG=INFO (or WARN): the version, the communicator's shape,
// the network it chose and its devices, GPUDirect RDMA per connection, NVLS, channel counts, the
// variables it says the environment set, the tuner it loaded, its per-size choices (TUNING lines)
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
#include <vector>

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

struct NcclInfoLog {
  std::optional<std::string> nccl_version;  // "2.21.5"
  std::optional<std::string> cuda_version;  // "12.4": the CUDA NCCL was built with
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

  int net_connections = 0;  // "... via NET/..." lines
  int gdr_connections = 0;  // those ending in /GDRDMA

  std::optional<bool> nvls_available;  // false when any device says it is not
  std::optional<int> nvls_channels;    // the most any rank reported
  std::optional<bool> mnnvl;
  std::optional<int> coll_channels, collnet_channels;

  std::map<std::string, std::string> env;  // "NCCL_X set by environment to V" and alike

  std::optional<std::string> tuner_loaded;     // "TUNER/Plugin: Using X"
  std::optional<std::string> tuner_fallback;   // "internal" when NCCL says it uses its own
  std::optional<std::string> tuner_requested;  // NCCL_TUNER_PLUGIN as NCCL reports it
  bool tuner_symbol_missing = false;           // a library was opened without a tuner symbol

  std::vector<NcclLoggedChoice> choices;  // sorted, each once
  std::vector<NcclLogLine> warnings;
  int warnings_dropped = 0;  // beyond kMaxLogWarnings
  std::vector<NcclFailure> failures;
  int nccl_lines = 0;  // lines recognised as NCCL's own
};

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

 private:
  NcclInfoLog log_;
  // Sets beside the vectors, so that a long or hostile log costs a lookup per line, not a scan.
  std::set<std::string> hosts_;
  std::map<std::string, std::size_t> device_at_;
  std::set<NcclLoggedChoice> choices_;
};

// One input; the same as a reader with one add().
NcclInfoLog parse_nccl_info_log(std::string_view text, std::string_view source);

// The facts as nccltune/nccl-log/v1 (without "verdicts", which the caller adds).
nlohmann::ordered_json nccl_info_log_to_json(const NcclInfoLog& log);

}  // namespace nccltune
