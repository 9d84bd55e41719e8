// What the fake NCCL prints under NCCL_DEBUG, in NCCL 2.28's line formats (src/debug.cc,
// src/init.cc, src/transport/net*.cc, src/transport/nvls.cc, src/enqueue.cc), so that what
// reads real NCCL logs (`nccltune explain`, tune's record of what NCCL did) can be tested on the
// fake stack. What the lines claim comes from the model's `nccl_log:` section; the choices in the
// TUNING lines are the fake's own (comm_model.h).
//
// NCCL_DEBUG: INFO or TRACE prints INFO lines; WARN (or more) prints WARN lines, of which the
// fake has few: a tuner plugin's own, and one when the plugin's init fails (tuner_plugin_host.h).
// NCCL_DEBUG_SUBSYS: a comma list of NCCL's subsystems (INIT, NET, ENV, GRAPH, TUNING, ...; ALL),
// "^" first to invert it; NCCL's default is INIT,BOOTSTRAP,ENV.
// NCCL_DEBUG_FILE: the file the lines go to instead of stdout, "%h" the host name and "%p" the
// process id in its name, as NCCL expands them.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "comm_model.h"
#include "fake_model.h"
#include "mnnvl_domains.h"
#include "nccl_env.h"

namespace nccltune::fake {

// NCCL's subsystem bits (src/include/nccl_common.h, ncclDebugLogSubSys).
enum DebugSubsystem : std::uint32_t {
  kSubsysInit = 0x1,
  kSubsysColl = 0x2,
  kSubsysP2p = 0x4,
  kSubsysShm = 0x8,
  kSubsysNet = 0x10,
  kSubsysGraph = 0x20,
  kSubsysTuning = 0x40,
  kSubsysEnv = 0x80,
  kSubsysAlloc = 0x100,
  kSubsysCall = 0x200,
  kSubsysProxy = 0x400,
  kSubsysNvls = 0x800,
  kSubsysBootstrap = 0x1000,
  kSubsysReg = 0x2000,
  kSubsysProfile = 0x4000,
  kSubsysRas = 0x8000,
  kSubsysAll = 0xffffffff,
};

struct DebugSettings {
  bool info = false;                                                       // NCCL_DEBUG=INFO or TRACE
  bool warn = false;                                                       // ... or WARN
  std::uint32_t subsystems = kSubsysInit | kSubsysBootstrap | kSubsysEnv;  // NCCL_DEBUG_SUBSYS
  std::string file;  // NCCL_DEBUG_FILE as set, "" for stdout
};

DebugSettings debug_settings(const NcclEnv& env);

// NCCL_DEBUG_FILE's name for this process: "%h" the host, "%p" the pid, "%%" a '%'; any other
// "%x" is kept as written.
std::string debug_file_name(std::string_view pattern, std::string_view host, long pid);

// The host this process reports, to the first '.' as NCCL prints it. NCCLTUNE_EMULATE_NODES=N
// (as tune reads it) gives each process of a job of `world_size` ranks the host
// "<host>-node<k>", k = world_rank / (world_size / N): the launcher's consecutive equal blocks, so
// a worker started by rank r of mpirun or srun sits on r's node. Anything else, or a count that
// does not divide world_size, is the host itself.
std::string process_host(std::string_view hostname, const char* emulate_nodes, int world_rank,
                         int world_size);
// The number of hosts NCCLTUNE_EMULATE_NODES makes of a job of `world_size` ranks; 1 where it
// makes none (process_host keeps the host).
int emulated_host_count(const char* emulate_nodes, int world_size);

// Where one rank of a communicator sits, from every rank's host as NCCL counts nodes (by host,
// never by rank number): the number of nodes, this rank's node (in order of first appearance),
// and its place among the ranks of its host. `device`: the CUDA device NCCL names in its lines,
// the rank's place among the ranks of its host.
struct RankPlace {
  std::string host;
  int nodes = 1;
  int node = 0;
  int local_ranks = 1;
  int local_rank = 0;
  int device = 0;
};
RankPlace place_in_comm(const std::vector<std::string>& host_of_rank, int rank);
// The same with NCCL's nodes given by `node_of_rank` (mnnvl_domains.h: hosts, or NVLink domains
// under MNNVL): nodes, node and local ranks from those, host and device from the host.
RankPlace place_in_comm(const std::vector<std::string>& host_of_rank, const std::vector<std::string>& node_of_rank,
                        int rank);

// Each rank's emulated node index, the number the model's faults name in `node` and `nodes`:
// k of the "-node<k>" suffix NCCLTUNE_EMULATE_NODES gave its host (process_host; `emulated`:
// it did so in this process, so that a real host named "gpu-node7" is not read as node 7), else
// its host's place among the communicator's hosts in order of first appearance (place_in_comm's
// node).
std::vector<int> emulated_node_indexes(const std::vector<std::string>& host_of_rank, bool emulated);
// `rank`'s emulated node, the distinct ones of the communicator, and its node count (distinct hosts).
CommNodes comm_nodes(const std::vector<std::string>& host_of_rank, int rank, bool emulated);
// The same with NCCL's nodes given by `node_of_rank`: the emulated nodes stay the hosts' indexes
// (the faults name hosts), the count and the local ranks are NCCL's.
CommNodes comm_nodes(const std::vector<std::string>& host_of_rank, const std::vector<std::string>& node_of_rank,
                     int rank, bool emulated);

// One INFO line's message and the subsystems it belongs to (kSubsysAll: printed whatever the
// mask, as NCCL prints its version).
struct LogLine {
  std::uint32_t subsystems = kSubsysInit;
  std::string message;
};

// The lines a rank prints from ncclCommInitRank: version (rank 0), "set by environment" for each
// NCCL_* variable, the network and its devices, on a fabric its state and, with MNNVL, its
// clique, the communicator, NVLS, the connections to the next node (network ones with /GDRDMA
// when the model's gdr holds) and the channel counts.
std::vector<LogLine> init_lines(const FakeModel& model, const NcclEnv& env, const CommModel& comm,
                                const RankPlace& place, const MnnvlPlace& mnnvl = {});

// One collective as NCCL's init tuning table shows it: NCCL's name of it, the op's model and the
// communicator's behaviour for it.
struct TuningTableRow {
  std::string_view function;  // "AllReduce"
  std::string_view op;        // "all_reduce"
  const FakeModel* model = nullptr;
  const CommModel* comm = nullptr;
};

// The table NCCL's rank 0 prints at init under TUNING (ncclTopoTuneModel, src/graph/tuning.cc,
// 2.28.9): blocks of three algorithms, nine "latency/bandwidth" cells per row, one row per
// function in `rows` (NCCL's order: Broadcast, Reduce, AllGather, ReduceScatter, AllReduce).
// A pair the model lacks is 0.0/0.0; one NCCL_ALGO/NCCL_PROTO or `requires` leaves out keeps its
// latency with bandwidth 0.0, as NCCL zeroes the bandwidth of what the filters exclude.
std::vector<std::string> tuning_table_lines(const std::vector<TuningTableRow>& rows);

// "AllReduce: 1048576 Bytes -> Algo RING proto LL128 channel{Lo..Hi}={0..15}", the line NCCL's
// rank 0 prints per collective under the TUNING subsystem. `function` is NCCL's name of the
// collective ("AllReduce").
std::string tuning_message(std::string_view function, std::uint64_t bytes, const AlgoProto& pair,
                           int channels);

// The open log of one communicator: "host:pid:tid [dev] NCCL INFO message" lines that pass the
// settings, to NCCL_DEBUG_FILE or stdout.
class DebugLog {
 public:
  DebugLog() = default;
  DebugLog(const DebugSettings& settings, std::string host, int device);
  DebugLog(const DebugLog&) = delete;
  DebugLog& operator=(const DebugLog&) = delete;
  DebugLog(DebugLog&& other) noexcept;
  DebugLog& operator=(DebugLog&& other) noexcept;
  ~DebugLog();

  bool wants(std::uint32_t subsystems) const;
  void info(std::uint32_t subsystems, std::string_view message);
  // "host:pid:tid [dev] NCCL WARN message": under NCCL_DEBUG=WARN, INFO or TRACE, whatever
  // NCCL_DEBUG_SUBSYS says, as NCCL prints its warnings.
  void warn(std::string_view message);

 private:
  std::uint32_t mask_ = 0;  // 0: INFO off
  bool warn_ = false;
  std::string host_;
  int device_ = 0;
  std::FILE* out_ = nullptr;  // stdout, or NCCL_DEBUG_FILE's file, open for the process's life
};

}  // namespace nccltune::fake
