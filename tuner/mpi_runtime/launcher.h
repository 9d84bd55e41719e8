// Whether the launcher that started this rank lets Open MPI start. Under Slurm, `srun --mpi=pmix`
// hands each rank PMIx, which Open MPI needs; plain `srun` (MpiDefault=none) or `--mpi=pmi2` do
// not, and MPI_Init then dies in a 15-line box that names neither srun nor pmix. Checked before
// MPI_Init, from the variables the launchers set.
#pragma once

#include <functional>
#include <optional>
#include <string>

namespace nccltune {

// One line saying what to run instead, or nullopt when the rank can start (mpirun, srun with
// PMIx, or no launcher at all). `variable` reads the environment (std::getenv in production).
std::optional<std::string> launcher_problem(const std::function<const char*(const char*)>& variable);

// Whether this process is the first rank of a launch (or no launch at all): the one that prints
// a usage error, so that it reaches the terminal once rather than once per rank.
bool is_first_rank(const std::function<const char*(const char*)>& variable);

// Both from the process environment. The error, printed by the first rank only, as
// "<command>: <problem>"; true when the command may go on to MPI_Init.
bool check_launcher(const char* command);

}  // namespace nccltune
