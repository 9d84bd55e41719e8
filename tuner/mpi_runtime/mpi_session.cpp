#include "mpi_runtime/mpi_session.h"

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

// The RankGroup operations on one communicator: the world, or a group split off it (freed with it).
class MpiGroup : public RankGroup {
 public:
  MpiGroup(MPI_Comm comm, bool owned) : comm_(comm), owned_(owned) {
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
  }
  ~MpiGroup() override {
    if (owned_) MPI_Comm_free(&comm_);
  }
  MpiGroup(const MpiGroup&) = delete;
  MpiGroup& operator=(const MpiGroup&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  using RankGroup::broadcast;

  void broadcast(void* data, std::size_t bytes, int root) override {
    MPI_Request request;
    MPI_Ibcast(data, static_cast<int>(bytes), MPI_BYTE, root, comm_, &request);
    wait_quietly(request);
  }
  int max(int value) override { return reduced(value, MPI_MAX); }
  int min(int value) override { return reduced(value, MPI_MIN); }
  void max(std::vector<double>& values) override { reduce(values, MPI_DOUBLE, MPI_MAX); }
  void min(std::vector<double>& values) override { reduce(values, MPI_DOUBLE, MPI_MIN); }
  void sum(std::vector<double>& values) override { reduce(values, MPI_DOUBLE, MPI_SUM); }
  void sum(std::vector<int64_t>& values) override { reduce(values, MPI_INT64_T, MPI_SUM); }

  std::vector<std::string> gather(const std::string& value) override {
    int length = static_cast<int>(value.size());
    std::vector<int> lengths(static_cast<size_t>(size_));
    MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, comm_);
    std::vector<int> offsets(static_cast<size_t>(size_), 0);
    int total = 0;
    for (int r = 0; r < size_; ++r) {
      offsets[static_cast<size_t>(r)] = total;
      total += lengths[static_cast<size_t>(r)];
    }
    std::string all(static_cast<size_t>(total), '\0');
    MPI_Allgatherv(value.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR,
                   comm_);
    std::vector<std::string> result;
    for (int r = 0; r < size_; ++r)
      result.push_back(all.substr(static_cast<size_t>(offsets[static_cast<size_t>(r)]),
                                  static_cast<size_t>(lengths[static_cast<size_t>(r)])));
    return result;
  }

  std::unique_ptr<RankGroup> split(int color) override {
    MPI_Comm part = MPI_COMM_NULL;
    MPI_Comm_split(comm_, color < 0 ? MPI_UNDEFINED : color, rank_, &part);
    if (part == MPI_COMM_NULL) return nullptr;
    return std::make_unique<MpiGroup>(part, true);
  }

 private:
  int reduced(int value, MPI_Op op) {
    allreduce(&value, 1, MPI_INT, op);
    return value;
  }
  template <class T>
  void reduce(std::vector<T>& values, MPI_Datatype type, MPI_Op op) {
    if (!values.empty()) allreduce(values.data(), static_cast<int>(values.size()), type, op);
  }
  void allreduce(void* values, int count, MPI_Datatype type, MPI_Op op) {
    MPI_Request request;
    MPI_Iallreduce(MPI_IN_PLACE, values, count, type, op, comm_, &request);
    wait_quietly(request);
  }

  MPI_Comm comm_;
  bool owned_;
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace

Result<std::unique_ptr<MpiSession>> MpiSession::start(int* argc, char*** argv) {
  // Open MPI puts each rank in a process group of its own: a launcher killed with SIGKILL (by
  // the OOM killer, a lost ssh link, a user) leaves the ranks running until Open MPI notices,
  // holding GPUs and the journal's lock meanwhile. A rank ends with the process that started it.
  const pid_t launcher = getppid();
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (getppid() != launcher) return Error{"the launcher exited before this rank started"};
  if (MPI_Init(argc, argv) != MPI_SUCCESS) return Error{"MPI_Init failed"};
  std::unique_ptr<MpiSession> session(new MpiSession);
  session->world_ = std::make_unique<MpiGroup>(MPI_COMM_WORLD, false);
  session->rank_ = session->world_->rank();
  session->size_ = session->world_->size();
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

void MpiSession::broadcast(void* data, std::size_t bytes, int root) {
  world_->broadcast(data, bytes, root);
}
int MpiSession::max(int value) {
  return world_->max(value);
}
int MpiSession::min(int value) {
  return world_->min(value);
}
void MpiSession::max(std::vector<double>& values) {
  world_->max(values);
}
void MpiSession::min(std::vector<double>& values) {
  world_->min(values);
}
void MpiSession::sum(std::vector<double>& values) {
  world_->sum(values);
}
void MpiSession::sum(std::vector<int64_t>& values) {
  world_->sum(values);
}
std::vector<std::string> MpiSession::gather(const std::string& value) {
  return world_->gather(value);
}
std::unique_ptr<RankGroup> MpiSession::split(int color) {
  return world_->split(color);
}

void MpiSession::abort(int code) {
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);
}

}  // namespace nccltune
