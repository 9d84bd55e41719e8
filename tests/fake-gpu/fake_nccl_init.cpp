// libfakenccl.so: the NCCL functions nccltune uses, for machines without a GPU.
// Ranks in different processes really exchange and reduce data (SharedComm, keyed by the bytes
// of the ncclUniqueId), so broken bootstrap plumbing fails or times out and wrong data shows.
// Each op advances its stream's simulated clock in libfakecuda.so by the model's time.
// The model (NCCLTUNE_FAKE_MODEL, or NCCLTUNE_FAKE_MODEL_<tag> for a copy named
// libfakenccl-<tag>.so) and the NCCL_* environment are read once, at
// ncclCommInitRank; faults from the model fire there (init_error) or at every op (hang, crash,
// corrupt, slow_rank, slow_node, slow_link). Problems are one line on stderr, starting "fakenccl: ".
// NCCLTUNE_FAKE_TIMEOUT_S (default 60) bounds every wait for a peer. Under NCCL_DEBUG=INFO it
// prints NCCL 2.28's INFO lines (nccl_debug.h). NCCL_TUNER_PLUGIN loads a tuner plugin that
// chooses each collective's pair from a cost table, as in NCCL 2.28.9 (tuner_plugin_host.h).
// ncclCommSplit makes communicators of their own from a parent's ranks, as NCCL's (FIDELITY.md F21).
#include <dlfcn.h>
#include <sys/random.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <tuple>
#include <string>
#include <thread>
#include <vector>

#include "collectives/nccl_declarations.h"
#include "comm_model.h"
#include "element_ops.h"
#include "env_plugin_host.h"
#include "fake_model.h"
#include "fakecuda_hooks.h"
#include "nccl_debug.h"
#include "nccl_env.h"
#include "shared_comm.h"
#include "tuner_plugin_host.h"

#define FAKE_EXPORT extern "C" __attribute__((visibility("default")))

extern char** environ;

using namespace nccltune::nccl_abi;
using nccltune::Result;
using nccltune::Status;
using nccltune::fake::CommModel;
using nccltune::fake::DebugLog;
using nccltune::fake::FakeModel;
using nccltune::fake::FaultKind;
using nccltune::fake::NoiseSource;
using nccltune::fake::SharedComm;
using nccltune::fake::Transfer;
using nccltune::fake::TunerPluginHost;

namespace {

constexpr double kDefaultTimeoutS = 60;

void say(const std::string& line) {
  std::fprintf(stderr, "fakenccl: %s\n", line.c_str());
}

// libfakecuda.so's extra exports (fakecuda_hooks.h).
struct FakeCudaHooks {
  fakecuda_advance_stream_fn advance_stream = nullptr;
  fakecuda_current_device_fn current_device = nullptr;
  fakecuda_is_device_range_fn is_device_range = nullptr;
};

// Finds the hooks in the libfakecuda.so this process loaded, by soname whatever its path, or in
// the global scope.
std::optional<FakeCudaHooks> find_fakecuda() {
  void* loaded = dlopen(kFakeCudaSoname, RTLD_NOW | RTLD_NOLOAD);
  auto find = [&](const char* name) {
    void* address = loaded ? dlsym(loaded, name) : nullptr;
    return address ? address : dlsym(RTLD_DEFAULT, name);
  };
  FakeCudaHooks hooks;
  hooks.advance_stream = reinterpret_cast<fakecuda_advance_stream_fn>(find("fakecuda_advance_stream"));
  hooks.current_device = reinterpret_cast<fakecuda_current_device_fn>(find("fakecuda_current_device"));
  hooks.is_device_range = reinterpret_cast<fakecuda_is_device_range_fn>(find("fakecuda_is_device_range"));
  if (loaded) dlclose(loaded);  // the product's own handle keeps it loaded
  if (!hooks.advance_stream || !hooks.current_device || !hooks.is_device_range) return std::nullopt;
  return hooks;
}

double timeout_seconds() {
  const char* text = std::getenv("NCCLTUNE_FAKE_TIMEOUT_S");
  if (text == nullptr) return kDefaultTimeoutS;
  char* end = nullptr;
  const double value = std::strtod(text, &end);
  return end != text && *end == '\0' && value > 0 ? value : kDefaultTimeoutS;
}

}  // namespace

namespace {

enum class Collective { all_reduce, all_gather, reduce_scatter, broadcast, reduce };

// One checked collective call: what it moves, and the size NCCL plans it by (its nBytes,
// ncclFuncMaxSendRecvCount: all_gather and reduce_scatter count every rank's part).
struct CollectiveCall {
  Collective kind = Collective::all_reduce;
  const void* sendbuff = nullptr;
  void* recvbuff = nullptr;
  std::size_t count = 0;
  ncclDataType_t type = ncclFloat32;
  ncclRedOp_t op = ncclSum;
  int root = 0;
  cudaStream_t stream = nullptr;
  std::size_t nbytes = 0;
  std::size_t out_count = 0;  // elements this rank receives
};

}  // namespace

// The model one collective runs under and how the communicator behaves for it (the model's
// `collectives` entry for that op).
struct OpModel {
  FakeModel model;
  CommModel behaviour;
};

// What a communicator's init takes from its process, as ncclCommInitRank read it. A split
// inherits it from its parent: NCCL reads its environment once per process (F19, N9), and the
// host and device are the process's.
struct ProcessSetup {
  FakeModel model;  // NCCLTUNE_FAKE_MODEL as read, before model_for_nodes
  nccltune::fake::NcclEnv env;
  std::string host;       // this process's host (process_host)
  bool emulated = false;  // the host is NCCLTUNE_EMULATE_NODES's "-node<k>"
  int device = 0;         // the current device at ncclCommInitRank
  FakeCudaHooks hooks;
};

struct ncclComm {
  ncclComm(FakeModel fake_model, CommModel comm_model, std::map<std::string, OpModel> op_models,
           SharedComm shared_comm, ProcessSetup setup, const ncclUniqueId& comm_id, DebugLog debug)
      : model(std::move(fake_model)),
        behaviour(std::move(comm_model)),
        ops(std::move(op_models)),
        noise(model.noise, behaviour.rank),
        shared(std::move(shared_comm)),
        cuda(setup.hooks),
        process(std::move(setup)),
        id(comm_id),
        log(std::move(debug)) {}

