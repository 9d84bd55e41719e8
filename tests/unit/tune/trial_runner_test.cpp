// One trial through the real worker process (tuner/trial_runner.h, tuner/worker_process.h): a
// one-rank SoloGroup spawns the built `nccltune worker` on the fake GPU stack, and every way a
// trial can end gives its outcome, with no child process left behind. Also the worker's clean
// NCCL_* environment.
#include "mpi_runtime/trial_runner.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "collectives/worker_process.h"
#include "mpi_runtime/rank_group.h"
#include "test_files.h"
#include "tune/trial_protocol.h"

extern char** environ;

using namespace nccltune;
using namespace std::chrono_literals;
using nccltune::test_support::fixture;
using nccltune::test_support::TempDir;
using nccltune::test_support::write_file;

namespace {

// ---- worker_environment ----

std::vector<std::string> environment(std::vector<const char*> parent,
                                     const std::map<std::string, std::string>& trial) {
  parent.push_back(nullptr);
  return worker_environment(parent.data(), trial);
}

bool has(const std::vector<std::string>& env, const std::string& entry) {
  for (const auto& e : env)
    if (e == entry) return true;
  return false;
}

bool has_name(const std::vector<std::string>& env, const std::string& name) {
  for (const auto& e : env)
    if (e.rfind(name + "=", 0) == 0) return true;
  return false;
}

// ---- trials ----

TrialSpec solo_spec(const std::string& model_file, std::map<std::string, std::string> nccl_env = {}) {
  TrialSpec spec;
  spec.worker_command = {NCCLTUNE_BINARY, "worker"};
  spec.env = std::move(nccl_env);
  spec.env["NCCLTUNE_FAKE_MODEL"] = fixture("models/" + model_file).string();
  spec.env["NCCLTUNE_FAKE_TIMEOUT_S"] = "10";
  WorkerConfig& c = spec.config;
  c.rank = 0;
  c.nranks = 1;
  c.device = 0;
  c.cuda_lib = NCCLTUNE_FAKECUDA;
  c.nccl_lib = NCCLTUNE_FAKENCCL;
  c.collectives = {"all_reduce"};
  c.sweep.min_bytes = 8;
  c.sweep.max_bytes = 4096;
  c.sweep.step_factor = 2;
  c.sweep.iterations = 2;
  c.sweep.warmup = 1;
  c.sweep.check = true;
  spec.init_timeout = 20s;
  spec.size_timeout = 10s;
  return spec;
}

// No child of this process is left, running or unreaped.
::testing::AssertionResult no_child_left() {
  siginfo_t info{};
  const int rc = ::waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT);
  if (rc < 0 && errno == ECHILD) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "a child process remains (pid " << info.si_pid << ")";
}

struct Timed {
  TrialResult result;
  std::chrono::milliseconds elapsed;
};

Timed run_solo(const TrialSpec& spec) {
  SoloGroup group;
  const auto start = std::chrono::steady_clock::now();
  TrialResult result = run_trial(group, spec);
  return {result,
          std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start)};
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST(WorkerEnvironment, StripsEveryNcclVariableOfTheParent) {
  const auto env = environment({"PATH=/usr/bin", "NCCL_ALGO=Tree", "NCCL_PROTO=LL", "NCCL_DEBUG=INFO",
                                "NCCL_IB_HCA==mlx5_0", "NCCL_=odd", "HOME=/root"},
                               {});
  for (const auto& entry : env) EXPECT_NE(entry.rfind("NCCL_", 0), 0u) << entry << " leaked into the worker";
  EXPECT_EQ(env.size(), 2u);
}

