#include "base/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <thread>

#include "base/spawn_attributes.h"

namespace nccltune {

namespace {

using Clock = std::chrono::steady_clock;

// Children that did not die within their reap limit; reaped by a later spawn.
struct Abandoned {
  std::mutex mutex;
  std::vector<pid_t> pids;
};

Abandoned& abandoned() {
  static Abandoned children;
  return children;
}

void reap_abandoned() {
  Abandoned& children = abandoned();
  const std::lock_guard lock(children.mutex);
  std::erase_if(children.pids, [](pid_t pid) { return ::waitpid(pid, nullptr, WNOHANG) != 0; });
}

ChildExit exit_of(int status, bool killed) {
  ChildExit exit;
  exit.signaled = WIFSIGNALED(status);
  exit.code = exit.signaled ? WTERMSIG(status) : WEXITSTATUS(status);
  // Only our TERM or KILL: a child that aborted just before we signalled it ended itself.
  exit.killed = killed && exit.signaled && (exit.code == SIGTERM || exit.code == SIGKILL);
  return exit;
}

}  // namespace

std::string ChildExit::describe() const {
  if (signaled)
    return "killed by signal " + std::to_string(code) + " (" + strsignal(code) + ")" +
           (killed ? ", ended by nccltune" : "");
  return "exited with status " + std::to_string(code);
}

Result<ChildProcess> ChildProcess::spawn(const std::vector<std::string>& argv, const char* const* envp,
                                         const SpawnOptions& options) {
  reap_abandoned();
  if (argv.empty()) return Error{"nothing to run"};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  for (const auto& [child_fd, parent_fd] : options.fds) {
    if (parent_fd < 0)
      posix_spawn_file_actions_addopen(&actions, child_fd, "/dev/null",
                                       child_fd == STDIN_FILENO ? O_RDONLY : O_WRONLY, 0);
    else
      posix_spawn_file_actions_adddup2(&actions, parent_fd, child_fd);  // dup2 clears O_CLOEXEC
  }
  const SpawnAttributes attributes(options.own_process_group);
  std::vector<char*> args;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  char* const* environment = const_cast<char* const*>(envp);
  const int spawned =
      options.search_path
          ? ::posix_spawnp(&pid, argv[0].c_str(), &actions, attributes.get(), args.data(), environment)
          : ::posix_spawn(&pid, argv[0].c_str(), &actions, attributes.get(), args.data(), environment);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) return Error{argv[0] + ": cannot start it: " + std::strerror(spawned)};
  return ChildProcess(pid, options.own_process_group);
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept
    : pid_(other.pid_),
      group_(other.group_),
      reaped_(other.reaped_),
      killed_(other.killed_),
      status_(other.status_) {
  other.pid_ = -1;
  other.reaped_ = true;
}

ChildProcess::~ChildProcess() {
  if (pid_ > 0 && !reaped_) terminate(std::chrono::milliseconds(500), std::chrono::seconds(5));
}

bool ChildProcess::wait_exit(std::chrono::milliseconds timeout) {
  if (reaped_) return true;
  const auto deadline = Clock::now() + timeout;
  while (true) {
    const pid_t done = ::waitpid(pid_, &status_, WNOHANG);
    if (done == pid_ || (done < 0 && errno == ECHILD)) {
      reaped_ = true;
      return true;
    }
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

ChildExit ChildProcess::terminate(std::chrono::milliseconds grace, std::chrono::milliseconds reap_limit) {
  if (!reaped_ && pid_ > 0 && !wait_exit(std::chrono::milliseconds(0))) {
    const pid_t target = group_ ? -pid_ : pid_;  // its process group: what it started goes too
    killed_ = true;
    if (grace.count() > 0) ::kill(target, SIGTERM);
    if (grace.count() == 0 || !wait_exit(grace)) {
      ::kill(target, SIGKILL);
      if (!wait_exit(reap_limit)) {
        Abandoned& children = abandoned();
        const std::lock_guard lock(children.mutex);
        children.pids.push_back(pid_);
        reaped_ = true;     // not ours to wait for any more
        status_ = SIGKILL;  // as WIFSIGNALED reads it: killed
      }
    }
  }
  return exit();
}

ChildExit ChildProcess::exit() const {
  return exit_of(status_, killed_);
}

Result<CommandOutput> run_command(const std::vector<std::string>& argv, const char* const* envp,
                                  const CommandOptions& options) {
  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0) return Error{std::string("cannot make a pipe: ") + std::strerror(errno)};
  SpawnOptions spawn_options;
  spawn_options.search_path = options.search_path;
  if (!options.keep_stdin) spawn_options.fds.emplace_back(STDIN_FILENO, -1);
  spawn_options.fds.emplace_back(STDOUT_FILENO, out[1]);
  if (!options.keep_stderr) spawn_options.fds.emplace_back(STDERR_FILENO, -1);
  Result<ChildProcess> child = ChildProcess::spawn(argv, envp, spawn_options);
  ::close(out[1]);
  if (!child) {
    ::close(out[0]);
    return Error{child.error()};
  }
  CommandOutput result;
  const auto deadline = Clock::now() + options.timeout;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      result.timed_out = true;
      break;
    }
    pollfd readable{out[0], POLLIN, 0};
    const int ready = ::poll(&readable, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;  // the deadline check above ends the wait
    std::array<char, 4096> buffer{};
    const ssize_t n = ::read(out[0], buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // it closed its output
    result.out.append(buffer.data(), static_cast<std::size_t>(n));
    if (result.out.size() > options.max_output) {
      result.timed_out = true;  // not what was asked for: stop it the same way
      break;
    }
  }
  ::close(out[0]);
  const auto left = std::max(std::chrono::milliseconds(0),
                             std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()));
  if (result.timed_out || !child->wait_exit(left)) {
    result.timed_out = true;
    // A process stuck in the kernel dies only when its call returns: wait briefly, never block.
    result.exit = child->terminate(std::chrono::milliseconds(0), std::chrono::seconds(1));
  } else {
    result.exit = child->exit();
  }
  return result;
}

}  // namespace nccltune
