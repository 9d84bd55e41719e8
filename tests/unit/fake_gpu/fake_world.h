// Ranks of a fake job in forked processes, for the fake_gpu tests that run communicators across
// processes (comm_split_test.cpp, mnnvl_test.cpp): each rank loads the fake libraries by path,
// takes a device and a stream, runs a body and hands back a report.
#pragma once

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "collectives/cuda_driver.h"
#include "collectives/nccl_library.h"
#include "test_files.h"

namespace nccltune::fake_world {

using test_support::read_file;
using test_support::TempDir;
using test_support::write_file;

using Env = std::vector<std::pair<std::string, std::string>>;

// What a forked rank's body gets: the libraries loaded by path, its device current, a stream,
// the world's id, and the report it hands back to the test.
struct World {
  const CudaDriver& cuda;
  const NcclLibrary& nccl;
  const CudaStream& stream;
  nccl_abi::ncclUniqueId id;
  int rank = 0;
  int nranks = 1;
  std::ostringstream report;

  Result<NcclComm> init() const { return nccl.init_rank(nranks, id, rank); }
};
using Body = std::function<void(World&)>;

// Each rank's report, and how it ended (waitpid's status; -1 if it never did).
struct Outcome {
  std::vector<std::string> reports;
  std::vector<int> statuses;
};

// `nranks` forked ranks: each clears NCCL_* from its environment, sets `env`, loads the fake
// libraries, takes device `rank` (`rank % devices_per_host` when that is above 0, as a launcher
// places ranks on hosts of that many GPUs) and a stream, runs `body` and writes its report to a
// file. The world's id is made here: 128 random bytes, as the fake's ncclGetUniqueId makes it.
// Ranks still running after `seconds` are killed.
inline Outcome run_world(int nranks, const Env& env, const Body& body, double seconds = 90,
                         int devices_per_host = 0) {
  const TempDir dir("nccltune-split-test");
  nccl_abi::ncclUniqueId id{};
  EXPECT_EQ(getrandom(id.internal, sizeof id.internal, 0), static_cast<ssize_t>(sizeof id.internal));
  std::fflush(nullptr);
  std::vector<pid_t> pids;
  for (int rank = 0; rank < nranks; ++rank) {
    const pid_t pid = fork();
    if (pid != 0) {
      pids.push_back(pid);
      continue;
    }
    const rlimit no_core{0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    std::vector<std::string> inherited;
    for (char** entry = environ; *entry; ++entry)
      if (std::strncmp(*entry, "NCCL_", 5) == 0)
        inherited.emplace_back(*entry, std::strchr(*entry, '=') - *entry);
    for (const std::string& name : inherited) unsetenv(name.c_str());
    for (const auto& [name, value] : env) setenv(name.c_str(), value.c_str(), 1);
    const std::filesystem::path report = dir / ("rank" + std::to_string(rank));
    Result<CudaDriver> cuda = CudaDriver::load(NCCLTUNE_FAKECUDA);
    Result<NcclLibrary> nccl = NcclLibrary::load(NCCLTUNE_FAKENCCL);
    if (!cuda || !nccl) {
      write_file(report, "load-error " + (cuda ? nccl.error() : cuda.error()) + "\n");
      _exit(3);
    }
    Result<CudaContext> device = cuda->use_device(devices_per_host > 0 ? rank % devices_per_host : rank);
    Result<CudaStream> stream = cuda->create_stream();
    if (!device || !stream) {
      write_file(report, "device-error " + (device ? stream.error() : device.error()) + "\n");
      _exit(4);
    }
    {
      World world{*cuda, *nccl, *stream, id, rank, nranks, {}};
      body(world);
      write_file(report, world.report.str());
    }
    _exit(0);
  }
  Outcome outcome;
  outcome.statuses.assign(pids.size(), -1);
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(static_cast<int>(seconds * 1000));
  for (std::size_t left = pids.size(); left > 0 && std::chrono::steady_clock::now() < deadline;) {
    left = 0;
    for (std::size_t r = 0; r < pids.size(); ++r) {
      if (outcome.statuses[r] != -1) continue;
      if (waitpid(pids[r], &outcome.statuses[r], WNOHANG) != pids[r]) {
        outcome.statuses[r] = -1;
        ++left;
      }
    }
    if (left > 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  for (std::size_t r = 0; r < pids.size(); ++r) {
    if (outcome.statuses[r] != -1) continue;
    kill(pids[r], SIGKILL);
    waitpid(pids[r], nullptr, 0);
  }
  for (int rank = 0; rank < nranks; ++rank)
    outcome.reports.push_back(read_file(dir / ("rank" + std::to_string(rank))));
  return outcome;
}

inline bool exited_cleanly(int status) {
  return status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// `comm`'s ranks in its own order: an all_gather of each rank's `value` (an int32), real data
// through the fake's segment. "error ..." when a call fails.
inline std::string gathered(const World& w, const NcclComm& comm, int value) {
  Result<DeviceBuffer> send = w.cuda.allocate(sizeof(int));
  Result<DeviceBuffer> receive = w.cuda.allocate(64 * sizeof(int));
  if (!send || !receive) return "error allocate";
  if (!w.cuda.copy_to_device(*send, 0, &value, sizeof value)) return "error copy";
  if (!w.cuda.fill_bytes(*receive, 64 * sizeof(int), 0xff)) return "error fill";  // every int -1
  const NcclApi& api = w.nccl.api();
  Status gathered = w.nccl.check(
      api.ncclAllGather(send->data(), receive->data(), 1, nccl_abi::ncclInt32, comm.get(), w.stream.get()),
      "ncclAllGather");
  if (!gathered) return "error " + gathered.error();
  if (!w.cuda.synchronize(w.stream)) return "error synchronize";
  std::vector<int> values(64, -1);
  if (!w.cuda.copy_to_host(values.data(), *receive, 0, values.size() * sizeof(int))) return "error copy back";
  std::string text;
  for (int v : values) {
    if (v == -1) break;
    text += (text.empty() ? "" : ",") + std::to_string(v);
  }
  return text;
}

inline std::string logs_in(const std::filesystem::path& dir) {
  std::string text;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) text += read_file(entry.path());
  return text;
}

inline std::size_t occurrences(const std::string& text, const std::string& what) {
  std::size_t count = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++count;
  return count;
}

inline std::string test_tuner() {
  return (std::filesystem::path(NCCLTUNE_FAKENCCL).parent_path() / "libfake_test_tuner.so").string();
}

}  // namespace nccltune::fake_world