TEST(WorkerEnvironment, KeepsOtherVariables) {
  const auto env =
      environment({"PATH=/usr/bin:/bin", "LD_LIBRARY_PATH=/opt/nccl/lib", "CUDA_VISIBLE_DEVICES=0,1",
                   "NCCLTUNE_FAKE_MODEL=/m.yaml", "MY_NCCL_ALGO=keep", "nccl_algo=lower", "EMPTY="},
                  {});
  EXPECT_TRUE(has(env, "PATH=/usr/bin:/bin"));
  EXPECT_TRUE(has(env, "LD_LIBRARY_PATH=/opt/nccl/lib"));
  EXPECT_TRUE(has(env, "CUDA_VISIBLE_DEVICES=0,1"));
  EXPECT_TRUE(has(env, "NCCLTUNE_FAKE_MODEL=/m.yaml"));  // NCCLTUNE_ is not NCCL_
  EXPECT_TRUE(has(env, "MY_NCCL_ALGO=keep"));
  EXPECT_TRUE(has(env, "nccl_algo=lower"));
  EXPECT_TRUE(has(env, "EMPTY="));
  EXPECT_EQ(env.size(), 7u);
}

TEST(WorkerEnvironment, AddsTheTrialVariables) {
  const auto env =
      environment({"PATH=/usr/bin", "NCCL_ALGO=Tree", "NCCL_MIN_NCHANNELS=4", "OMP_NUM_THREADS=8"},
                  {{"NCCL_ALGO", "Ring"}, {"NCCL_PROTO", "Simple"}, {"OMP_NUM_THREADS", "1"}});
  EXPECT_TRUE(has(env, "NCCL_ALGO=Ring"));
  EXPECT_FALSE(has(env, "NCCL_ALGO=Tree"));
  EXPECT_TRUE(has(env, "NCCL_PROTO=Simple"));
  EXPECT_FALSE(has_name(env, "NCCL_MIN_NCHANNELS"));  // the parent's, not the trial's
  EXPECT_TRUE(has(env, "OMP_NUM_THREADS=1"));         // the trial's value wins, once
  EXPECT_FALSE(has(env, "OMP_NUM_THREADS=8"));
  EXPECT_TRUE(has(env, "PATH=/usr/bin"));
  EXPECT_EQ(env.size(), 4u);
}

TEST(WorkerEnvironment, EmptyParent) {
  const auto env = environment({}, {{"NCCL_ALGO", "Ring"}});
  EXPECT_EQ(env, std::vector<std::string>{"NCCL_ALGO=Ring"});
  EXPECT_TRUE(worker_environment(nullptr, {}).empty());
}

TEST(TrialRunner, OutcomeNames) {
  EXPECT_EQ(to_string(TrialOutcome::ok), "ok");
  EXPECT_EQ(to_string(TrialOutcome::wrong_data), "wrong_data");
  EXPECT_EQ(to_string(TrialOutcome::timeout), "timeout");
  EXPECT_EQ(to_string(TrialOutcome::init_error), "init_error");
  EXPECT_EQ(to_string(TrialOutcome::crash), "crash");
}