  FakeModel model;
  CommModel behaviour;
  std::map<std::string, OpModel> ops;  // by op name
  NoiseSource noise;
  SharedComm shared;
  FakeCudaHooks cuda;
  ProcessSetup process;  // for the communicators split off this one
  ncclUniqueId id;       // its segment's id; a split derives its children's from it
  int split_count = 0;   // ncclCommSplit calls so far (NCCL's comm->splitCount)
  DebugLog log;
  // NCCL_TUNER_PLUGIN's plugin, after `log` (its lines go there): destroyed first, finalize included.
  std::unique_ptr<TunerPluginHost> tuner;
  ncclResult_t async_error = ncclSuccess;
  std::vector<Transfer> pending;  // grouped send/recv, run at ncclGroupEnd
  cudaStream_t pending_stream = nullptr;
  std::vector<CollectiveCall> grouped;  // collectives of the open group, planned at ncclGroupEnd
};

namespace {

// initial-exec, as fake_cuda.cpp's current_context (LeakSanitizer and dynamic TLS).
__attribute__((tls_model("initial-exec"))) thread_local int group_depth = 0;
__attribute__((tls_model("initial-exec"))) thread_local std::vector<ncclComm*>
    group_comms;  // with pending collectives or send/recv

const char* function_name(Collective kind) {
  switch (kind) {
    case Collective::all_reduce: return "ncclAllReduce";
    case Collective::all_gather: return "ncclAllGather";
    case Collective::reduce_scatter: return "ncclReduceScatter";
    case Collective::broadcast: return "ncclBroadcast";
    case Collective::reduce: return "ncclReduce";
  }
  return "?";
}

// NCCL's own name of the collective (ncclFuncToString), as its TUNING lines print it.
const char* nccl_func_name(Collective kind) {
  return function_name(kind) + 4;  // "ncclAllReduce" -> "AllReduce"
}

// NCCL's ncclFunc_t of the collective, as getCollInfo receives it.
int nccl_func(Collective kind) {
  switch (kind) {
    case Collective::all_reduce: return nccltune::fake::tuner_abi::kFuncAllReduce;
    case Collective::all_gather: return nccltune::fake::tuner_abi::kFuncAllGather;
    case Collective::reduce_scatter: return nccltune::fake::tuner_abi::kFuncReduceScatter;
    case Collective::broadcast: return nccltune::fake::tuner_abi::kFuncBroadcast;
    case Collective::reduce: return nccltune::fake::tuner_abi::kFuncReduce;
  }
  return 0;
}

const char* op_name(Collective kind) {
  switch (kind) {
    case Collective::all_reduce: return "all_reduce";
    case Collective::all_gather: return "all_gather";
    case Collective::reduce_scatter: return "reduce_scatter";
    case Collective::broadcast: return "broadcast";
    case Collective::reduce: return "reduce";
  }
  return "?";
}

// What `op` runs under: its own entry's model and behaviour, else the communicator's.
struct OpView {
  const FakeModel& model;
  const CommModel& behaviour;
};
OpView op_view(const ncclComm& comm, std::string_view op) {
  const auto it = comm.ops.find(std::string(op));
  if (it == comm.ops.end()) return {comm.model, comm.behaviour};
  return {it->second.model, it->second.behaviour};
}

std::string prefix(const ncclComm& comm) {
  return "rank " + std::to_string(comm.behaviour.rank) + ": ";
}

// hang and crash fire when an op starts.
void fire_op_faults(const ncclComm& comm, const char* function, std::string_view op) {
  const CommModel& behaviour = op_view(comm, op).behaviour;
  if (behaviour.has(FaultKind::crash)) {
    say(prefix(comm) + function + ": crash fault: aborting the process");
    std::abort();
  }
  if (behaviour.has(FaultKind::hang)) {
    say(prefix(comm) + function + ": hang fault: never returning");
    for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
  }
}

// The communicator's first failure sticks, as NCCL's asynchronous error does.
ncclResult_t fail(ncclComm& comm, const std::string& what, const std::string& error) {
  say(prefix(comm) + what + ": " + error);
  comm.shared.mark_failed();
  comm.async_error = ncclRemoteError;
  return ncclRemoteError;
}

ncclResult_t invalid(const ncclComm& comm, const std::string& what, const std::string& error) {
  say(prefix(comm) + what + ": " + error);
  return ncclInvalidArgument;
}

bool device_range(const ncclComm& comm, const void* pointer, std::size_t bytes) {
  return bytes == 0 || comm.cuda.is_device_range(pointer, bytes) == 1;
}

// One op's time on the stream: the `pair` that runs, whoever chose it (NCCL's cost model, or a
// tuner plugin), with the comm's slow factors and noise.
// `channels`: a tuner plugin's nChannels (0: NCCL's own count for the pair).
void advance_clock(ncclComm& comm, cudaStream_t stream, const char* op, double bytes,
                   const nccltune::fake::AlgoProto& pair, int channels = 0) {
  const OpView view = op_view(comm, op);
  const double us = nccltune::fake::pair_op_time_us(view.model, view.behaviour, pair, op, bytes, channels) *
                    comm.noise.next_factor();
  comm.cuda.advance_stream(stream, us);
}

// The pair a collective runs: NCCL's own choice, or with a tuner plugin, as NCCL 2.28.9's
// getAlgoInfo (src/enqueue.cc): a cost table of every pair the communicator allows
// (NCCL_ALGO_PROTO_IGNORE elsewhere) goes to getCollInfo, and the cell of lowest cost runs. With
// `nccl_model` the cells are NCCL's estimates (updateCollCostTable); an older model's cells are
// its true times with its own choice entered at the lowest cost, so that it wins ties. Either
// way a plugin that changes nothing changes nothing. `channels`: the plugin's nChannels, 0 if unset.
Result<nccltune::fake::AlgoProto> choose_pair(ncclComm& comm, Collective kind, const CommModel& behaviour,
                                              std::size_t nbytes, int& channels) {
  const OpView view = op_view(comm, op_name(kind));
  const double bytes = static_cast<double>(nbytes);
  nccltune::fake::AlgoProto own = nccltune::fake::choose_algo_proto(view.model, behaviour, op_name(kind), bytes);
  channels = 0;
  if (!comm.tuner) return own;
  nccltune::fake::CostTable table;
  for (auto& row : table) row.fill(nccltune::fake::tuner_abi::kAlgoProtoIgnore);
  const bool nccl_costs = !view.model.nccl_model.empty();
  float lowest = -1;
  for (const nccltune::fake::AlgoProto& pair : behaviour.allowed) {
    const auto cell = nccltune::fake::cost_table_cell(pair);
    if (!cell) continue;
    std::optional<double> us;
    if (nccl_costs) {
      if (const auto cost = nccltune::fake::nccl_pair_cost(view.model, behaviour, pair, op_name(kind)))
        us = nccltune::fake::cost_time_us(*cost, bytes);
    } else {
      us = nccltune::fake::pair_time_us(view.model, behaviour, pair, op_name(kind), bytes);
    }
    if (!us) continue;
    table[cell->first][cell->second] = static_cast<float>(*us);
    if (lowest < 0 || *us < lowest) lowest = static_cast<float>(*us);
  }
  if (const auto cell = nccltune::fake::cost_table_cell(own); cell && !nccl_costs)
    table[cell->first][cell->second] = lowest;
  const ncclResult_t asked = comm.tuner->get_coll_info(nccl_func(kind), nbytes, table, channels);
  // NCCLCHECK around getCollInfo in getAlgoInfo: a failure fails the collective.
  if (asked != ncclSuccess)
    return nccltune::Error{"tuner plugin '" + comm.tuner->name() + "': getCollInfo returned " +
                           std::to_string(asked)};
  const std::optional<nccltune::fake::AlgoProto> chosen = nccltune::fake::lowest_cost_pair(table, own);
  return chosen ? *chosen : own;
}

// dst = the `op` combination of every rank's slot, `offset` bytes in, `count` elements.
void combine_slots(const ncclComm& comm, std::byte* destination, std::size_t offset, std::size_t count,
                   ncclDataType_t type, ncclRedOp_t op) {
  const std::size_t size = nccltune::fake::type_size(type);
  std::memcpy(destination, comm.shared.slot(0) + offset, count * size);
  for (int q = 1; q < comm.shared.nranks(); ++q)
    nccltune::fake::reduce_into(type, op, destination, comm.shared.slot(q) + offset, count);
  if (op == ncclAvg) nccltune::fake::divide_elements(type, destination, count, comm.shared.nranks());
}

// Below this chunk size every rank reduces the whole chunk: two more barriers cost more than
// the reduction they share out.
constexpr std::size_t kSharedReductionBytes = 256u << 10;

// all_reduce of one chunk that every rank has copied into its slot, as a ring's reduce-scatter
// then all-gather divide it: each rank reduces its 1/n share of the chunk (in the same rank
// order, so every rank ends with the same bits), puts it back in its slot, and copies the others'
// shares. Every rank would otherwise reduce all of it: n times the work, all on the host.
Status all_reduce_chunk(ncclComm& comm, std::byte* destination, std::size_t length, ncclDataType_t type,
                        ncclRedOp_t op) {
  SharedComm& shared = comm.shared;
  const std::size_t size = nccltune::fake::type_size(type);
  const auto n = static_cast<std::size_t>(shared.nranks());
  if (n < 2 || length * size < kSharedReductionBytes) {
    combine_slots(comm, destination, 0, length, type, op);
    return nccltune::Ok{};
  }
  const auto share_first = [&](std::size_t q) { return length * q / n; };
  const auto rank = static_cast<std::size_t>(shared.rank());
  const std::size_t low = share_first(rank), high = share_first(rank + 1);
  combine_slots(comm, destination + low * size, low * size, high - low, type, op);
  if (Status read = shared.barrier(); !read) return read;  // every rank is done with every slot
  std::memcpy(shared.slot(shared.rank()) + low * size, destination + low * size, (high - low) * size);
  if (Status shared_out = shared.barrier(); !shared_out) return shared_out;
  for (std::size_t q = 0; q < n; ++q)
    if (q != rank)
      std::memcpy(destination + share_first(q) * size, shared.slot(static_cast<int>(q)) + share_first(q) * size,
                  (share_first(q + 1) - share_first(q)) * size);
  return nccltune::Ok{};
}

// Moves one collective's data through the slots, a slot-sized chunk of the input at a time:
// every rank (the root alone for broadcast) copies its chunk in, then each takes what it needs.
Status move_collective(ncclComm& comm, Collective kind, const std::byte* send, std::byte* recv,
                       std::size_t count, ncclDataType_t type, ncclRedOp_t op, int root) {
  SharedComm& shared = comm.shared;
  const int rank = shared.rank();
  const auto n = static_cast<std::size_t>(shared.nranks());
  const std::size_t size = nccltune::fake::type_size(type);
  const std::size_t input = kind == Collective::reduce_scatter ? count * n : count;
  const std::size_t chunk = shared.slot_bytes() / size;
  const std::size_t own_first = static_cast<std::size_t>(rank) * count;  // reduce_scatter
  for (std::size_t first = 0; first < input; first += chunk) {
    const std::size_t length = std::min(chunk, input - first);
    if (kind != Collective::broadcast || rank == root)
      std::memcpy(shared.slot(rank), send + first * size, length * size);
    if (Status arrived = shared.barrier(); !arrived) return arrived;
    switch (kind) {
      case Collective::all_reduce:
        if (Status reduced = all_reduce_chunk(comm, recv + first * size, length, type, op); !reduced) return reduced;
        break;
      case Collective::reduce:
        if (rank == root) combine_slots(comm, recv + first * size, 0, length, type, op);
        break;
      case Collective::broadcast: std::memcpy(recv + first * size, shared.slot(root), length * size); break;
      case Collective::all_gather:
        for (std::size_t q = 0; q < n; ++q)
          std::memcpy(recv + (q * count + first) * size, shared.slot(static_cast<int>(q)), length * size);
        break;
      case Collective::reduce_scatter: {
        const std::size_t low = std::max(first, own_first);
        const std::size_t high = std::min(first + length, own_first + count);
        if (low < high)
          combine_slots(comm, recv + (low - own_first) * size, (low - first) * size, high - low, type, op);
        break;
      }
    }
    if (Status done = shared.barrier(); !done) return done;
  }
  return nccltune::Ok{};
}

// Elements this rank receives, and whether it receives at all.
std::size_t output_count(Collective kind, std::size_t count, int nranks, int rank, int root) {
  if (kind == Collective::all_gather) return count * static_cast<std::size_t>(nranks);
  if (kind == Collective::reduce && rank != root) return 0;
  return count;
}

// The communicator as one call sees it: NVLS and NVLSTree left out for reductions NCCL has no
// NVLS kernel for (getAlgoInfo's nvlsSupport, src/enqueue.cc), PAT for ncclAvg's ReduceScatter
// (updateCollCostTable); nullopt when the reduction leaves out nothing (the common case: no copy).
std::optional<CommModel> for_reduction(const CommModel& behaviour, Collective kind, ncclRedOp_t op,
                                       ncclDataType_t type) {
  const bool nvls = nccltune::fake::nvls_reduces(op_name(kind), op, type);
  const bool pat = nccltune::fake::pat_reduces(op_name(kind), op);
  if (nvls && pat) return std::nullopt;
  CommModel call = behaviour;
  std::erase_if(call.allowed, [&](const nccltune::fake::AlgoProto& pair) {
    return (!nvls && (pair.algo == "NVLS" || pair.algo == "NVLSTree")) || (!pat && pair.algo == "PAT");
  });
  if (call.allowed.empty() && !behaviour.allowed.empty())
    call.no_pair = "no kernel of its pairs for reduction op " + std::to_string(op) + " on type " + std::to_string(type);
  return call;
}

// Runs one call with `pair` (NCCL's choice for its batch, or a tuner plugin's): moves the data,
// corrupts it where the pair does, prints the TUNING line and advances the stream by the pair's time.
ncclResult_t execute_collective(ncclComm& comm, const CollectiveCall& call, const CommModel& behaviour,
                                const nccltune::fake::AlgoProto& pair, int plugin_channels) {
  const char* function = function_name(call.kind);
  Status moved = move_collective(comm, call.kind, static_cast<const std::byte*>(call.sendbuff),
                                 static_cast<std::byte*>(call.recvbuff), call.count, call.type, call.op, call.root);
  if (!moved) return fail(comm, function, moved.error());
  if (nccltune::fake::corrupts(behaviour, pair))
    nccltune::fake::corrupt_elements(call.recvbuff, call.out_count, nccltune::fake::type_size(call.type));
  // The plugin's nChannels replaces NCCL's count for the call (getAlgoInfo, src/enqueue.cc), and
  // the planner keeps it within the pair's channels (nMaxChannels per kind): time and line follow.
  const int own_channels = behaviour.channels_for(pair);
  const int channels = plugin_channels > 0 ? std::min(plugin_channels, own_channels) : own_channels;
  if (comm.behaviour.rank == 0 && comm.log.wants(nccltune::fake::kSubsysTuning))
    comm.log.info(nccltune::fake::kSubsysTuning,
                  nccltune::fake::tuning_message(nccl_func_name(call.kind), call.nbytes, pair, channels));
  advance_clock(comm, call.stream, op_name(call.kind), static_cast<double>(call.nbytes), pair, channels);
  return ncclSuccess;
}

// The communicator as `call` sees it, or its calls' error when NCCL has no pair for it:
// topoGetAlgoInfo (src/enqueue.cc, 2.28.9) fails each call, with ncclInvalidUsage when NCCL_ALGO
// or NCCL_PROTO left it none (2.24+); the communicator and its other collectives go on.
// `narrowed` holds the copy for a reduction that leaves pairs out; nullptr when no pair is left.
const CommModel* call_behaviour(const ncclComm& comm, const CollectiveCall& call,
                                std::optional<CommModel>& narrowed, ncclResult_t& error) {
  const CommModel& shared = op_view(comm, op_name(call.kind)).behaviour;
  narrowed = for_reduction(shared, call.kind, call.op, call.type);
  const CommModel& behaviour = narrowed ? *narrowed : shared;
  if (!behaviour.allowed.empty()) return &behaviour;
  say(prefix(comm) + function_name(call.kind) + ": Error : no algorithm/protocol available for function " +
      nccl_func_name(call.kind) + " (" + behaviour.no_pair + ")");
  error = behaviour.no_pair_by_list ? ncclInvalidUsage : ncclInternalError;
  return nullptr;
}

ncclResult_t run_collective(ncclComm* comm, Collective kind, const void* sendbuff, void* recvbuff,
                            std::size_t count, ncclDataType_t type, ncclRedOp_t op, int root,
                            cudaStream_t stream) {
  if (comm == nullptr) return ncclInvalidArgument;
  const char* function = function_name(kind);
  const std::size_t size = nccltune::fake::type_size(type);
  if (size == 0) return invalid(*comm, function, "unsupported data type " + std::to_string(type));
  if (!nccltune::fake::supported_op(op))
    return invalid(*comm, function, "unsupported reduction op " + std::to_string(op));
  const int rank = comm->behaviour.rank;
  const int nranks = comm->behaviour.nranks;
  if ((kind == Collective::broadcast || kind == Collective::reduce) && (root < 0 || root >= nranks))
    return invalid(*comm, function, "root " + std::to_string(root) + " is not a rank");
  const std::size_t in_count =
      kind == Collective::reduce_scatter ? count * static_cast<std::size_t>(nranks) : count;
  const bool sends = kind != Collective::broadcast || rank == root;
  const std::size_t out_count = output_count(kind, count, nranks, rank, root);
  if (sends && !device_range(*comm, sendbuff, in_count * size))
    return invalid(*comm, function,
                   "sendbuff is not " + std::to_string(in_count * size) + " bytes of device memory");
  if (!device_range(*comm, recvbuff, out_count * size))
    return invalid(*comm, function,
                   "recvbuff is not " + std::to_string(out_count * size) + " bytes of device memory");
  if (comm->cuda.advance_stream(stream, 0) != 0)
    return invalid(*comm, function, "the stream is not a live stream of libfakecuda");
  if (comm->async_error != ncclSuccess) return comm->async_error;
  fire_op_faults(*comm, function, op_name(kind));
  if (count == 0) return ncclSuccess;
  const bool total = kind == Collective::all_gather || kind == Collective::reduce_scatter;
  const std::size_t nbytes = (total ? count * static_cast<std::size_t>(nranks) : count) * size;
  const CollectiveCall call{kind, sendbuff, recvbuff, count, type, op, root, stream, nbytes, out_count};
  ncclResult_t error = ncclSuccess;
  std::optional<CommModel> narrowed;
  const CommModel* behaviour = call_behaviour(*comm, call, narrowed, error);
  if (behaviour == nullptr) return error;
  if (group_depth > 0) {  // planned with the group's other collectives at ncclGroupEnd
    comm->grouped.push_back(call);
    if (std::find(group_comms.begin(), group_comms.end(), comm) == group_comms.end()) group_comms.push_back(comm);
    return ncclSuccess;
  }
  int plugin_channels = 0;
  Result<nccltune::fake::AlgoProto> pair = choose_pair(*comm, kind, *behaviour, nbytes, plugin_channels);
  if (!pair) return fail(*comm, function, pair.error());
  return execute_collective(*comm, call, *behaviour, *pair, plugin_channels);
}

// A group's collectives, planned as ncclPrepareTasks does (src/enqueue.cc, 2.28.9): binned by
// function, reduction and type; in each bin, from the smallest, a batch takes the calls below 4x
// its first call's size; NCCL's choice, and a tuner plugin's getCollInfo, is made once per batch
// for the batch's summed size, and every call of the batch runs that pair. The calls then run in
// the order they were made (every rank makes them in the same order).
ncclResult_t flush_grouped(ncclComm& comm) {
  std::vector<CollectiveCall> calls = std::move(comm.grouped);
  comm.grouped.clear();
  if (calls.empty()) return ncclSuccess;
  if (comm.async_error != ncclSuccess) return comm.async_error;
  struct Planned {
    nccltune::fake::AlgoProto pair;
    int channels = 0;
  };
  std::vector<std::optional<Planned>> plans(calls.size());
  std::vector<std::size_t> order(calls.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  const auto bin = [&](std::size_t i) { return std::tuple(calls[i].kind, calls[i].op, calls[i].type); };
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return std::pair(bin(a), calls[a].nbytes) < std::pair(bin(b), calls[b].nbytes);
  });
  for (std::size_t first = 0; first < order.size();) {
    std::size_t end = first + 1;
    std::size_t summed = calls[order[first]].nbytes;
    while (end < order.size() && bin(order[end]) == bin(order[first]) &&
           calls[order[end]].nbytes < 4 * calls[order[first]].nbytes)
      summed += calls[order[end++]].nbytes;
    const CollectiveCall& lead = calls[order[first]];
    ncclResult_t error = ncclSuccess;
    std::optional<CommModel> narrowed;
    const CommModel* behaviour = call_behaviour(comm, lead, narrowed, error);
    if (behaviour == nullptr) return error;
    int channels = 0;
    Result<nccltune::fake::AlgoProto> pair = choose_pair(comm, lead.kind, *behaviour, summed, channels);
    if (!pair) return fail(comm, function_name(lead.kind), pair.error());
    for (std::size_t k = first; k < end; ++k) plans[order[k]] = Planned{*pair, channels};
    first = end;
  }
  ncclResult_t first_error = ncclSuccess;
  for (std::size_t i = 0; i < calls.size(); ++i) {
    ncclResult_t error = ncclSuccess;
    std::optional<CommModel> narrowed;
    const CommModel* behaviour = call_behaviour(comm, calls[i], narrowed, error);
    if (behaviour != nullptr)
      error = execute_collective(comm, calls[i], *behaviour, plans[i]->pair, plans[i]->channels);
    if (first_error == ncclSuccess) first_error = error;
  }
  return first_error;
}

