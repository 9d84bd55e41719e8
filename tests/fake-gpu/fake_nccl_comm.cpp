// The communicator's own helpers (fake_nccl_comm.h): its op's model, faults, failures, arguments
// and simulated clock.
#include "fake_nccl_comm.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

namespace fakenccl {

void say(const std::string& line) {
  std::fprintf(stderr, "fakenccl: %s\n", line.c_str());
}

OpView op_view(const ncclComm& comm, std::string_view op) {
  const auto it = comm.ops.find(std::string(op));
  if (it == comm.ops.end()) return {comm.model, comm.behaviour};
  return {it->second.model, it->second.behaviour};
}

std::string prefix(const ncclComm& comm) {
  return "rank " + std::to_string(comm.behaviour.rank) + ": ";
}

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

void advance_clock(ncclComm& comm, cudaStream_t stream, const char* op, double bytes,
                   const nccltune::fake::AlgoProto& pair, int channels) {
  const OpView view = op_view(comm, op);
  const double us = nccltune::fake::pair_op_time_us(view.model, view.behaviour, pair, op, bytes, channels) *
                    comm.noise.next_factor();
  comm.cuda.advance_stream(stream, us);
}

}  // namespace fakenccl