TEST(TrialRunner, OkThroughTheRealWorker) {
  const Timed run = run_solo(solo_spec("exact.yaml"));
  const TrialResult& r = run.result;
  EXPECT_EQ(r.outcome, TrialOutcome::ok) << r.reason;
  EXPECT_EQ(r.nccl_version, 22809);
  EXPECT_GT(r.cuda_driver, 0);
  EXPECT_EQ(r.device.name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(r.device.pci, "0000:18:00.0");
  ASSERT_EQ(r.sizes.size(), 10u);  // 8 .. 4096, doubling
  std::size_t bytes = 8;
  for (const auto& s : r.sizes) {
    EXPECT_EQ(s.bytes, bytes);
    EXPECT_EQ(s.count, bytes / 4);
    // One rank: the bus factor is 0, so an op costs the latency of the model's default for
    // small sizes (Tree/LL, 7 us) and nothing else; float event times, hence NEAR.
    EXPECT_NEAR(s.out_of_place_us, 7.0, 1e-3) << bytes;
    ASSERT_TRUE(s.in_place_us.has_value());
    EXPECT_NEAR(*s.in_place_us, 7.0, 1e-3) << bytes;
    EXPECT_EQ(s.out_of_place_wrong, std::optional<int64_t>(0));
    EXPECT_EQ(s.in_place_wrong, std::optional<int64_t>(0));
    bytes *= 2;
  }
  EXPECT_TRUE(no_child_left());
}

TEST(TrialRunner, TrialVariablesReachTheWorkerAndTheParentsDoNot) {
  // fault-init-error.yaml fails init when NCCL_PROTO=LL128. Set in this (parent) process, it
  // must not reach the worker; set in the trial, it must.
  ASSERT_EQ(::setenv("NCCL_PROTO", "LL128", 1), 0);
  const Timed clean = run_solo(solo_spec("fault-init-error.yaml"));
  ::unsetenv("NCCL_PROTO");
  EXPECT_EQ(clean.result.outcome, TrialOutcome::ok) << clean.result.reason;
  EXPECT_TRUE(no_child_left());

  const Timed set = run_solo(solo_spec("fault-init-error.yaml", {{"NCCL_PROTO", "LL128"}}));
  EXPECT_EQ(set.result.outcome, TrialOutcome::init_error) << set.result.reason;
  EXPECT_TRUE(no_child_left());
}

TEST(TrialRunner, InitError) {
  const Timed run = run_solo(solo_spec("fault-init-error.yaml", {{"NCCL_PROTO", "LL128"}}));
  const TrialResult& r = run.result;
  EXPECT_EQ(r.outcome, TrialOutcome::init_error) << r.reason;
  EXPECT_TRUE(contains(r.reason, "rank 0:")) << r.reason;
  EXPECT_TRUE(contains(r.reason, "ncclCommInitRank")) << r.reason;
  EXPECT_TRUE(r.sizes.empty());
  EXPECT_TRUE(no_child_left());
}

TEST(TrialRunner, HangIsATimeout) {
  TrialSpec spec = solo_spec("fault-hang.yaml", {{"NCCL_ALGO", "Tree"}});
  spec.size_timeout = 300ms;
  const Timed run = run_solo(spec);
  const TrialResult& r = run.result;
  EXPECT_EQ(r.outcome, TrialOutcome::timeout) << r.reason;
  EXPECT_TRUE(contains(r.reason, "300 ms")) << r.reason;
  EXPECT_TRUE(r.sizes.empty());
  // The per-size timeout, then TERM (a hung worker dies of it): well under the init timeout.
  EXPECT_LT(run.elapsed, 5000ms);
  EXPECT_TRUE(no_child_left());
}

namespace {

// A stand-in worker: a shell script that never answers, so the init timeout ends it.
class SilentWorker {
 public:
  explicit SilentWorker(const std::string& body)
      : path_((dir_ / "silent-worker").string()), pid_file_((dir_ / "pid").string()) {
    write_file(path_, "#!/bin/sh\necho $$ >" + pid_file_ + "\n" + body + "\n");
    ::chmod(path_.c_str(), 0755);
  }
  const std::string& path() const { return path_; }
  pid_t pid() const {
    pid_t pid = -1;
    std::ifstream(pid_file_) >> pid;
    return pid;
  }

 private:
  TempDir dir_{"nccltune-trial-test"};
  std::string path_, pid_file_;
};

// Live (not zombie) processes of process group `group`, from /proc: a grandchild killed with
// the group is reaped by init, which some containers' init never does.
std::vector<pid_t> live_members(pid_t group) {
  std::vector<pid_t> members;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    std::ifstream stat(entry.path() / "stat");
    std::string line;
    if (!std::getline(stat, line)) continue;
    const auto close = line.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream fields(line.substr(close + 1));
    char state = 0;
    pid_t ppid = 0, pgrp = 0;
    if (!(fields >> state >> ppid >> pgrp)) continue;
    if (pgrp == group && state != 'Z' && state != 'X')
      members.push_back(std::stoi(entry.path().filename().string()));
  }
  return members;
}

// Nothing is left in the process group the worker led (its own children included).
::testing::AssertionResult group_gone(pid_t group) {
  if (group <= 0) return ::testing::AssertionFailure() << "the worker never started";
  std::vector<pid_t> left;
  for (int i = 0; i < 100; ++i) {  // KILL is delivered asynchronously: allow a moment
    left = live_members(group);
    if (left.empty()) return ::testing::AssertionSuccess();
    std::this_thread::sleep_for(10ms);
  }
  return ::testing::AssertionFailure() << "process group " << group << " still has " << left.size()
                                       << " live processes, e.g. " << left.front();
}

}  // namespace