// Runs a communicator's pending send/recv (one group) and times it as an alltoall of the bytes
// this rank sends or receives, whichever is more.
ncclResult_t flush_pending(ncclComm& comm) {
  if (comm.pending.empty()) return ncclSuccess;
  std::vector<Transfer> transfers = std::move(comm.pending);
  comm.pending.clear();
  if (comm.async_error != ncclSuccess) return comm.async_error;
  fire_op_faults(comm, "ncclGroupEnd", "alltoall");
  const OpView view = op_view(comm, "alltoall");
  Status moved = comm.shared.exchange(transfers);
  if (!moved) return fail(comm, "send/recv", moved.error());
  std::size_t sent = 0;
  std::size_t received = 0;
  for (const Transfer& transfer : transfers) {
    (transfer.send ? sent : received) += transfer.bytes;
    if (!transfer.send && view.behaviour.has(FaultKind::corrupt))
      nccltune::fake::corrupt_elements(transfer.data, transfer.bytes / transfer.element_size,
                                       transfer.element_size);
  }
  // Send/recv asks no tuner plugin (NCCL has no cost table for it): NCCL's own pair.
  const double bytes = static_cast<double>(std::max(sent, received));
  advance_clock(comm, comm.pending_stream, "alltoall", bytes,
                nccltune::fake::choose_algo_proto(view.model, view.behaviour, "alltoall", bytes));
  return ncclSuccess;
}

