// The pipe protocol between a trial's parent (one per MPI rank) and its worker process, in JSON
// lines. The parent writes commands to the worker's stdin; the worker writes events to fd 3, so
// NCCL's own output on stdout/stderr (NCCL_DEBUG=INFO) never mixes into the protocol.
//
//   parent -> worker  {"cmd":"start", ...WorkerConfig}
//   worker -> parent  {"event":"loaded","nccl_version":22809,"cuda_driver":13000,"device":{...}}
//   worker -> parent  {"event":"unique_id","id":"<256 hex digits>"}        (rank 0 only)
//   parent -> worker  {"cmd":"init","id":"<hex>"}                           (every rank)
//   worker -> parent  {"event":"ready"}
//   worker -> parent
//   {"event":"size","op":"all_reduce","bytes":..,"count":..,"oop_us":..,"ip_us":..,"oop_wrong":..,"ip_wrong":..}
//   (pair mode: "pair":<index into the config's pairs>,"unavailable":bool on each size event;
//    service counting: "served":n,"declined":n,"declined_why":"..." on each size event;
//    shapes: "comm":"rail"|"node" on a size event of a split communicator, none for the world)
//   worker -> parent  {"event":"done","communicators":n}   (n: the world and its splits)
//   worker -> parent  {"event":"error","stage":"load|init|run","message":"..."}
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/result.h"
#include "collectives/size_sweep.h"

namespace nccltune {

inline constexpr int kWorkerEventFd = 3;

// Pair mode: one algorithm/protocol pair the worker has nccltune's tuner plugin force, by NCCL's
// names and its cost table's row and column (collectives/tuner_control.h); a negative row or
// column forces nothing, and that sweep runs NCCL's own choice.
struct ForcedPair {
  std::string algo, proto;
  int algorithm = 0, protocol = 0;
};

struct WorkerConfig {
  int rank = 0;
  int nranks = 1;
  int device = 0;  // node-local rank
  std::string cuda_lib = "libcuda.so.1";
  std::string nccl_lib = "libnccl.so.2";
  // The collectives the worker sweeps, one after another on one communicator (nccl-tests names).
  std::vector<std::string> collectives{"all_reduce"};
  SweepOptions sweep;
  // Pair mode, when not empty: every collective's sweep once per pair, in this order, on one
  // communicator, the pair forced through the control block of `tuner_plugin` (the path that
  // NCCL_TUNER_PLUGIN names in the worker's environment).
  std::vector<ForcedPair> pairs;
  std::string tuner_plugin;
  // Service counting: each size event says how many of its collective calls the tuner plugin at
  // `tuner_plugin` served from its profile and how many it declined, and why
  // (collectives/tuner_control.h). For a trial that confirms what the plugin delivers.
  bool count_service = false;
  // Shapes: the communicators each collective is swept on, in this order ("world", "rail",
  // "node"). A rail is split from the world with color = local rank (`device`) and key = `node`
  // (rank `node` of `nodes`); a node with color = `node` and key = local rank (rank `device` of
  // `local_ranks`). Rail and node need every node to hold `local_ranks` ranks: nranks ==
  // nodes * local_ranks. Each split is made once, after the world's init, before any sweep.
  std::vector<std::string> comms{"world"};
  int node = 0;         // this rank's node index among the job's nodes
  int nodes = 1;        // the job's nodes
  int local_ranks = 1;  // ranks on each node
};

// The communicator shapes a worker knows: "world", "rail", "node".
bool known_comm(const std::string& name);
// Rank and size of this rank's communicator `comm` under `config`'s layout.
std::pair<int, int> comm_rank_and_size(const WorkerConfig& config, const std::string& comm);

// What the tuner plugin did with the calls of one size (service counting).
struct PluginService {
  std::uint64_t served = 0, declined = 0;
  std::string declined_why;  // the plugin's latest reason, when declined > 0
  bool operator==(const PluginService&) const = default;
};

struct DeviceDescription {
  std::string name;
  std::string pci;
  int sm = 0;  // compute capability, major * 10 + minor
};

struct WorkerEvent {
  enum class Kind { loaded, unique_id, ready, size, done, error };
  Kind kind = Kind::error;
  // loaded
  int nccl_version = 0;
  int cuda_driver = 0;
  DeviceDescription device;
  // unique_id
  std::string id_hex;
  // size
  std::string op;  // the collective measured
  SizeMeasurement size;
  int pair = -1;                         // pair mode: the index of the pair it ran under
  bool unavailable = false;              // pair mode: the pair did not run at this size (NCCL's table did not
                                         // offer it, or NCCL never asked the plugin)
  std::optional<PluginService> service;  // service counting
  std::string comm = "world";            // the communicator it ran on
  // done: communicators the worker made (the world and its splits; 0 from an older worker)
  int communicators = 0;
  // error
  std::string stage;
  std::string message;
};

nlohmann::json worker_config_to_json(const WorkerConfig& config);
Result<WorkerConfig> worker_config_from_json(const nlohmann::json& json);

std::string encode_event(const WorkerEvent& event);  // one line, no newline
Result<WorkerEvent> decode_event(const std::string& line);

std::string bytes_to_hex(const void* data, std::size_t size);
bool hex_to_bytes(const std::string& hex, void* out, std::size_t size);

}  // namespace nccltune