TEST(TrialRunner, InitTimeoutEndsASilentWorker) {
  SilentWorker worker("exec sleep 60");
  TrialSpec spec = solo_spec("exact.yaml");
  spec.worker_command = {worker.path()};
  spec.init_timeout = 300ms;
  const Timed run = run_solo(spec);
  EXPECT_EQ(run.result.outcome, TrialOutcome::timeout) << run.result.reason;
  EXPECT_TRUE(contains(run.result.reason, "300 ms")) << run.result.reason;
  EXPECT_LT(run.elapsed, 5000ms);
  EXPECT_TRUE(no_child_left());
  EXPECT_TRUE(group_gone(worker.pid()));
}

TEST(TrialRunner, AWorkerThatIgnoresTermIsKilledWithItsChildren) {
  // TERM is ignored by the script; its `sleep` children die of it, but the loop starts more.
  SilentWorker worker("trap '' TERM\nwhile :; do sleep 1; done");
  TrialSpec spec = solo_spec("exact.yaml");
  spec.worker_command = {worker.path()};
  spec.init_timeout = 300ms;
  const Timed run = run_solo(spec);
  EXPECT_EQ(run.result.outcome, TrialOutcome::timeout) << run.result.reason;
  EXPECT_LT(run.elapsed, 10000ms);  // init timeout + TERM grace + KILL
  EXPECT_TRUE(no_child_left());
  EXPECT_TRUE(group_gone(worker.pid()));
}

TEST(TrialRunner, Crash) {
  const Timed run = run_solo(solo_spec("fault-crash.yaml", {{"NCCL_PROTO", "LL"}}));
  const TrialResult& r = run.result;
  EXPECT_EQ(r.outcome, TrialOutcome::crash) << r.reason;
  EXPECT_TRUE(contains(r.reason, "died")) << r.reason;
  EXPECT_TRUE(contains(r.reason, "Aborted")) << r.reason;
  // The worker aborted by itself; nccltune did not end it.
  EXPECT_FALSE(contains(r.reason, "ended by nccltune")) << r.reason;
  EXPECT_TRUE(no_child_left());
}

TEST(TrialRunner, CorruptIsWrongData) {
  TrialSpec spec = solo_spec("fault-corrupt.yaml", {{"NCCL_ALGO", "Ring"}, {"NCCL_PROTO", "Simple"}});
  spec.config.sweep.min_bytes = 4096;  // 1024 floats: every 97th is corrupted
  spec.config.sweep.max_bytes = 16384;
  const Timed run = run_solo(spec);
  const TrialResult& r = run.result;
  EXPECT_EQ(r.outcome, TrialOutcome::wrong_data) << r.reason;
  EXPECT_TRUE(contains(r.reason, "wrong elements")) << r.reason;
  ASSERT_EQ(r.sizes.size(), 3u);  // the numbers still come back, disqualified
  int64_t wrong = 0;
  for (const auto& s : r.sizes) wrong += s.out_of_place_wrong.value_or(0) + s.in_place_wrong.value_or(0);
  EXPECT_GT(wrong, 0);
  EXPECT_TRUE(no_child_left());
}

TEST(TrialRunner, SlowRankOfOneRank) {
  // fault-slow-rank.yaml slows rank 1; a one-rank trial is rank 0 and runs at full speed.
  const Timed run = run_solo(solo_spec("fault-slow-rank.yaml"));
  EXPECT_EQ(run.result.outcome, TrialOutcome::ok) << run.result.reason;
  ASSERT_FALSE(run.result.sizes.empty());
  EXPECT_NEAR(run.result.sizes.front().out_of_place_us, 7.0, 1e-3);
  EXPECT_TRUE(no_child_left());
}

TEST(TrialRunner, MissingNcclLibraryIsAnInitErrorNamingThePath) {
  TrialSpec spec = solo_spec("exact.yaml");
  spec.config.nccl_lib = "/nonexistent/dir/libnccl.so.2";
  const Timed run = run_solo(spec);
  EXPECT_EQ(run.result.outcome, TrialOutcome::init_error) << run.result.reason;
  EXPECT_TRUE(contains(run.result.reason, "/nonexistent/dir/libnccl.so.2")) << run.result.reason;
  EXPECT_TRUE(no_child_left());
}