ncclResult_t enqueue_transfer(ncclComm* comm, bool send, void* buffer, std::size_t count, ncclDataType_t type,
                              int peer, cudaStream_t stream) {
  if (comm == nullptr) return ncclInvalidArgument;
  const char* function = send ? "ncclSend" : "ncclRecv";
  const std::size_t size = nccltune::fake::type_size(type);
  if (size == 0) return invalid(*comm, function, "unsupported data type " + std::to_string(type));
  if (peer < 0 || peer >= comm->behaviour.nranks)
    return invalid(*comm, function, "peer " + std::to_string(peer) + " is not a rank");
  if (!device_range(*comm, buffer, count * size))
    return invalid(*comm, function,
                   "the buffer is not " + std::to_string(count * size) + " bytes of device memory");
  if (comm->cuda.advance_stream(stream, 0) != 0)
    return invalid(*comm, function, "the stream is not a live stream of libfakecuda");
  Transfer transfer;
  transfer.send = send;
  transfer.peer = peer;
  transfer.data = static_cast<std::byte*>(buffer);
  transfer.bytes = count * size;
  transfer.element_size = size;
  comm->pending.push_back(transfer);
  comm->pending_stream = stream;
  if (group_depth == 0) return flush_pending(*comm);
  if (std::find(group_comms.begin(), group_comms.end(), comm) == group_comms.end())
    group_comms.push_back(comm);
  return ncclSuccess;
}

