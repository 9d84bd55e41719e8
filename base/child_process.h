// Child processes that can neither hang nor outlive the caller unnoticed: started with
// posix_spawn (never fork, which is unsafe after MPI_Init and in threaded programs) with clean
// signals (spawn_attributes.h), waited for with a timeout, ended with TERM and then KILL (the
// whole process group when the child leads one), and always reaped. The one way nccltune starts
// a program: the trial workers, nvidia-smi, and nccltune-env's hand-over to `nccltune env`.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/result.h"

namespace nccltune {

struct ChildExit {
  bool signaled = false;
  int code = 0;         // exit status, or the signal number when signaled
  bool killed = false;  // ended by us (TERM or KILL), not by itself
  bool exited_cleanly() const { return !signaled && code == 0; }
  std::string describe() const;  // "exited with status 2", "killed by signal 11 (Segmentation fault)"
};

struct SpawnOptions {
  // The child's descriptors: {child fd, parent fd}; a parent fd of -1 gives the child /dev/null.
  // Descriptors not named here are not inherited when the parent opened them O_CLOEXEC.
  std::vector<std::pair<int, int>> fds;
  bool own_process_group = false;  // one kill ends whatever it starts
  bool search_path = false;        // argv[0] looked up in PATH (posix_spawnp)
};

class ChildProcess {
 public:
  // `argv[0]` is the program; `envp` a null-terminated environment (environ to inherit).
  static Result<ChildProcess> spawn(const std::vector<std::string>& argv, const char* const* envp,
                                    const SpawnOptions& options);

  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&&) = delete;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ~ChildProcess();  // ends and reaps a child still running (a grace of 500 ms)

  pid_t pid() const { return pid_; }

  // Waits up to `timeout` for the child to exit by itself; true once it is reaped.
  bool wait_exit(std::chrono::milliseconds timeout);
  // TERM now (skipped when `grace` is 0), KILL after `grace`, then waits up to `reap_limit` for
  // the kernel to let it go. A child stuck in the kernel longer (a GPU fallen off the bus) is
  // remembered and reaped by a later spawn, so a long-running daemon collects no zombies.
  ChildExit terminate(std::chrono::milliseconds grace, std::chrono::milliseconds reap_limit);
  // How it ended; meaningful once wait_exit returned true or terminate returned.
  ChildExit exit() const;

 private:
  explicit ChildProcess(pid_t pid, bool group) : pid_(pid), group_(group) {}
  pid_t pid_ = -1;
  bool group_ = false;
  bool reaped_ = false;
  bool killed_ = false;
  int status_ = 0;
};

// What a command printed on stdout within its time, for commands run for their output.
struct CommandOutput {
  std::string out;
  ChildExit exit;
  bool timed_out = false;  // no end within the timeout, or more than max_output: it was killed
};

// Runs `argv` with stdin from /dev/null (or the caller's, when keep_stdin), stdout captured
// (at most `max_output` bytes) and stderr discarded (or the caller's, when keep_stderr). Errors:
// the command could not be started.
struct CommandOptions {
  std::chrono::milliseconds timeout{10000};
  std::size_t max_output = std::size_t{1} << 20;
  bool search_path = false;
  bool keep_stdin = false, keep_stderr = false;
};
Result<CommandOutput> run_command(const std::vector<std::string>& argv, const char* const* envp,
                                  const CommandOptions& options);

}  // namespace nccltune