TEST(TrialRunner, MissingCudaLibraryIsAnInitErrorNamingThePath) {
  TrialSpec spec = solo_spec("exact.yaml");
  spec.config.cuda_lib = "/nonexistent/dir/libcuda.so.1";
  const Timed run = run_solo(spec);
  EXPECT_EQ(run.result.outcome, TrialOutcome::init_error) << run.result.reason;
  EXPECT_TRUE(contains(run.result.reason, "/nonexistent/dir/libcuda.so.1")) << run.result.reason;
  EXPECT_TRUE(no_child_left());
}

TEST(TrialRunner, MissingWorkerExecutableIsAnInitError) {
  TrialSpec spec = solo_spec("exact.yaml");
  spec.worker_command = {"/nonexistent/dir/nccltune"};
  const Timed run = run_solo(spec);
  EXPECT_EQ(run.result.outcome, TrialOutcome::init_error) << run.result.reason;
  EXPECT_TRUE(contains(run.result.reason, "/nonexistent/dir/nccltune")) << run.result.reason;
  EXPECT_TRUE(no_child_left());
}

TEST(TrialRunner, EveryCollectiveOnOneRank) {
  for (const char* op : {"all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce", "alltoall"}) {
    TrialSpec spec = solo_spec("exact.yaml");
    spec.config.collectives = {op};
    spec.config.sweep.min_bytes = 1024;
    spec.config.sweep.max_bytes = 4096;
    const Timed run = run_solo(spec);
    EXPECT_EQ(run.result.outcome, TrialOutcome::ok) << op << ": " << run.result.reason;
    EXPECT_EQ(run.result.sizes.size(), 3u) << op;
    EXPECT_TRUE(no_child_left()) << op;
  }
}

TEST(TrialRunner, SeveralCollectivesInOneWorkerRun) {
  TrialSpec spec = solo_spec("exact.yaml");
  spec.config.collectives = {"all_reduce", "all_gather", "reduce_scatter"};
  spec.config.sweep.min_bytes = 1024;
  spec.config.sweep.max_bytes = 4096;
  const Timed run = run_solo(spec);
  ASSERT_EQ(run.result.outcome, TrialOutcome::ok) << run.result.reason;
  ASSERT_EQ(run.result.sizes.size(), 9u);
  ASSERT_EQ(run.result.ops.size(), 9u);
  const std::vector<std::string> ops(run.result.ops.begin(), run.result.ops.end());
  EXPECT_EQ(ops,
            (std::vector<std::string>{"all_reduce", "all_reduce", "all_reduce", "all_gather", "all_gather",
                                      "all_gather", "reduce_scatter", "reduce_scatter", "reduce_scatter"}));
  for (std::size_t i = 0; i < 9; ++i) EXPECT_EQ(run.result.sizes[i].bytes, std::size_t{1024} << (i % 3));
  EXPECT_TRUE(no_child_left());
}

TEST(TrialRunner, AnUnknownCollectiveFailsTheTrialAtLoad) {
  TrialSpec spec = solo_spec("exact.yaml");
  spec.config.collectives = {"all_reduce", "all_to_everyone"};
  const Timed run = run_solo(spec);
  EXPECT_EQ(run.result.outcome, TrialOutcome::init_error) << run.result.reason;
  EXPECT_TRUE(contains(run.result.reason, "all_to_everyone")) << run.result.reason;
  EXPECT_TRUE(no_child_left());
}

TEST(TrialRunner, ConsecutiveTrialsLeaveNothingBehind) {
  // The tuner runs trial after trial in one process: fresh workers each time, all reaped.
  for (int i = 0; i < 3; ++i) {
    TrialSpec spec = solo_spec(i == 1 ? "fault-crash.yaml" : "exact.yaml", {{"NCCL_PROTO", "LL"}});
    spec.config.sweep.max_bytes = 64;
    const Timed run = run_solo(spec);
    EXPECT_EQ(run.result.outcome, i == 1 ? TrialOutcome::crash : TrialOutcome::ok) << run.result.reason;
    EXPECT_TRUE(no_child_left()) << "after trial " << i;
  }
}

