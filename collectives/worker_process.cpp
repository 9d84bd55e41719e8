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

std::string installed_tuner_plugin() {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "";
  for (const std::filesystem::path& dir : {self.parent_path(), self.parent_path().parent_path() / "lib"}) {
    const std::filesystem::path plugin = dir / "libnccl-tuner-nccltune.so";
    if (::access(plugin.c_str(), R_OK) == 0) return plugin.lexically_normal().string();
  }
  return "";
}

Result<WorkerProcess> WorkerProcess::spawn(const std::vector<std::string>& argv,
                                           const std::vector<std::string>& env) {
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
  std::vector<const char*> envp;
  for (const auto& e : env) envp.push_back(e.c_str());
  envp.push_back(nullptr);
  SpawnOptions options;
  options.fds = {{STDIN_FILENO, command_pipe[0]},
                 {STDOUT_FILENO, STDERR_FILENO},  // NCCL logs to stdout: keep it off ours
                 {kWorkerEventFd, event_pipe[1]}};
  options.own_process_group = true;
  Result<ChildProcess> child = ChildProcess::spawn(argv, envp.data(), options);
  ::close(command_pipe[0]);
  ::close(event_pipe[1]);
  if (!child) {
    ::close(command_pipe[1]);
    ::close(event_pipe[0]);
    return Error{"cannot start the worker: " + child.error()};
  }
  return WorkerProcess(std::move(*child), command_pipe[1], event_pipe[0]);
}

WorkerProcess::WorkerProcess(WorkerProcess&& other) noexcept
    : child_(std::move(other.child_)),
      command_fd_(other.command_fd_),
      event_fd_(other.event_fd_),
      buffer_(std::move(other.buffer_)) {
  other.command_fd_ = other.event_fd_ = -1;
}

WorkerProcess::~WorkerProcess() {
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

ChildExit WorkerProcess::terminate(std::chrono::milliseconds grace) {
  const ChildExit exit = child_.terminate(grace, std::chrono::hours(1));
  close_fds();
  return exit;
}

ChildExit WorkerProcess::finish(std::chrono::milliseconds grace) {
  if (command_fd_ >= 0) {
    ::close(command_fd_);  // end of commands: a waiting worker reads EOF
    command_fd_ = -1;
  }
  if (child_.wait_exit(grace)) {
    close_fds();
    return child_.exit();
  }
  return terminate(grace);
}

}  // namespace nccltune