// The model of this library: NCCLTUNE_FAKE_MODEL_<tag> when this file is a copy named
// libfakenccl-<tag>.so and that is set, else NCCLTUNE_FAKE_MODEL. Each copy dlopen'd in a
// process is a library of its own and reads its own model. The variable's name, for messages.
std::pair<const char*, std::string> model_path() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<const void*>(&model_path), &info) != 0 && info.dli_fname != nullptr) {
    std::string tagged = nccltune::fake::tagged_model_variable(info.dli_fname);
    if (const char* path = tagged.empty() ? nullptr : std::getenv(tagged.c_str())) return {path, tagged};
  }
  return {std::getenv("NCCLTUNE_FAKE_MODEL"), "NCCLTUNE_FAKE_MODEL"};
}

int model_nccl_version() {
  const char* path = model_path().first;
  if (path == nullptr) return nccltune::fake::kDefaultNcclVersion;
  Result<FakeModel> model = nccltune::fake::load_fake_model(path);
  return model ? model->nccl_version : nccltune::fake::kDefaultNcclVersion;
}

}  // namespace

FAKE_EXPORT ncclResult_t ncclGetVersion(int* version) {
  if (version == nullptr) return ncclInvalidArgument;
  *version = model_nccl_version();
  return ncclSuccess;
}