// ---- shapes: world, rail and node communicators in one worker ----

namespace {

// One size event of one rank, by communicator.
struct ShapePoint {
  std::string comm, op;
  SizeMeasurement size;
};
struct ShapeRun {
  std::string error;                           // empty: every worker finished
  std::vector<std::vector<ShapePoint>> ranks;  // per rank, its size events in order
  std::vector<int> communicators;              // per rank, from its done event
};

// Four real `nccltune worker` processes as 2 emulated nodes x 2 ranks, driven from this process as
// their parents would (no MPI: the protocol's broadcast of the unique id is a loop here), each
// sweeping all_reduce and all_gather on `comms`.
ShapeRun run_shapes(const std::string& model_path, const std::vector<std::string>& comms) {
  ShapeRun out;
  const std::map<std::string, std::string> env = {{"NCCLTUNE_FAKE_MODEL", model_path},
                                                  {"NCCLTUNE_FAKE_TIMEOUT_S", "20"},
                                                  {"NCCLTUNE_EMULATE_NODES", "2"}};
  std::vector<WorkerProcess> workers;
  for (int rank = 0; rank < 4; ++rank) {
    TrialSpec spec = solo_spec("exact.yaml");
    WorkerConfig& c = spec.config;
    c.rank = rank;
    c.nranks = 4;
    c.device = rank % 2;
    c.node = rank / 2;
    c.nodes = 2;
    c.local_ranks = 2;
    c.comms = comms;
    c.collectives = {"all_reduce", "all_gather"};
    c.sweep.min_bytes = 1024;
    c.sweep.max_bytes = 1 << 20;
    c.sweep.step_factor = 32;
    c.sweep.in_place = false;
    auto worker = WorkerProcess::spawn(spec.worker_command, worker_environment(environ, env));
    if (!worker) return {"spawn: " + worker.error(), {}, {}};
    workers.push_back(std::move(*worker));
    if (auto sent = workers.back().send(worker_config_to_json(c)); !sent) return {sent.error(), {}, {}};
  }
  const auto expect_event = [&](int rank, WorkerEvent::Kind kind) -> std::optional<WorkerEvent> {
    auto next = workers[static_cast<std::size_t>(rank)].next_event(20s);
    if (next.kind == WorkerProcess::Next::Kind::event && next.event.kind == kind) return next.event;
    out.error =
        "rank " + std::to_string(rank) + ": " +
        (next.kind == WorkerProcess::Next::Kind::event ? next.event.message : "no event " + next.error);
    return std::nullopt;
  };
  for (int rank = 0; rank < 4; ++rank)
    if (!expect_event(rank, WorkerEvent::Kind::loaded)) return out;
  const auto id = expect_event(0, WorkerEvent::Kind::unique_id);
  if (!id) return out;
  for (WorkerProcess& worker : workers)
    if (auto sent = worker.send({{"cmd", "init"}, {"id", id->id_hex}}); !sent) return {sent.error(), {}, {}};
  for (int rank = 0; rank < 4; ++rank)
    if (!expect_event(rank, WorkerEvent::Kind::ready)) return out;
  out.ranks.resize(4);
  for (int rank = 0; rank < 4; ++rank) {
    while (true) {
      auto next = workers[static_cast<std::size_t>(rank)].next_event(20s);
      if (next.kind != WorkerProcess::Next::Kind::event || next.event.kind == WorkerEvent::Kind::error) {
        out.error = "rank " + std::to_string(rank) + ": " + next.event.message + next.error;
        return out;
      }
      if (next.event.kind == WorkerEvent::Kind::done) {
        out.communicators.push_back(next.event.communicators);
        break;
      }
      out.ranks[static_cast<std::size_t>(rank)].push_back({next.event.comm, next.event.op, next.event.size});
    }
  }
  for (WorkerProcess& worker : workers) worker.finish(1s);
  return out;
}

}  // namespace

