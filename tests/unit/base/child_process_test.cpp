// base/child_process.h: commands that hang, talk too much or crash end within their limits, and
// nothing is left running or unreaped.
#include "base/child_process.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

using namespace nccltune;
using namespace std::chrono_literals;

extern char** environ;

namespace {

CommandOutput run(const std::vector<std::string>& argv, std::chrono::milliseconds timeout = 5000ms,
                  std::size_t max_output = 1 << 20) {
  CommandOptions options;
  options.timeout = timeout;
  options.max_output = max_output;
  const Result<CommandOutput> output = run_command(argv, environ, options);
  EXPECT_TRUE(output) << output.error();
  return output ? *output : CommandOutput{};
}

// Live (not zombie) processes of process group `group`, from /proc: a killed grandchild stays a
// zombie until init reaps it, and kill(-group, 0) counts zombies.
int live_members(pid_t group) {
  int live = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    std::ifstream stat(entry.path() / "stat");
    std::string line;
    if (!std::getline(stat, line)) continue;
    const std::size_t close = line.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream fields(line.substr(close + 2));
    char state = 0;
    long parent = 0, pgrp = 0;
    fields >> state >> parent >> pgrp;
    if (pgrp == group && state != 'Z') ++live;
  }
  return live;
}

}  // namespace

TEST(ChildProcess, ACommandsOutputAndStatus) {
  const CommandOutput ok = run({"/bin/sh", "-c", "echo hello; echo ignored >&2"});
  EXPECT_EQ(ok.out, "hello\n");
  EXPECT_TRUE(ok.exit.exited_cleanly());
  EXPECT_FALSE(ok.timed_out);
  const CommandOutput failed = run({"/bin/sh", "-c", "exit 3"});
  EXPECT_EQ(failed.exit.describe(), "exited with status 3");
  const CommandOutput crashed = run({"/bin/sh", "-c", "kill -SEGV $$"});
  EXPECT_TRUE(crashed.exit.signaled);
  EXPECT_EQ(crashed.exit.describe(), "killed by signal 11 (Segmentation fault)");
}

TEST(ChildProcess, AHangingCommandIsKilledAtItsTimeout) {
  const auto start = std::chrono::steady_clock::now();
  const CommandOutput hung = run({"/bin/sh", "-c", "echo started; exec sleep 60"}, 300ms);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  EXPECT_TRUE(hung.timed_out);
  EXPECT_TRUE(hung.exit.killed);
  EXPECT_EQ(hung.out, "started\n");
  EXPECT_EQ(::waitpid(-1, nullptr, WNOHANG), -1) << "a child is left";  // ECHILD: none at all
}

TEST(ChildProcess, EndlessOutputIsCutAtTheCap) {
  const CommandOutput flood = run({"/bin/sh", "-c", "exec yes"}, 5000ms, 4096);
  EXPECT_TRUE(flood.timed_out);
  EXPECT_GT(flood.out.size(), 4096u);
  EXPECT_LT(flood.out.size(), 4096u + 65536u);
}

TEST(ChildProcess, AMissingProgramIsAnError) {
  const Result<CommandOutput> missing = run_command({"/nonexistent/program"}, environ, {});
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().find("/nonexistent/program: cannot start it"), std::string::npos)
      << missing.error();
}

TEST(ChildProcess, TerminateEndsTheWholeProcessGroup) {
  SpawnOptions options;
  options.own_process_group = true;
  // The shell ignores TERM and keeps a grandchild; the group's KILL takes both.
  Result<ChildProcess> child =
      ChildProcess::spawn({"/bin/sh", "-c", "trap '' TERM; sleep 60 & wait"}, environ, options);
  ASSERT_TRUE(child) << child.error();
  const pid_t group = child->pid();
  std::this_thread::sleep_for(100ms);
  const ChildExit exit = child->terminate(200ms, 5s);
  EXPECT_TRUE(exit.killed);
  EXPECT_EQ(exit.code, SIGKILL);
  for (int i = 0; i < 50 && live_members(group) > 0; ++i) std::this_thread::sleep_for(20ms);
  EXPECT_EQ(live_members(group), 0) << "the group's sleep is left";
}