FAKE_EXPORT ncclResult_t ncclGetUniqueId(ncclUniqueId* unique_id) {
  if (unique_id == nullptr) return ncclInvalidArgument;
  std::size_t filled = 0;
  while (filled < sizeof unique_id->internal) {
    const ssize_t got = getrandom(unique_id->internal + filled, sizeof unique_id->internal - filled, 0);
    if (got <= 0) {
      say("ncclGetUniqueId: getrandom failed");
      return ncclSystemError;
    }
    filled += static_cast<std::size_t>(got);
  }
  return ncclSuccess;
}

// The rank and size of the job that started this process, as the launcher says (Open MPI,
// Slurm), for NCCLTUNE_EMULATE_NODES: a worker inherits its MPI rank's environment. A process no
// launcher started (the tests' forked ranks) is its own job: the communicator's rank and size.
std::pair<int, int> launcher_rank(int comm_rank, int comm_size) {
  const auto number = [](const char* name) -> int {
    const char* text = std::getenv(name);
    if (text == nullptr || *text == '\0') return -1;
    char* end = nullptr;
    const long value = std::strtol(text, &end, 10);
    return *end == '\0' && value >= 0 && value < (1 << 24) ? static_cast<int>(value) : -1;
  };
  for (const auto& [rank_var, size_var] : {std::pair{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
                                           std::pair{"SLURM_PROCID", "SLURM_NTASKS"}}) {
    const int rank = number(rank_var), size = number(size_var);
    if (rank >= 0 && size > rank) return {rank, size};
  }
  return {comm_rank, comm_size};
}

namespace {

// FNV-1a of the id: NCCL's commHash stands in (the tuner plugin's commId).
std::uint64_t id_hash(const ncclUniqueId& id) {
  std::uint64_t hash = 0xcbf29ce484222325ull;
  for (const char byte : id.internal) hash = (hash ^ static_cast<unsigned char>(byte)) * 0x100000001b3ull;
  return hash;
}

// The rest of a communicator's init once its ranks have met in `shared`, for ncclCommInitRank and
// ncclCommSplit alike: its nodes from its ranks' hosts (F18), the model for its own shape, its
// faults, its INFO lines and its tuner plugin. `who` starts its stderr lines, `function` names the
// call in the plugin's WARN line. `plugin_env`: the env plugin's outcome, from ncclCommInitRank
// only. `version_line`: NCCL prints its version from ncclCommInitRankDev only (showVersion,
// init.cc:1979 at v2.28.9), never from a split.
ncclResult_t finish_init(ncclComm_t* comm, const std::string& who, const char* function, ProcessSetup process,
                         SharedComm shared, const ncclUniqueId& id,
                         const nccltune::fake::PluginEnv* plugin_env, bool version_line) {
  const int rank = shared.rank();
  const int nranks = shared.nranks();
  const nccltune::fake::NcclEnv& env = process.env;
  // NCCL counts nodes by host: every rank's host, then this rank's place among them. A
  // communicator split off a job gets its own count, whatever its ranks' numbers.
  Result<std::vector<std::string>> hosts = shared.all_texts(process.host);
  if (!hosts) {
    say(who + hosts.error());
    return ncclSystemError;
  }
  const nccltune::fake::RankPlace place = nccltune::fake::place_in_comm(*hosts, rank);
  // The emulated nodes the model's node faults name; "-node<k>" suffixes count only when this
  // process's emulation made them.
  const nccltune::fake::CommNodes nodes = nccltune::fake::comm_nodes(*hosts, rank, process.emulated);
  // The model of this node count (its `nodes` entry), and each collective's own entry within it.
  const auto failed_init = [&](const std::string& why, ncclResult_t result) {
    say(who + why);
    shared.mark_failed();
    return result;
  };
  if (plugin_env != nullptr && plugin_env->init_failed) {
    for (const auto& line : plugin_env->lines)
      if (line.warning) say(who + line.text);
    return failed_init("the env plugin's init failed", ncclSystemError);
  }
  // A `nodes` entry may name the ranks on each node; uneven communicators match none that do.
  const int ranks_per_node = nranks % place.nodes == 0 && nodes.fewest_local_ranks == nranks / place.nodes
                                 ? nranks / place.nodes
                                 : 0;
  FakeModel node_model = nccltune::fake::model_for_nodes(process.model, place.nodes, ranks_per_node);
  Result<CommModel> behaviour = nccltune::fake::resolve_comm_model(
      nccltune::fake::model_for_collective(node_model, ""), env, rank, nranks, "all_reduce", nodes);
  if (!behaviour) return failed_init(behaviour.error(), ncclInvalidUsage);
  if (behaviour->has(FaultKind::init_error)) return failed_init("init_error fault: failing", ncclSystemError);
  std::map<std::string, OpModel> ops;
  for (const char* op : {"all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce", "alltoall"}) {
    FakeModel op_model = nccltune::fake::model_for_collective(node_model, op);
    Result<CommModel> op_behaviour =
        nccltune::fake::resolve_comm_model(op_model, env, rank, nranks, op, nodes);
    if (!op_behaviour) return failed_init(std::string(op) + ": " + op_behaviour.error(), ncclInvalidUsage);
    ops.emplace(op, OpModel{std::move(op_model), std::move(*op_behaviour)});
  }
  DebugLog log(nccltune::fake::debug_settings(env), place.host, process.device);
  if (plugin_env != nullptr) {
    for (const auto& line : plugin_env->lines) {
      if (line.warning)
        log.warn(line.text);
      else
        log.info(nccltune::fake::kSubsysInit | nccltune::fake::kSubsysEnv, line.text);
    }
  }
  for (const nccltune::fake::LogLine& line : nccltune::fake::init_lines(node_model, env, *behaviour, place)) {
    if (!version_line && line.message.starts_with("NCCL version ")) continue;
    log.info(line.subsystems, line.message);
  }
  if (rank == 0) {
    std::vector<nccltune::fake::TuningTableRow> rows;
    for (const auto& [name, op] :
         {std::pair{"Broadcast", "broadcast"}, std::pair{"Reduce", "reduce"},
          std::pair{"AllGather", "all_gather"}, std::pair{"ReduceScatter", "reduce_scatter"},
          std::pair{"AllReduce", "all_reduce"}}) {
      const OpModel& op_model = ops.at(op);
      rows.push_back({name, op, &op_model.model, &op_model.behaviour});
    }
    for (const std::string& line : nccltune::fake::tuning_table_lines(rows))
      log.info(nccltune::fake::kSubsysTuning, line);
  }
  const std::optional<std::string> plugin = [&]() -> std::optional<std::string> {
    const auto found = env.find("NCCL_TUNER_PLUGIN");
    if (found == env.end()) return std::nullopt;
    return found->second;
  }();
  auto created = std::make_unique<ncclComm>(std::move(node_model), std::move(*behaviour), std::move(ops),
                                            std::move(shared), std::move(process), id, std::move(log));
  // The tuner plugin, once the node count is known (initTransportsRank in NCCL's src/init.cc):
  // its init failing fails the communicator, as NCCLCHECK does there.
  if (plugin) {
    TunerPluginHost::Opened opened = TunerPluginHost::open(
        *plugin, created->model.nccl_version, id_hash(id), static_cast<std::size_t>(nranks),
        static_cast<std::size_t>(place.nodes), created->log);
    if (opened.init_failed) {
      const std::string why = "tuner plugin " + *plugin + ": init returned " +
                              std::to_string(opened.init_result) + "; " + function + " fails";
      created->log.warn(why);
      created->shared.mark_failed();
      say(who + why);
      return opened.init_result;
    }
    created->tuner = std::move(opened.host);
  }
  *comm = created.release();
  return ncclSuccess;
}

// The id of the communicator of `color` split off `parent`: every rank of that color derives the
// same one from what NCCL hashes into the child's commHash (parent, split count, color:
// ncclCommInitRankFunc, init.cc:1552-1557 at v2.28.9), so each split's communicators meet in
// segments of their own. FNV-1a of the three, spread over the id's bytes by splitmix64.
ncclUniqueId split_id(const ncclUniqueId& parent, int split_count, int color) {
  std::uint64_t hash = id_hash(parent);
  for (const int value : {split_count, color}) {
    unsigned char bytes[sizeof value];
    std::memcpy(bytes, &value, sizeof value);
    for (const unsigned char byte : bytes) hash = (hash ^ byte) * 0x100000001b3ull;
  }
  ncclUniqueId id{};
  for (std::size_t at = 0; at < sizeof id.internal; at += sizeof(std::uint64_t)) {
    hash += 0x9e3779b97f4a7c15ull;
    std::uint64_t word = hash;
    word = (word ^ (word >> 30)) * 0xbf58476d1ce4e5b9ull;
    word = (word ^ (word >> 27)) * 0x94d049bb133111ebull;
    word ^= word >> 31;
    std::memcpy(id.internal + at, &word, sizeof word);
  }
  return id;
}

}  // namespace

FAKE_EXPORT ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId comm_id, int rank) {
  if (comm == nullptr || nranks < 1 || rank < 0 || rank >= nranks) return ncclInvalidArgument;
  *comm = nullptr;
  const std::string who = "rank " + std::to_string(rank) + ": ncclCommInitRank: ";
  const std::optional<FakeCudaHooks> hooks = find_fakecuda();
  if (!hooks) {
    say(who + "libfakecuda.so is not loaded in this process (load it before ncclCommInitRank)");
    return ncclSystemError;
  }
  if (hooks->current_device() < 0) {
    say(who + "no current CUDA context (cuCtxSetCurrent first)");
    return ncclInvalidUsage;
  }
  const auto [path, variable] = model_path();
  if (path == nullptr) {
    say(who + variable + " is not set");
    return ncclInvalidUsage;
  }
  Result<FakeModel> model = nccltune::fake::load_fake_model(path);
  if (!model) {
    say(model.error());
    return ncclInvalidUsage;
  }
  // A real communicator takes a second or more to come up (init_cost_ms.nccl_comm).
  if (model->init_cost.nccl_comm_ms > 0)
    std::this_thread::sleep_for(std::chrono::milliseconds(model->init_cost.nccl_comm_ms));
  // Every variable through the env plugin, as NCCL 2.28.9 reads them (env_plugin_host.h).
  nccltune::fake::PluginEnv plugin_env =
      nccltune::fake::read_nccl_env_through_plugin(environ, model->nccl_version);
  Result<SharedComm> shared = SharedComm::join(comm_id, nranks, rank, timeout_seconds());
  if (!shared) {
    say(who + shared.error());
    return ncclSystemError;
  }
  char hostname[256] = {};
  gethostname(hostname, sizeof hostname - 1);
  const auto [world_rank, world_size] = launcher_rank(rank, nranks);
  ProcessSetup process;
  process.host =
      nccltune::fake::process_host(hostname, std::getenv("NCCLTUNE_EMULATE_NODES"), world_rank, world_size);
  process.emulated = process.host != nccltune::fake::process_host(hostname, nullptr, world_rank, world_size);
  process.device = hooks->current_device();
  process.hooks = *hooks;
  process.env = plugin_env.env;
  process.model = std::move(*model);
  return finish_init(comm, who, "ncclCommInitRank", std::move(process), std::move(*shared), comm_id,
                     &plugin_env,
                     /*version_line=*/true);
}

