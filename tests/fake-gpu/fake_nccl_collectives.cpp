// One collective call on the fake NCCL: its arguments checked as NCCL checks them, the pair it runs
// (NCCL's cost model, or a tuner plugin's answer to a cost table), its data moved and reduced
// through the communicator's shared slots, its TUNING line and its time on the stream. Inside a
// group the call is queued and planned at ncclGroupEnd (fake_nccl_groups.cpp).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "element_ops.h"
#include "fake_nccl_comm.h"

namespace fakenccl {

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

namespace {

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

}  // namespace

// The pair a collective runs: NCCL's own choice, or with a tuner plugin, as NCCL 2.28.9's
// getAlgoInfo (src/enqueue.cc): a cost table of every pair the communicator allows
// (NCCL_ALGO_PROTO_IGNORE elsewhere) goes to getCollInfo, and the cell of lowest cost runs. With
// `nccl_model` the cells are NCCL's estimates (updateCollCostTable); an older model's cells are
// its true times with its own choice entered just below the lowest, as NCCL's pick. Either
// way a plugin that changes nothing changes nothing. `channels`: the plugin's nChannels, 0 if unset.
Result<nccltune::fake::AlgoProto> choose_pair(ncclComm& comm, Collective kind, const CommModel& behaviour,
                                              std::size_t nbytes, int& channels) {
  const OpView view = op_view(comm, op_name(kind));
  const double bytes = static_cast<double>(nbytes);
  nccltune::fake::AlgoProto own =
      nccltune::fake::choose_algo_proto(view.model, behaviour, op_name(kind), bytes);
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
    table[cell->first][cell->second] = nccltune::fake::below_lowest(lowest);
  const ncclResult_t asked = comm.tuner->get_coll_info(nccl_func(kind), nbytes, table, channels);
  // NCCLCHECK around getCollInfo in getAlgoInfo: a failure fails the collective.
  if (asked != ncclSuccess)
    return nccltune::Error{"tuner plugin '" + comm.tuner->name() + "': getCollInfo returned " +
                           std::to_string(asked)};
  const std::optional<nccltune::fake::AlgoProto> chosen = nccltune::fake::lowest_cost_pair(table);
  return chosen ? *chosen : own;
}

namespace {

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
      std::memcpy(destination + share_first(q) * size,
                  shared.slot(static_cast<int>(q)) + share_first(q) * size,
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
        if (Status reduced = all_reduce_chunk(comm, recv + first * size, length, type, op); !reduced)
          return reduced;
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
    call.no_pair =
        "no kernel of its pairs for reduction op " + std::to_string(op) + " on type " + std::to_string(type);
  return call;
}

}  // namespace

namespace {

// Where this rank's stream stands when it reaches a collective of `comm`, after its late_rank
// delay; the stream then waits for the last of the ranks to arrive, as a kernel on hardware waits
// for its peers. The ranks of a collective end together, so how late a rank arrives is what its
// stream spent since the communicator's last collective on it beyond what the others spent
// (compute, its late_rank delay, waits in other communicators); each rank's own op time (noise,
// slow_rank) stays its own. The first collective on a stream counts the late_rank delay alone.
Result<double> arrive(ncclComm& comm, cudaStream_t stream) {
  if (comm.late_us > 0) comm.cuda.advance_stream(stream, comm.late_us);
  double now = 0;
  comm.cuda.stream_clock(stream, &now);
  const auto last = comm.collective_end.find(stream);
  const double lateness = last == comm.collective_end.end() ? comm.late_us : now - last->second;
  Result<std::vector<double>> all = comm.shared.all_values(lateness);
  if (!all) return nccltune::Error{all.error()};
  const double wait = *std::max_element(all->begin(), all->end()) - lateness;
  if (wait > 0) comm.cuda.advance_stream(stream, wait);
  return now;
}

// NCCL's description of the call for a profiler plugin (ncclProfilerStartTaskEvents).
nccltune::fake::ProfiledCollective profiled(const CollectiveCall& call, std::uint64_t seq_number,
                                            const nccltune::fake::AlgoProto& pair, int channels) {
  nccltune::fake::ProfiledCollective described;
  described.seq_number = seq_number;
  described.func = nccl_func_name(call.kind);
  described.send = call.sendbuff;
  described.recv = call.recvbuff;
  described.count = call.count;
  described.root = call.root;
  described.datatype = nccltune::fake::nccl_datatype_name(call.type);
  described.channels = channels;
  described.warps = nccltune::fake::nccl_warps(pair.algo, pair.proto);
  described.algo = nccltune::fake::nccl_algo_name(pair.algo);
  described.proto = nccltune::fake::nccl_proto_name(pair.proto);
  return described;
}

}  // namespace

// Runs one call with `pair` (NCCL's choice for its batch, or a tuner plugin's): moves the data,
// corrupts it where the pair does, prints the TUNING line, waits for the last rank to arrive and
// advances the stream by the pair's time, telling a profiler plugin each event on the way.
ncclResult_t execute_collective(ncclComm& comm, const CollectiveCall& call, const CommModel& behaviour,
                                const nccltune::fake::AlgoProto& pair, int plugin_channels, void* group) {
  const char* function = function_name(call.kind);
  // comm->seqNumber counts every collective, profiled or not (ncclProfilerStartTaskEvents).
  const std::uint64_t seq_number = comm.seq_numbers[static_cast<std::size_t>(nccl_func(call.kind))]++;
  Status moved =
      move_collective(comm, call.kind, static_cast<const std::byte*>(call.sendbuff),
                      static_cast<std::byte*>(call.recvbuff), call.count, call.type, call.op, call.root);
  if (!moved) return fail(comm, function, moved.error());
  if (nccltune::fake::corrupts(behaviour, pair))
    nccltune::fake::corrupt_elements(call.recvbuff, call.out_count, nccltune::fake::type_size(call.type));
  // The plugin's nChannels replaces NCCL's count for the call (getAlgoInfo, src/enqueue.cc), and
  // the planner keeps it within the pair's channels (nMaxChannels per kind): time and line follow.
  // Without a plugin's count NCCL reduces the channels per size (topoGetAlgoInfo and the planner,
  // channel_rules.h): the line names the channels the call runs on.
  const int channels = nccltune::fake::op_channels(behaviour, pair, op_name(call.kind),
                                                   static_cast<double>(call.nbytes), plugin_channels);
  if (comm.behaviour.rank == 0 && comm.log.wants(nccltune::fake::kSubsysTuning))
    comm.log.info(nccltune::fake::kSubsysTuning,
                  nccltune::fake::tuning_message(nccl_func_name(call.kind), call.nbytes, pair, channels));
  void* event = comm.profiler ? comm.profiler->start_collective(profiled(call, seq_number, pair, channels),
                                                                 comm.behaviour.rank, group)
                              : nullptr;
  Result<double> arrived = arrive(comm, call.stream);
  if (!arrived) {
    if (event != nullptr) comm.profiler->stop(event);
    return fail(comm, function, arrived.error());
  }
  advance_clock(comm, call.stream, op_name(call.kind), static_cast<double>(call.nbytes), pair,
                plugin_channels);
  double end = 0;
  comm.cuda.stream_clock(call.stream, &end);
  comm.collective_end[call.stream] = end;
  // The kernel's channels run from this rank's arrival to the common end, on the GPU timer
  // (ncclProfilerStartKernelChEvent / StopKernelChEvent); then the task's stop.
  if (event != nullptr) {
    comm.profiler->kernel_channels(event, channels, nccltune::fake::gpu_timer_ns(*arrived),
                                   nccltune::fake::gpu_timer_ns(end));
    comm.profiler->stop(event);
  }
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

namespace {

// One rank: NCCL runs ncclLaunchOneRank (enqueue.cc:2569-2571 at 2.28.9) before any planning, a
// local copy or reduction with no algorithm, no cost table, no tuner plugin and no TUNING line,
// whatever NCCL_ALGO / NCCL_PROTO leave (FIDELITY.md F36). Timed as the latency of the pair NCCL
// would otherwise pick, when there is one.
ncclResult_t run_one_rank(ncclComm& comm, const CollectiveCall& call) {
  Status moved =
      move_collective(comm, call.kind, static_cast<const std::byte*>(call.sendbuff),
                      static_cast<std::byte*>(call.recvbuff), call.count, call.type, call.op, call.root);
  if (!moved) return fail(comm, function_name(call.kind), moved.error());
  const OpView view = op_view(comm, op_name(call.kind));
  // No pair runs: a `corrupt` fault that names NCCL_ALGO / NCCL_PROTO is read against the
  // environment, as for send/recv, which has no cost table either.
  const auto holds_in_env = [&](const nccltune::fake::Condition& names) {
    return nccltune::fake::holds(names, comm.process.env);
  };
  if (view.behaviour.has(FaultKind::corrupt) ||
      std::any_of(view.behaviour.corrupting_pairs.begin(), view.behaviour.corrupting_pairs.end(), holds_in_env))
    nccltune::fake::corrupt_elements(call.recvbuff, call.out_count, nccltune::fake::type_size(call.type));
  const double bytes = static_cast<double>(call.nbytes);
  if (!view.behaviour.allowed.empty())
    advance_clock(comm, call.stream, op_name(call.kind), bytes,
                  nccltune::fake::choose_algo_proto(view.model, view.behaviour, op_name(call.kind), bytes));
  return ncclSuccess;
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
  if (nranks == 1) return run_one_rank(*comm, call);
  ncclResult_t error = ncclSuccess;
  std::optional<CommModel> narrowed;
  const CommModel* behaviour = call_behaviour(*comm, call, narrowed, error);
  if (behaviour == nullptr) return error;
  if (in_group()) {  // planned with the group's other collectives at ncclGroupEnd
    comm->grouped.push_back(call);
    join_group(comm);
    return ncclSuccess;
  }
  int plugin_channels = 0;
  Result<nccltune::fake::AlgoProto> pair = choose_pair(*comm, kind, *behaviour, nbytes, plugin_channels);
  if (!pair) return fail(*comm, function, pair.error());
  // One launch of one collective: its group event around the task (ncclProfilerStartGroupEvent).
  void* group = comm->profiler ? comm->profiler->start_group() : nullptr;
  const ncclResult_t result = execute_collective(*comm, call, *behaviour, *pair, plugin_channels, group);
  if (group != nullptr) comm->profiler->stop(group);
  return result;
}

}  // namespace
}  // namespace fakenccl

using namespace fakenccl;

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
