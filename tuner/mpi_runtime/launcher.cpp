#include "mpi_runtime/launcher.h"

#include <cstdio>
#include <cstdlib>

namespace nccltune {

std::optional<std::string> launcher_problem(const std::function<const char*(const char*)>& variable) {
  const auto set = [&](const char* name) {
    const char* value = variable(name);
    return value != nullptr && *value != '\0';
  };
  const bool srun_step = set("SLURM_STEP_ID") && set("SLURM_PROCID");
  const bool open_mpi_launched = set("OMPI_COMM_WORLD_SIZE");  // mpirun (also inside an allocation)
  const bool pmix = set("PMIX_RANK");                          // srun --mpi=pmix
  if (!srun_step || open_mpi_launched || pmix) return std::nullopt;
  return std::string(
             "srun started this rank without PMIx, which Open MPI needs: run it as `srun --mpi=pmix ...` ") +
         (set("PMI_RANK") ? "(not --mpi=pmi2) " : "") + "or under mpirun";
}

bool is_first_rank(const std::function<const char*(const char*)>& variable) {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"}) {
    const char* value = variable(name);
    if (value != nullptr && *value != '\0') return std::string(value) == "0";
  }
  return true;
}

bool check_launcher(const char* command) {
  const auto variable = [](const char* name) -> const char* { return std::getenv(name); };
  const std::optional<std::string> problem = launcher_problem(variable);
  if (!problem) return true;
  if (is_first_rank(variable)) std::fprintf(stderr, "%s: %s\n", command, problem->c_str());
  return false;
}

}  // namespace nccltune