// The rails (color = local rank, key = node) are communicators of 2 ranks on 2 nodes, the nodes
// (color = node, key = local rank) of 2 ranks on 1 node: all_gather's count per rank says each
// has 2 ranks, data is right on each, and each split counts as a communicator.
TEST(TrialRunner, OneWorkerMeasuresWorldRailAndNodeCommunicators) {
  const ShapeRun run = run_shapes(fixture("models/exact.yaml").string(), {"world", "rail", "node"});
  ASSERT_TRUE(run.error.empty()) << run.error;
  EXPECT_EQ(run.communicators, (std::vector<int>{3, 3, 3, 3}));
  const std::vector<std::size_t> sizes = {1024, 32768, 1 << 20};
  for (std::size_t rank = 0; rank < 4; ++rank) {
    SCOPED_TRACE("rank " + std::to_string(rank));
    const std::vector<ShapePoint>& points = run.ranks[rank];
    ASSERT_EQ(points.size(), 3u * 2u * sizes.size());
    std::size_t i = 0;
    for (const char* comm : {"world", "rail", "node"}) {
      const std::size_t nranks = std::string(comm) == "world" ? 4 : 2;
      for (const char* op : {"all_reduce", "all_gather"})
        for (std::size_t bytes : sizes) {
          const ShapePoint& p = points[i++];
          EXPECT_EQ(p.comm, comm);
          EXPECT_EQ(p.op, op);
          EXPECT_EQ(p.size.bytes, bytes);
          EXPECT_EQ(p.size.count, std::string(op) == "all_gather" ? bytes / 4 / nranks : bytes / 4) << comm;
          EXPECT_EQ(p.size.out_of_place_wrong, std::optional<int64_t>(0))
              << comm << " " << op << " " << bytes;
        }
    }
  }
  EXPECT_TRUE(no_child_left());
}

// A model entry for 2 nodes x 1 rank per node (Ring/Simple everywhere) applies to the rails only:
// their small sizes get slower, the
// world (2 x 2) and the nodes (1 x 2) measure as without it.
TEST(TrialRunner, AModelEntryForOneRankPerNodeSlowsOnlyTheRails) {
  const TempDir dir("nccltune-shapes");
  const std::string slow = (dir.path() / "rails-slow.yaml").string();
  std::ifstream in(fixture("models/exact.yaml"));
  std::stringstream text;
  text << in.rdbuf()
       << "nodes: [{min_nodes: 2, ranks_per_node: 1, default: [{algo: Ring, proto: Simple}]}]\n";
  write_file(slow, text.str());
  const ShapeRun base = run_shapes(fixture("models/exact.yaml").string(), {"world", "rail", "node"});
  const ShapeRun slowed = run_shapes(slow, {"world", "rail", "node"});
  ASSERT_TRUE(base.error.empty()) << base.error;
  ASSERT_TRUE(slowed.error.empty()) << slowed.error;
  for (std::size_t rank = 0; rank < 4; ++rank) {
    ASSERT_EQ(base.ranks[rank].size(), slowed.ranks[rank].size());
    for (std::size_t i = 0; i < base.ranks[rank].size(); ++i) {
      const ShapePoint &a = base.ranks[rank][i], &b = slowed.ranks[rank][i];
      SCOPED_TRACE("rank " + std::to_string(rank) + " " + a.comm + " " + a.op + " " +
                   std::to_string(a.size.bytes));
      // Ring/Simple (28 us) instead of Tree/LL (7 us) up to 64 KiB; beyond, the other defaults
      // are close, so only the small sizes say it.
      if (a.comm == "rail" && a.size.bytes <= 65536) {
        EXPECT_GT(b.size.out_of_place_us, 1.5 * a.size.out_of_place_us);
      } else if (a.comm != "rail") {
        EXPECT_NEAR(b.size.out_of_place_us, a.size.out_of_place_us, 1e-3 * a.size.out_of_place_us);
      }
      EXPECT_EQ(b.size.out_of_place_wrong, std::optional<int64_t>(0));
    }
  }
  EXPECT_TRUE(no_child_left());
}

