#include "base/spawn_attributes.h"

#include <signal.h>

namespace nccltune {

SpawnAttributes::SpawnAttributes(bool own_process_group) {
  posix_spawnattr_init(&attributes_);
  short flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
  if (own_process_group) {
    flags |= POSIX_SPAWN_SETPGROUP;
    posix_spawnattr_setpgroup(&attributes_, 0);
  }
  posix_spawnattr_setflags(&attributes_, flags);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attributes_, &none);
  posix_spawnattr_setsigdefault(&attributes_, &all);
}

SpawnAttributes::~SpawnAttributes() {
  posix_spawnattr_destroy(&attributes_);
}

}  // namespace nccltune
