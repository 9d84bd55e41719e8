// The parent's side of one worker process: a ChildProcess (base/child_process.h) leading its own
// process group, with a clean NCCL_* environment plus the trial's variables, commands on its
// stdin and events from its fd 3, read with timeouts; ended with TERM then KILL, always reaped.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/child_process.h"
#include "base/result.h"
#include "base/status.h"
#include "collectives/worker_protocol.h"

namespace nccltune {

// The parent's environment without any NCCL_* variable, plus `trial` (which may set NCCL_*).
std::vector<std::string> worker_environment(const char* const* parent_env,
                                            const std::map<std::string, std::string>& trial);

// The worker's command line before its own arguments: the lean `nccltune-worker` installed beside
// the running binary (fewer libraries to load, so cheaper trials), else the running binary itself
// with the `worker` subcommand.
std::vector<std::string> installed_worker_command();

// nccltune's tuner plugin as built or installed with this program: libnccl-tuner-nccltune.so next
// to it (the build tree) or in ../lib (an install prefix); "" when neither exists.
std::string installed_tuner_plugin();

class WorkerProcess {
 public:
  // Starts `argv` (argv[0] is the executable path) with `env`.
  static Result<WorkerProcess> spawn(const std::vector<std::string>& argv,
                                     const std::vector<std::string>& env);

  WorkerProcess(WorkerProcess&& other) noexcept;
  WorkerProcess& operator=(WorkerProcess&&) = delete;
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;
  ~WorkerProcess();  // closes the pipes; the child ends and is reaped with `child_`

  pid_t pid() const { return child_.pid(); }
  Status send(const nlohmann::json& command);

  struct Next {
    enum class Kind { event, timeout, closed, malformed };
    Kind kind = Kind::closed;
    WorkerEvent event;
    std::string error;
  };
  // The next event, waiting at most `timeout`.
  Next next_event(std::chrono::milliseconds timeout);

  // Closes its stdin, waits up to `grace` for the worker to exit by itself, then TERM, then
  // (after `grace` again) KILL; reaps it.
  ChildExit finish(std::chrono::milliseconds grace);
  // TERM now, KILL after `grace`; reaps it.
  ChildExit terminate(std::chrono::milliseconds grace);

 private:
  WorkerProcess(ChildProcess child, int command_fd, int event_fd)
      : child_(std::move(child)), command_fd_(command_fd), event_fd_(event_fd) {}
  void close_fds();

  ChildProcess child_;
  int command_fd_ = -1;
  int event_fd_ = -1;
  std::string buffer_;
};

}  // namespace nccltune