// The world alone: no split, one communicator, events without a "comm" (the world's).
TEST(TrialRunner, TheWorldAloneMakesOneCommunicator) {
  const ShapeRun run = run_shapes(fixture("models/exact.yaml").string(), {"world"});
  ASSERT_TRUE(run.error.empty()) << run.error;
  EXPECT_EQ(run.communicators, (std::vector<int>{1, 1, 1, 1}));
  for (const auto& points : run.ranks) {
    ASSERT_EQ(points.size(), 6u);
    for (const ShapePoint& p : points) EXPECT_EQ(p.comm, "world");
  }
}

// run_trial carries each size's communicator and the worker's count of communicators.
TEST(TrialRunner, ResultNamesEachSizesCommunicator) {
  TrialSpec spec = solo_spec("exact.yaml");
  spec.config.comms = {"world", "node", "rail"};  // one rank: 1 node x 1 rank
  spec.config.nodes = 1;
  spec.config.local_ranks = 1;
  spec.config.sweep.min_bytes = 1024;
  spec.config.sweep.max_bytes = 2048;
  const Timed run = run_solo(spec);
  ASSERT_EQ(run.result.outcome, TrialOutcome::ok) << run.result.reason;
  EXPECT_EQ(run.result.comms, (std::vector<std::string>{"world", "world", "node", "node", "rail", "rail"}));
  EXPECT_EQ(run.result.communicators, 3);
  EXPECT_TRUE(no_child_left());
}

// tune's side: a request's comms reach the worker config with this rank's layout (node, node
// count of the trial, ranks per node), and each point keeps its communicator; a group whose nodes
// cannot split evenly is refused before any worker starts.
TEST(TrialProtocol, ARequestsCommsReachTheWorkerWithTheLayout) {
  SoloGroup group;
  NodeLayout layout;  // one node, one rank
  std::vector<WorkerConfig> seen;
  const TrialRunner runner = [&](RankGroup&, const TrialSpec& spec) {
    seen.push_back(spec.config);
    TrialResult r;
    for (const std::string& comm : spec.config.comms) {
      r.sizes.push_back({});
      r.sizes.back().bytes = 1024;
      r.sizes.back().out_of_place_us = 2;
      r.ops.push_back("all_reduce");
      r.comms.push_back(comm);
    }
    r.communicators = static_cast<int>(spec.config.comms.size());
    return r;
  };
  const JobRanks ranks{group, layout, runner};
  CountGroups groups;
  groups[1].group = group.split(0);
  TrialRequest request;
  request.comms = {"world", "rail", "node"};
  const TrialMeasurement m = lead_trial(ranks, groups, 1, request, nullptr);
  ASSERT_EQ(m.outcome, TrialOutcome::ok) << m.reason;
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].comms, request.comms);
  EXPECT_EQ(seen[0].node, 0);
  EXPECT_EQ(seen[0].nodes, 1);
  EXPECT_EQ(seen[0].local_ranks, 1);
  EXPECT_EQ(m.comms, request.comms);
  EXPECT_TRUE(seen[0].sweep.sizes.empty()) << "the grid, when the request lists no sizes";
  EXPECT_EQ(m.communicators, 3);
  EXPECT_EQ(m.busbw.size(), 3u);

  // The world alone: points without comms, one communicator; listed sizes reach the sweep.
  request.comms = {"world"};
  request.sizes = {1536, 3u << 20};
  const TrialMeasurement world = lead_trial(ranks, groups, 1, request, nullptr);
  EXPECT_EQ(seen.back().sweep.sizes, (std::vector<std::size_t>{1536, 3u << 20}));
  EXPECT_TRUE(world.comms.empty());
  EXPECT_EQ(world.communicators, 1);

  // Two ranks per node in a group of one rank: not whole nodes of one size.
  NodeLayout uneven;
  uneven.local_size = 2;
  const JobRanks uneven_ranks{group, uneven, runner};
  request.comms = {"world", "rail"};
  const TrialMeasurement refused = lead_trial(uneven_ranks, groups, 1, request, nullptr);
  EXPECT_EQ(refused.outcome, TrialOutcome::init_error);
  EXPECT_NE(refused.reason.find("same number of ranks"), std::string::npos) << refused.reason;
  EXPECT_EQ(seen.size(), 2u);  // no third run
}
