// The worker process: one rank of one trial (`nccltune worker`, spawned by tune and bench).
// It loads the CUDA driver and NCCL named in its config, makes or receives the NCCL unique id,
// runs the size sweep and streams each size back. A worker that hangs or crashes takes only
// itself down; its parent decides the trial's outcome.
#pragma once

namespace nccltune {

// Reads commands from `command_fd` and writes events to `event_fd` (protocol in
// worker_protocol.h). Returns the process exit code: 0 after "done", 1 after an "error".
int run_worker(int command_fd, int event_fd);

// The worker process's main: dies with its parent (so no worker outlives a killed run), then
// run_worker on stdin and fd 3.
int run_worker_process();

}  // namespace nccltune
