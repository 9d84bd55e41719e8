// posix_spawn attributes that start a child clean: no signal blocked and every signal at its
// default action. A daemon blocks signals for signalfd and a tuner ignores SIGPIPE; a child
// that inherited either would not die of the TERM or the broken pipe meant to end it.
#pragma once

#include <spawn.h>

namespace nccltune {

class SpawnAttributes {
 public:
  // own_process_group: the child leads a new process group, so that one kill ends what it starts.
  explicit SpawnAttributes(bool own_process_group = false);
  ~SpawnAttributes();
  SpawnAttributes(const SpawnAttributes&) = delete;
  SpawnAttributes& operator=(const SpawnAttributes&) = delete;

  const posix_spawnattr_t* get() const { return &attributes_; }

 private:
  posix_spawnattr_t attributes_;
};

}  // namespace nccltune
