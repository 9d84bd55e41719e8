#include "node/job_shape.h"

#include <charconv>
#include <system_error>

#include "base/printable_text.h"

namespace nccltune {

namespace {

const std::string* variable(const std::map<std::string, std::string>& environment, const std::string& name) {
  const auto found = environment.find(name);
  return found == environment.end() ? nullptr : &found->second;
}

}  // namespace

Result<int> parse_job_count(const std::string& text, const std::string& what, int min) {
  int value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  const bool digits_only = !text.empty() && text.front() != '-' && text.front() != '+';
  if (!digits_only || ec != std::errc() || end != text.data() + text.size() || value < min ||
      value > kMaxJobCount)
    return Error{what + ": '" + printable_excerpt(text, 40) + "' is not a whole number from " +
                 std::to_string(min)};
  return value;
}

Result<JobShape> job_shape(const JobShapeFlags& flags,
                           const std::map<std::string, std::string>& environment) {
  JobShape job;
  if (flags.nodes) {
    const Result<int> nodes = parse_job_count(*flags.nodes, "--nodes", 1);
    if (!nodes) return Error{nodes.error()};
    job.nodes = *nodes;
  } else if (const std::string* text = variable(environment, "SLURM_JOB_NUM_NODES")) {
    const Result<int> nodes = parse_job_count(*text, "SLURM_JOB_NUM_NODES", 1);
    if (!nodes) return Error{nodes.error()};
    job.nodes = *nodes;
  } else {
    return Error{"the job's node count is unknown: pass --nodes, or run under Slurm (SLURM_JOB_NUM_NODES)"};
  }

  struct Source {
    const char* name;
    const std::string* text;
    int min;
  };
  const Source sources[] = {
      {"--gpus-per-node", flags.gpus_per_node ? &*flags.gpus_per_node : nullptr, 1},
      {"SLURM_GPUS_ON_NODE", variable(environment, "SLURM_GPUS_ON_NODE"), 0},
      {"SLURM_NTASKS_PER_NODE", variable(environment, "SLURM_NTASKS_PER_NODE"), 1},
  };
  for (const Source& source : sources) {
    if (!source.text) continue;
    const Result<int> gpus = parse_job_count(*source.text, source.name, source.min);
    if (!gpus) return Error{gpus.error()};
    job.gpus_per_node = *gpus;
    break;
  }
  return job;
}

JobShape communicator_shape(std::size_t ranks, std::size_t nodes) {
  JobShape job;
  job.nodes = nodes > static_cast<std::size_t>(kMaxJobCount) ? kMaxJobCount : static_cast<int>(nodes);
  const bool even =
      nodes > 0 && ranks % nodes == 0 && ranks / nodes <= static_cast<std::size_t>(kMaxJobCount);
  job.gpus_per_node = even ? static_cast<int>(ranks / nodes) : 0;
  return job;
}

Result<JobShape> job_in_domains(const JobShape& by_host, int domains, const std::string& what) {
  const int hosts = by_host.nodes;
  const std::string host_words = std::to_string(hosts) + (hosts == 1 ? " host" : " hosts");
  if (domains > hosts)
    return Error{what + ": " + std::to_string(domains) + " NVLink domains cannot be made of " + host_words};
  if (hosts % domains != 0)
    return Error{what + ": " + host_words + " do not split into " + std::to_string(domains) +
                 " NVLink domains of as many hosts each"};
  JobShape job;
  job.nodes = domains;
  job.hosts = hosts;
  if (by_host.gpus_per_node) job.gpus_per_node = *by_host.gpus_per_node * (hosts / domains);
  return job;
}

bool profile_fits_job(const ProfileShape& shape, const JobShape& job) {
  return !job.gpus_per_node || *job.gpus_per_node == shape.gpus_per_node;
}

}  // namespace nccltune
