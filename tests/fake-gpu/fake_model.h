// FakeModel: the fake GPU stack's model file, schema nccltune/fake-model/v1 (tests/fake-gpu/README.md):
// devices, NCCL's default algorithm/protocol per size, channel scaling, per-algorithm latency and bandwidth,
// effects of NCCL_* variables, injected faults and timing noise. Parsing is strict: an unknown key anywhere
// is an error naming the file and the key path.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/result.h"

namespace nccltune::fake {

inline constexpr std::string_view kModelSchema = "nccltune/fake-model/v1";
inline constexpr int kDefaultNcclVersion = 22809;

struct FakeDevice {
  std::string name = "NVIDIA H100 80GB HBM3";
  std::string pci = "0000:18:00.0";
  int sm = 90;  // compute capability, major * 10 + minor
};

// A condition on NCCL_* variables: each listed variable must have one of its values;
// std::nullopt stands for "unset" (YAML null).
using Condition = std::map<std::string, std::vector<std::optional<std::string>>>;

// What NCCL picks with no NCCL_ALGO / NCCL_PROTO, for sizes up to max_bytes.
struct DefaultChoice {
  std::optional<int64_t> max_bytes;  // none: every larger size
  std::string algo;
  std::string proto;
};

struct ProtoCost {
  double lat_us = 0;
  double busbw_gbps = 0;
};

struct AlgoModel {
  std::map<std::string, ProtoCost> protos;  // by canonical protocol name
  Condition requires_env;                   // `requires`
};

struct Effect {
  Condition when;
  // Set: the effect acts only on ops that run this algorithm (NCCL_NVLS_CHUNKSIZE moves NVLS and
  // NVLSTree only); unset: on every op.
  std::optional<std::string> algo;
  // `algos` / `protos`: the effect acts only on ops that run one of these algorithms / protocols
  // (NCCL_BUFFSIZE sizes Simple's buffers only); empty: any. With `algo`, both must hold.
  std::vector<std::string> algos;
  std::vector<std::string> protos;
  // Whether the effect acts on some pairs only (algo, algos or protos).
  bool scoped() const { return algo || !algos.empty() || !protos.empty(); }
  double busbw_scale = 1;
  double lat_scale = 1;
};

enum class FaultKind { init_error, hang, crash, corrupt, slow_rank, slow_node, slow_link, late_rank };

std::string_view to_string(FaultKind kind);
// Whether the fault only stretches op times (slow_rank, slow_node, slow_link): the op still
// returns the right data.
bool only_slows(FaultKind kind);

// slow_node's `path`: which communicators of the node it slows, by their node count.
enum class FaultPath { any, network, local };  // network: more than one node; local: one
std::string_view to_string(FaultPath path);

// One injected fault: applies when `when` holds at communicator init (an empty `when` always
// holds), to every rank or only to `rank`, and with `node` only to ranks on that emulated node
// (comm_model.h, CommNodes). slow_rank multiplies that rank's op times by `factor`. slow_node
// and slow_link stand for hardware of the fleet (a slow NIC on one node, a bad cable or switch
// port between two): they multiply every rank's op times in each communicator that holds
// `node` (on `path`) or both `link` nodes, since a collective ends when its slowest rank does.
struct Fault {
  Condition when;
  FaultKind kind = FaultKind::corrupt;
  std::optional<int> rank;
  double factor = 2;
  // Initialized so that `Fault{when, kind, rank, factor}` (older callers) stays warning-free.
  std::optional<int> node = std::nullopt;  // emulated node index; slow_node: one in the communicator
  std::optional<std::pair<int, int>> link = std::nullopt;  // slow_link's `nodes`
  FaultPath path = FaultPath::any;                         // slow_node's `path`
  // late_rank: the process of world rank `rank` (the launcher's), or every process on emulated
  // node `node`, reaches every collective this many microseconds late (a compute straggler).
  double delay_us = 0;
};

struct Noise {
  double cv = 0;  // coefficient of variation of the multiplicative noise per timed op
  uint64_t seed = 0;
};

// What the fake NCCL says it uses in its INFO lines (`nccl_log:`, nccl_debug.h): the network
// transport, the NICs it lists, whether its network connections use GPUDirect RDMA, and whether
// NVLS multicast came up. Only what it prints; the timing comes from the rest of the model.
enum class NcclTransport { ib, roce, socket };
std::string_view to_string(NcclTransport transport);  // "IB", "RoCE", "Socket"

struct NcclLogModel {
  NcclTransport transport = NcclTransport::ib;
  std::vector<std::string> devices{"mlx5_0"};  // NICs (netdevs for Socket), in NCCL's order
  bool gdr = true;
  // Whether NVLS multicast came up (ncclNvlsInit). Unset: where the model has NVLS or NVLSTree.
  // false also leaves NCCL no NVLS to run, as without multicast support.
  std::optional<bool> nvls;
};

// `collectives.<op>` (an nccl-tests op name): the keys given there replace the top-level keys of
// the same names for that op only; what is left out is the top level's.
struct CollectiveModel {
  std::optional<std::vector<DefaultChoice>> defaults;          // `default`
  std::optional<std::map<std::string, AlgoModel>> algos;       // `algos`
  std::optional<std::map<std::string, AlgoModel>> nccl_model;  // `nccl_model`
  std::optional<int> default_channels;                    // `channels`, with channel_scale
  std::optional<std::map<int, double>> channel_scale;
  std::optional<std::vector<Effect>> effects;
  std::optional<std::vector<Fault>> faults;
};

// `nodes[i]`: for communicators of at least `min_nodes` nodes (as NCCL counts them: hosts, or
// NVLink domains under MNNVL, mnnvl_domains.h), any of the top-level keys default, algos,
// channels, effects and faults, and `collectives` per op. The entry with the largest min_nodes at or below the count applies.
struct NodeCountModel {
  int min_nodes = 1;
  std::optional<int> ranks_per_node;  // set: only communicators with exactly that many on each node
  std::optional<bool> ll128_default;  // `ll128_default`
  CollectiveModel keys;
  std::map<std::string, CollectiveModel> collectives;  // by nccl-tests op name
};

// `init_cost_ms`: wall-clock start-up cost, in milliseconds. `cuda_context`: paid once per process,
// when libfakecuda creates its first context; `nccl_comm`: at every ncclCommInitRank; `nccl_split`:
// at every ncclCommSplit that makes a communicator (unset: `nccl_comm`); `nccl_split_shared`: the
// same where the parent shares its resources, NCCL_COMM_SPLIT_SHARE_RESOURCES=1, so no proxy is
// made (split_share.h; unset: `nccl_split`).
struct InitCost {
  int cuda_context_ms = 0;
  int nccl_comm_ms = 0;
  std::optional<int> nccl_split_ms;
  std::optional<int> nccl_split_shared_ms;
  int split_ms() const { return nccl_split_ms.value_or(nccl_comm_ms); }
  int shared_split_ms() const { return nccl_split_shared_ms.value_or(split_ms()); }
};

// `mnnvl`: the hosts sit in multi-node NVLink domains (GB200/GB300 NVL72 racks), each a fabric
// clique NCCL may count as one node (mnnvl_domains.h). Emulated hosts 0..N-1 are domain 0,
// N..2N-1 domain 1, and so on, N = hosts_per_domain. What NVML reports on every GPU: fabric state
// COMPLETED, a cluster UUID per domain, `health_mask` (NVML's healthy mask 0x1aa unless given),
// and whether IMEX shares fabric memory (`imex: false`: NCCL's MNNVL check fails its init).
struct MnnvlModel {
  int hosts_per_domain = 1;
  std::uint32_t health_mask = 0x1aa;
  bool imex = true;
};

// `paths`: NCCL's path types on a node (src/graph/topo.h; ll128_trust.h names them) as its
// topology search reports them at its defaults: `gpu` between two GPUs (NVL over NVLink or
// NVSwitch, PIX or PXB through PCIe switches, PHB or SYS through the CPU), `nic` from a GPU to the
// NIC its rings use (PIX, PXB, P2C on Grace's C2C, PXN through a peer GPU over NVLink, PHB, SYS).
// They decide where NCCL trusts LL128, and NCCL_P2P_* and NCCL_PXN_DISABLE move them.
struct NodePaths {
  int gpu = 1;  // NVL
  int nic = 4;  // PIX
};

struct FakeModel {
  std::string file;                               // where it was read from, for messages
  std::vector<FakeDevice> devices{FakeDevice{}};  // per local rank (device ordinal), cycled
  int device_count = 8;                           // what cuDeviceGetCount reports
  int nccl_version = kDefaultNcclVersion;         // what ncclGetVersion reports
  std::vector<DefaultChoice> defaults;
  int default_channels = 16;
  std::map<int, double> channel_scale;     // busbw_scale by channel count
  std::map<std::string, AlgoModel> algos;  // by canonical algorithm name: the hardware's truth
  // `nccl_model`: NCCL's own cost model of the same pairs (its init tuning table). Given, NCCL's
  // own pair per size, under lists too, is the cheapest here (lat_us + bytes / algbw), and the
  // cost table a tuner plugin gets holds these times; empty: `defaults` stands for NCCL's choice.
  std::map<std::string, AlgoModel> nccl_model;
  // `ll128_default: false`: NCCL leaves LL128 off on this platform (tuning.cc, protoEnable 2)
  // until an NCCL_PROTO that does not exclude it turns it on.
  bool ll128_default = true;
  NodePaths paths;  // `paths`
  std::vector<Effect> effects;
  std::vector<Fault> faults;
  Noise noise;
  NcclLogModel nccl_log;
  std::map<std::string, CollectiveModel> collectives;  // by nccl-tests op name
  std::vector<NodeCountModel> nodes;                   // by min_nodes, ascending
  InitCost init_cost;                                  // `init_cost_ms`
  std::optional<MnnvlModel> mnnvl;                     // unset: no NVLink fabric (HGX)
  // The node count model_for_nodes resolved this model for (1 for the file as read): what the
  // model executor (tests/support) takes as its communicators' node count.
  int for_nodes = 1;
};

// The model of a communicator of `nodes` nodes with `ranks_per_node` ranks on each (0: uneven or
// unknown): the entry with the largest min_nodes <= nodes among those whose ranks_per_node is
// unset or equal (at equal min_nodes the one with ranks_per_node wins), its keys over the top
// level's, and each collective's entry with `nodes[k].collectives[op]`'s keys over it. The
// result has no `nodes`.
FakeModel model_for_nodes(const FakeModel& model, int nodes, int ranks_per_node = 0);

// The model `op` runs under on such a communicator: each key resolved on its own, the most
// specific first: nodes[k].collectives[op] > collectives[op] > nodes[k] > the top level. The
// result has no `collectives` or `nodes`.
// `nodes` 0: the count `model` was resolved for (for_nodes).
FakeModel model_for_collective(const FakeModel& model, std::string_view op, int nodes = 0,
                               int ranks_per_node = 0);

// NCCL's algorithm and protocol names ("Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS",
// "NVLSTree", "PAT"; "LL", "LL128", "Simple"), matched case-insensitively.
std::optional<std::string> canonical_algo(std::string_view name);
std::optional<std::string> canonical_proto(std::string_view name);

// Parses model text; `file` names it in errors ("<file>: unknown key 'algos.Ring.LL.latency'").
Result<FakeModel> parse_fake_model(const std::string& text, const std::string& file);
// Reads and parses the file at `path`.
Result<FakeModel> load_fake_model(const std::string& path);

// The variable that names the model of the NCCL library loaded from `library_path`: a copy of
// libfakenccl.so named libfakenccl-<tag>.so (any directory, any suffix after ".so") reads
// NCCLTUNE_FAKE_MODEL_<tag>, so one test loads two NCCLs of different versions and models. ""
// for any other name, and for a tag that is empty or not letters, digits and '_'.
std::string tagged_model_variable(std::string_view library_path);

}  // namespace nccltune::fake
