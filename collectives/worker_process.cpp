#include "collectives/worker_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <thread>

#include "base/spawn_attributes.h"

namespace nccltune {

using Clock = std::chrono::steady_clock;

std::vector<std::string> worker_environment(const char* const* parent_env,
                                            const std::map<std::string, std::string>& trial) {
  std::vector<std::string> env;
  for (const char* const* entry = parent_env; entry && *entry; ++entry) {
    std::string_view text(*entry);
    if (text.rfind("NCCL_", 0) == 0) continue;
    const auto name = text.substr(0, text.find('='));
    if (trial.count(std::string(name))) continue;
    env.emplace_back(text);
  }
  for (const auto& [name, value] : trial) env.push_back(name + "=" + value);
  return env;
}

std::vector<std::string> installed_worker_command() {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  const std::filesystem::path lean = self.parent_path() / "nccltune-worker";
  if (!ec && ::access(lean.c_str(), X_OK) == 0) return {lean.string()};
  return {self.string(), "worker"};
}

std::string WorkerExit::describe() const {
  if (signaled) return std::string("killed by signal ") + strsignal(code) + (killed ? " (ended by nccltune)" : "");
  return "exited with status " + std::to_string(code);
}

Result<WorkerProcess> WorkerProcess::spawn(const std::vector<std::string>& argv, const std::vector<std::string>& env) {
  // A worker that dies leaves a broken command pipe; its parent must see EPIPE, not die of SIGPIPE.
  static const bool sigpipe_ignored = std::signal(SIGPIPE, SIG_IGN) != SIG_ERR;
  (void)sigpipe_ignored;
  int command_pipe[2], event_pipe[2];
  if (pipe2(command_pipe, O_CLOEXEC) != 0) return Error{std::string("pipe: ") + std::strerror(errno)};
  if (pipe2(event_pipe, O_CLOEXEC) != 0) {
    ::close(command_pipe[0]);
    ::close(command_pipe[1]);
    return Error{std::string("pipe: ") + std::strerror(errno)};
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, command_pipe[0], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, STDERR_FILENO, STDOUT_FILENO);  // NCCL logs to stdout
  posix_spawn_file_actions_adddup2(&actions, event_pipe[1], kWorkerEventFd);
  const SpawnAttributes attributes(/*own_process_group=*/true);

  std::vector<char*> args, envp;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  for (const auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, argv.at(0).c_str(), &actions, attributes.get(), args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  ::close(command_pipe[0]);
  ::close(event_pipe[1]);
  if (rc != 0) {
    ::close(command_pipe[1]);
    ::close(event_pipe[0]);
    return Error{argv.at(0) + ": cannot start the worker: " + std::strerror(rc)};
  }
  return WorkerProcess(pid, command_pipe[1], event_pipe[0]);
}

WorkerProcess::WorkerProcess(WorkerProcess&& other) noexcept
    : pid_(other.pid_), command_fd_(other.command_fd_), event_fd_(other.event_fd_),
      buffer_(std::move(other.buffer_)), reaped_(other.reaped_), status_(other.status_) {
  other.pid_ = -1;
  other.command_fd_ = other.event_fd_ = -1;
  other.reaped_ = true;
}

WorkerProcess::~WorkerProcess() {
  if (pid_ > 0 && !reaped_) terminate(std::chrono::milliseconds(500));
  close_fds();
}

void WorkerProcess::close_fds() {
  if (command_fd_ >= 0) ::close(command_fd_);
  if (event_fd_ >= 0) ::close(event_fd_);
  command_fd_ = event_fd_ = -1;
}

Status WorkerProcess::send(const nlohmann::json& command) {
  const std::string line = command.dump() + "\n";
  std::string_view rest = line;
  while (!rest.empty()) {
    ssize_t n = ::write(command_fd_, rest.data(), rest.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Error{std::string("cannot write to the worker: ") + std::strerror(errno)};
    rest.remove_prefix(static_cast<size_t>(n));
  }
  return Ok{};
}

WorkerProcess::Next WorkerProcess::next_event(std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  while (true) {
    if (auto newline = buffer_.find('\n'); newline != std::string::npos) {
      const std::string line = buffer_.substr(0, newline);
      buffer_.erase(0, newline + 1);
      auto event = decode_event(line);
      if (!event) return {Next::Kind::malformed, {}, event.error()};
      return {Next::Kind::event, *event, {}};
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return {Next::Kind::timeout, {}, {}};
    pollfd fd{event_fd_, POLLIN, 0};
    const int ready = ::poll(&fd, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) return {Next::Kind::timeout, {}, {}};
    char chunk[4096];
    const ssize_t n = ::read(event_fd_, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return {Next::Kind::closed, {}, {}};
    buffer_.append(chunk, static_cast<size_t>(n));
  }
}

bool WorkerProcess::wait_exit(std::chrono::milliseconds timeout) {
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

WorkerExit WorkerProcess::terminate(std::chrono::milliseconds grace) {
  bool killed = false;
  if (!reaped_ && pid_ > 0 && !wait_exit(std::chrono::milliseconds(0))) {
    ::kill(-pid_, SIGTERM);  // its own process group: anything it started goes too
    killed = true;
    if (!wait_exit(grace)) {
      ::kill(-pid_, SIGKILL);
      wait_exit(std::chrono::hours(1));
    }
  }
  close_fds();
  WorkerExit exit;
  exit.signaled = WIFSIGNALED(status_);
  exit.code = exit.signaled ? WTERMSIG(status_) : WEXITSTATUS(status_);
  // Only our TERM or KILL: a worker that aborted just before we signalled it ended itself.
  exit.killed = killed && exit.signaled && (exit.code == SIGTERM || exit.code == SIGKILL);
  return exit;
}

WorkerExit WorkerProcess::finish(std::chrono::milliseconds grace) {
  if (command_fd_ >= 0) {
    ::close(command_fd_);  // end of commands: a waiting worker reads EOF
    command_fd_ = -1;
  }
  if (wait_exit(grace)) {
    close_fds();
    WorkerExit exit;
    exit.signaled = WIFSIGNALED(status_);
    exit.code = exit.signaled ? WTERMSIG(status_) : WEXITSTATUS(status_);
    return exit;
  }
  return terminate(grace);
}

}  // namespace nccltune
