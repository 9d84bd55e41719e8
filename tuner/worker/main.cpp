// nccltune-worker: the lean worker executable (collectives only, no MPI, hwloc or CLI), spawned
// once per rank per trial by `nccltune bench` and `nccltune tune`. See collectives/worker.h.
#include "collectives/worker.h"

int main() {
  return nccltune::run_worker_process();
}