// As NCCL 2.28.9's ncclCommSplit (ncclCommInitChildComm and ncclCommInitRankFunc, src/init.cc;
// FIDELITY.md F21): collective over the parent's ranks, NCCL_SPLIT_NOCOLOR ones included. Every
// rank posts its color and key (commGetSplitInfo's bootstrapAllGather); the ranks of one color
// form a communicator, ordered by key, ties by parent rank; NOCOLOR gets NULL. Only -1 is
// NOCOLOR: any other color, negative too, forms a communicator, as NCCL compares with == only.
// The child is a communicator of its own, as from ncclCommInitRank: its nodes, model, faults,
// init cost, INFO lines (no version line) and tuner plugin. `config` is not read: the fake models
// no config field (NULL inherits the parent's, copyCommConfig).
FAKE_EXPORT ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm,
                                       ncclConfig_t* /*config*/) {
  // CommCheck and PtrCheck (init.cc:2558-2559), then ncclCommEnsureReady (:2568): the parent's
  // asynchronous error, kept.
  if (comm == nullptr || newcomm == nullptr) return ncclInvalidArgument;
  if (comm->async_error != ncclSuccess) return comm->async_error;
  *newcomm = nullptr;
  // Every split counts, NOCOLOR too (:2621), so that each one's communicators are new.
  const int split_count = ++comm->split_count;
  const int parent_rank = comm->behaviour.rank;
  const std::string who = "rank " + std::to_string(parent_rank) + ": ncclCommSplit(color " +
                          std::to_string(color) + ", key " + std::to_string(key) + "): ";
  if (color == kSplitNoColor)
    comm->log.info(nccltune::fake::kSubsysInit, "Rank " + std::to_string(parent_rank) +
                                                    " has color with NCCL_SPLIT_NOCOLOR, not creating a new "
                                                    "communicator");
  Result<std::vector<std::string>> posted =
      comm->shared.all_texts(std::to_string(color) + " " + std::to_string(key));
  if (!posted) {
    say(who + posted.error());
    return ncclSystemError;
  }
  if (color == kSplitNoColor) return ncclSuccess;
  // commGetSplitInfo (init.cc:1455-1495): the parent's ranks of this color, each inserted after
  // those of key <= its own, so ties keep parent-rank order.
  std::vector<std::pair<int, int>> members;  // key, parent rank
  for (int r = 0; r < static_cast<int>(posted->size()); ++r) {
    int their_color = 0, their_key = 0;
    if (std::sscanf((*posted)[static_cast<std::size_t>(r)].c_str(), "%d %d", &their_color, &their_key) != 2) {
      say(who + "rank " + std::to_string(r) + " posted '" + (*posted)[static_cast<std::size_t>(r)] + "'");
      return ncclInternalError;
    }
    if (their_color == color) members.emplace_back(their_key, r);
  }
  std::stable_sort(members.begin(), members.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  const int nranks = static_cast<int>(members.size());
  int rank = 0;
  while (members[static_cast<std::size_t>(rank)].second != parent_rank) ++rank;
  // Each split is a communicator's init, less what its process and parent already did: no kernel
  // load and no root rendezvous (ncclCommInitRankFunc, init.cc:1533-1565), so its own cost.
  if (const int split_ms = comm->process.model.init_cost.split_ms(); split_ms > 0)
    std::this_thread::sleep_for(std::chrono::milliseconds(split_ms));
  const ncclUniqueId child_id = split_id(comm->id, split_count, color);
  Result<SharedComm> shared = SharedComm::join(child_id, nranks, rank, timeout_seconds());
  if (!shared) {
    say(who + shared.error());
    return ncclSystemError;
  }
  return finish_init(newcomm, who, "ncclCommSplit", comm->process, std::move(*shared), child_id, nullptr,
                     /*version_line=*/false);
}

FAKE_EXPORT ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  if (comm == nullptr) return ncclInvalidArgument;
  group_comms.erase(std::remove(group_comms.begin(), group_comms.end(), comm), group_comms.end());
  delete comm;
  return ncclSuccess;
}

