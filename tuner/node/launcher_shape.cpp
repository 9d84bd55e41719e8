#include "node/launcher_shape.h"

namespace nccltune {

namespace {

const std::string* launcher_variable(const std::map<std::string, std::string>& environment,
                                     const char* name) {
  const auto found = environment.find(name);
  return found == environment.end() ? nullptr : &found->second;
}

// A launcher that says how many ranks the job has and how many run on this node.
struct RanksAndLocal {
  const char* source;
  const char* ranks;
  const char* local;
};
constexpr RanksAndLocal kRankLaunchers[] = {
    {"torchrun", "WORLD_SIZE", "LOCAL_WORLD_SIZE"},
    {"Open MPI", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_SIZE"},
    {"PMI", "PMI_SIZE", "MPI_LOCALNRANKS"},
};

Result<LauncherShape> from_ranks(const RanksAndLocal& launcher, const std::string& ranks_text,
                                 const std::string& local_text) {
  const Result<int> ranks = parse_job_count(ranks_text, launcher.ranks, 1);
  if (!ranks) return Error{ranks.error()};
  const Result<int> local = parse_job_count(local_text, launcher.local, 1);
  if (!local) return Error{local.error()};
  if (*ranks % *local != 0)
    return Error{std::string(launcher.ranks) + "=" + std::to_string(*ranks) + " is not a multiple of " +
                 launcher.local + "=" + std::to_string(*local) + ": the job's node count is unknown"};
  LauncherShape shape;
  shape.job.nodes = *ranks / *local;
  shape.job.gpus_per_node = *local;
  shape.source = launcher.source;
  return shape;
}

}  // namespace

Result<LauncherShape> launcher_shape(const std::map<std::string, std::string>& environment) {
  if (const std::string* nodes = launcher_variable(environment, "NCCLTUNE_NODES")) {
    LauncherShape shape{{}, "NCCLTUNE_NODES"};
    const Result<int> count = parse_job_count(*nodes, "NCCLTUNE_NODES", 1);
    if (!count) return Error{count.error()};
    shape.job.nodes = *count;
    if (const std::string* gpus = launcher_variable(environment, "NCCLTUNE_GPUS_PER_NODE")) {
      const Result<int> per_node = parse_job_count(*gpus, "NCCLTUNE_GPUS_PER_NODE", 1);
      if (!per_node) return Error{per_node.error()};
      shape.job.gpus_per_node = *per_node;
    }
    return shape;
  }
  if (launcher_variable(environment, "SLURM_JOB_NUM_NODES")) {
    Result<JobShape> job = job_shape({}, environment);
    if (!job) return Error{job.error()};
    return LauncherShape{*job, "Slurm"};
  }
  for (const RanksAndLocal& launcher : kRankLaunchers) {
    const std::string* ranks = launcher_variable(environment, launcher.ranks);
    const std::string* local = launcher_variable(environment, launcher.local);
    if (ranks && local) return from_ranks(launcher, *ranks, *local);
  }
  return Error{
      "no launcher says the job's shape (NCCLTUNE_NODES, SLURM_JOB_NUM_NODES, WORLD_SIZE and "
      "LOCAL_WORLD_SIZE, OMPI_COMM_WORLD_SIZE and OMPI_COMM_WORLD_LOCAL_SIZE, PMI_SIZE and MPI_LOCALNRANKS)"};
}

}  // namespace nccltune
