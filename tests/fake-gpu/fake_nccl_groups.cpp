// ncclGroupStart / ncclGroupEnd on the fake NCCL, and what a group defers to its end: its
// collectives, planned in batches as NCCL's ncclPrepareTasks does, and send/recv (ncclSend,
// ncclRecv), exchanged at once. Outside a group send/recv runs at the call.
#include <algorithm>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "element_ops.h"
#include "fake_nccl_comm.h"

namespace fakenccl {
namespace {

// initial-exec, as fake_cuda.cpp's current_context (LeakSanitizer and dynamic TLS).
__attribute__((tls_model("initial-exec"))) thread_local int group_depth = 0;
__attribute__((tls_model("initial-exec"))) thread_local std::vector<ncclComm*>
    group_comms;  // with pending collectives or send/recv

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
  // The group's collectives are one launch: one profiler group event holds their tasks.
  void* group = comm.profiler ? comm.profiler->start_group() : nullptr;
  for (std::size_t i = 0; i < calls.size(); ++i) {
    ncclResult_t error = ncclSuccess;
    std::optional<CommModel> narrowed;
    const CommModel* behaviour = call_behaviour(comm, calls[i], narrowed, error);
    if (behaviour != nullptr)
      error = execute_collective(comm, calls[i], *behaviour, plans[i]->pair, plans[i]->channels, group);
    if (first_error == ncclSuccess) first_error = error;
  }
  if (group != nullptr) comm.profiler->stop(group);
  return first_error;
}

}  // namespace

bool in_group() {
  return group_depth > 0;
}

void join_group(ncclComm* comm) {
  if (std::find(group_comms.begin(), group_comms.end(), comm) == group_comms.end())
    group_comms.push_back(comm);
}

void leave_group(ncclComm* comm) {
  group_comms.erase(std::remove(group_comms.begin(), group_comms.end(), comm), group_comms.end());
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

namespace {

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
  if (!in_group()) return flush_pending(*comm);
  join_group(comm);
  return ncclSuccess;
}

}  // namespace
}  // namespace fakenccl

using namespace fakenccl;

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
