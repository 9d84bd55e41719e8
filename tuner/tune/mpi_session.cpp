#include "tune/mpi_session.h"

// The C API only: Open MPI's deprecated C++ bindings would need libmpi_cxx.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <thread>

namespace nccltune {

Result<std::unique_ptr<MpiSession>> MpiSession::start(int* argc, char*** argv) {
  // Open MPI puts each rank in a process group of its own: a launcher killed with SIGKILL (by
  // the OOM killer, a lost ssh link, a user) leaves the ranks running until Open MPI notices,
  // holding GPUs and the journal's lock meanwhile. A rank ends with the process that started it.
  const pid_t launcher = getppid();
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (getppid() != launcher) return Error{"the launcher exited before this rank started"};
  if (MPI_Init(argc, argv) != MPI_SUCCESS) return Error{"MPI_Init failed"};
  std::unique_ptr<MpiSession> session(new MpiSession);
  MPI_Comm_rank(MPI_COMM_WORLD, &session->rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &session->size_);
  std::array<char, 256> host{};
  gethostname(host.data(), host.size() - 1);
  int emulate = 0;
  if (const char* text = std::getenv("NCCLTUNE_EMULATE_NODES")) {
    emulate = std::atoi(text);
    if (emulate <= 0)
      return Error{std::string("NCCLTUNE_EMULATE_NODES=") + text + ": expected a positive number"};
  }
  auto layout = node_layout(session->gather(host.data()), session->rank_, emulate);
  if (!layout) return Error{layout.error()};
  session->layout_ = *layout;
  return session;
}

MpiSession::~MpiSession() {
  MPI_Finalize();
}

namespace {

// Ranks wait on each other while their workers measure; MPI's blocking calls spin on a core
// the workers need. A nonblocking call polled with short sleeps waits without taking it.
void wait_quietly(MPI_Request& request) {
  int done = 0;
  MPI_Test(&request, &done, MPI_STATUS_IGNORE);
  while (!done) {
    std::this_thread::sleep_for(std::chrono::microseconds(200));
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
  }
}

void allreduce(void* values, int count, MPI_Datatype type, MPI_Op op) {
  MPI_Request request;
  MPI_Iallreduce(MPI_IN_PLACE, values, count, type, op, MPI_COMM_WORLD, &request);
  wait_quietly(request);
}

}  // namespace

void MpiSession::broadcast(void* data, std::size_t bytes, int root) {
  MPI_Request request;
  MPI_Ibcast(data, static_cast<int>(bytes), MPI_BYTE, root, MPI_COMM_WORLD, &request);
  wait_quietly(request);
}

int MpiSession::max(int value) {
  allreduce(&value, 1, MPI_INT, MPI_MAX);
  return value;
}

int MpiSession::min(int value) {
  allreduce(&value, 1, MPI_INT, MPI_MIN);
  return value;
}

void MpiSession::max(std::vector<double>& values) {
  if (!values.empty()) allreduce(values.data(), static_cast<int>(values.size()), MPI_DOUBLE, MPI_MAX);
}

void MpiSession::min(std::vector<double>& values) {
  if (!values.empty()) allreduce(values.data(), static_cast<int>(values.size()), MPI_DOUBLE, MPI_MIN);
}

void MpiSession::sum(std::vector<double>& values) {
  if (!values.empty()) allreduce(values.data(), static_cast<int>(values.size()), MPI_DOUBLE, MPI_SUM);
}

void MpiSession::sum(std::vector<int64_t>& values) {
  if (!values.empty()) allreduce(values.data(), static_cast<int>(values.size()), MPI_INT64_T, MPI_SUM);
}

std::vector<std::string> MpiSession::gather(const std::string& value) {
  int length = static_cast<int>(value.size());
  std::vector<int> lengths(static_cast<size_t>(size_));
  MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, MPI_COMM_WORLD);
  std::vector<int> offsets(static_cast<size_t>(size_), 0);
  int total = 0;
  for (int r = 0; r < size_; ++r) {
    offsets[static_cast<size_t>(r)] = total;
    total += lengths[static_cast<size_t>(r)];
  }
  std::string all(static_cast<size_t>(total), '\0');
  MPI_Allgatherv(value.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR,
                 MPI_COMM_WORLD);
  std::vector<std::string> result;
  for (int r = 0; r < size_; ++r)
    result.push_back(all.substr(static_cast<size_t>(offsets[static_cast<size_t>(r)]),
                                static_cast<size_t>(lengths[static_cast<size_t>(r)])));
  return result;
}

void MpiSession::abort(int code) {
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);
}

}  // namespace nccltune
