// The shape of the job `nccltune env` runs for: node count and GPUs per node, from flags or from
// Slurm's environment (SLURM_JOB_NUM_NODES, SLURM_GPUS_ON_NODE, SLURM_NTASKS_PER_NODE). The
// environment is passed in, never read here, so tests and callers decide what it holds.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>

#include "base/result.h"
#include "profile/profile.h"

namespace nccltune {

// In NCCL's terms: `nodes` is the node count NCCL will see, which on a multi-node NVLink system
// (GB200/GB300 NVL72) is the NVLink domains the job spans, not its hosts.
struct JobShape {
  int nodes = 1;
  std::optional<int> gpus_per_node;  // ranks per node NCCL will see; nullopt when nothing says;
                                     // 0 for a job without GPUs
  // An MNNVL job's hosts (nodes NVLink domains of hosts / nodes hosts each): its profile is
  // <nodes>n<hosts>h.yaml. nullopt: a node is a host (<nodes>n.yaml), or, for a communicator,
  // unknown (the tuner plugin knows only NCCL's counts).
  std::optional<int> hosts = std::nullopt;
  friend bool operator==(const JobShape&, const JobShape&) = default;
};

inline constexpr int kMaxJobCount = 1 << 20;

// A node, GPU or rank count as a launcher or flag gives it: digits only (no sign, no spaces),
// `min`..kMaxJobCount; the error names `what` (the flag or variable).
Result<int> parse_job_count(const std::string& text, const std::string& what, int min);

// The command line's say, as typed (validated here, so that a bad value is one fail-open error
// like any other).
struct JobShapeFlags {
  std::optional<std::string> nodes, gpus_per_node;
};

// Flags win over the environment. Nodes: --nodes, else SLURM_JOB_NUM_NODES; neither is an error.
// GPUs per node: --gpus-per-node, else SLURM_GPUS_ON_NODE, else SLURM_NTASKS_PER_NODE (one rank
// per GPU is how NCCL jobs run), else unknown. Each must be a whole number from 1, except
// SLURM_GPUS_ON_NODE=0 (a job without GPUs: then no profile fits); errors name the flag or
// variable.
Result<JobShape> job_shape(const JobShapeFlags& flags, const std::map<std::string, std::string>& environment);

// The Slurm variables job_shape reads, for callers that copy them out of the process environment.
inline constexpr const char* kJobShapeVariables[] = {"SLURM_JOB_NUM_NODES", "SLURM_GPUS_ON_NODE",
                                                     "SLURM_NTASKS_PER_NODE"};

// A communicator as a job: its node count and ranks per node (0 when its ranks are not spread
// evenly over its nodes, which no profile fits).
JobShape communicator_shape(std::size_t ranks, std::size_t nodes);

// An MNNVL job of `hosts` hosts in `domains` NVLink domains, from the host-counted shape job_shape
// reads (its nodes are the hosts, its GPUs per node per host): NCCL's nodes are the domains, its
// ranks per node the GPUs of a domain's hosts. Errors, naming `what` (--domains,
// NCCLTUNE_DOMAINS): domains above the hosts or not dividing them.
Result<JobShape> job_in_domains(const JobShape& by_host, int domains, const std::string& what);

// A profile fits a job when the job's GPUs per node is unknown or equals the profile's
// shape.gpus_per_node: a profile tuned for 8 ranks per node says nothing reliable about 4.
// Node counts are matched by the store (find_profile), not here.
bool profile_fits_job(const ProfileShape& shape, const JobShape& job);

}  // namespace nccltune