FAKE_EXPORT ncclResult_t ncclCommAbort(ncclComm_t comm) {
  if (comm == nullptr) return ncclSuccess;
  comm->shared.mark_failed();
  return ncclCommDestroy(comm);
}

FAKE_EXPORT ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* async_error) {
  if (comm == nullptr || async_error == nullptr) return ncclInvalidArgument;
  *async_error = comm->async_error;
  return ncclSuccess;
}

FAKE_EXPORT const char* ncclGetErrorString(ncclResult_t result) {
  switch (result) {
    case ncclSuccess: return "no error";
    case ncclUnhandledCudaError: return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
    case ncclSystemError: return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
    case ncclInternalError: return "internal error - please report this issue to the NCCL developers";
    case ncclInvalidArgument: return "invalid argument (run with NCCL_DEBUG=WARN for details)";
    case ncclInvalidUsage: return "invalid usage (run with NCCL_DEBUG=WARN for details)";
    case ncclRemoteError: return "remote process exited or there was a network error";
    case ncclInProgress: return "NCCL operation in progress";
    default: return "unknown result code";
  }
}

FAKE_EXPORT ncclResult_t ncclAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                                       ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                                       cudaStream_t stream) {
  return run_collective(comm, Collective::all_reduce, sendbuff, recvbuff, count, datatype, op, 0, stream);
}

FAKE_EXPORT ncclResult_t ncclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                                       ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream) {
  return run_collective(comm, Collective::all_gather, sendbuff, recvbuff, sendcount, datatype, ncclSum, 0,
                        stream);
}

FAKE_EXPORT ncclResult_t ncclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                                           ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                                           cudaStream_t stream) {
  return run_collective(comm, Collective::reduce_scatter, sendbuff, recvbuff, recvcount, datatype, op, 0,
                        stream);
}

FAKE_EXPORT ncclResult_t ncclBroadcast(const void* sendbuff, void* recvbuff, size_t count,
                                       ncclDataType_t datatype, int root, ncclComm_t comm,
                                       cudaStream_t stream) {
  return run_collective(comm, Collective::broadcast, sendbuff, recvbuff, count, datatype, ncclSum, root,
                        stream);
}

FAKE_EXPORT ncclResult_t ncclReduce(const void* sendbuff, void* recvbuff, size_t count,
                                    ncclDataType_t datatype, ncclRedOp_t op, int root, ncclComm_t comm,
                                    cudaStream_t stream) {
  return run_collective(comm, Collective::reduce, sendbuff, recvbuff, count, datatype, op, root, stream);
}

FAKE_EXPORT ncclResult_t ncclSend(const void* sendbuff, size_t count, ncclDataType_t datatype, int peer,
                                  ncclComm_t comm, cudaStream_t stream) {
  return enqueue_transfer(comm, true, const_cast<void*>(sendbuff), count, datatype, peer, stream);
}

FAKE_EXPORT ncclResult_t ncclRecv(void* recvbuff, size_t count, ncclDataType_t datatype, int peer,
                                  ncclComm_t comm, cudaStream_t stream) {
  return enqueue_transfer(comm, false, recvbuff, count, datatype, peer, stream);
}

FAKE_EXPORT ncclResult_t ncclGroupStart() {
  ++group_depth;
  return ncclSuccess;
}

FAKE_EXPORT ncclResult_t ncclGroupEnd() {
  if (group_depth == 0) return ncclInvalidUsage;
  if (--group_depth > 0) return ncclSuccess;
  std::vector<ncclComm*> comms = std::move(group_comms);
  group_comms.clear();
  ncclResult_t first_error = ncclSuccess;
  for (ncclComm* comm : comms) {
    const ncclResult_t collectives = flush_grouped(*comm);
    const ncclResult_t transfers = flush_pending(*comm);
    if (first_error == ncclSuccess) first_error = collectives != ncclSuccess ? collectives : transfers;
  }
  return first_error;
}
