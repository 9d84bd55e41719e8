// How many nodes NCCL will count for a job on a multi-node NVLink system (GB200/GB300 NVL72:
// is_mnnvl_node_type_key), where NCCL's node is the NVLink domain, not the host: Slurm says the
// hosts (SLURM_JOB_NUM_NODES, --nodes), the profile is stored by NCCL's count
// (<domains>n<hosts>h.yaml). For `nccltune env` (--domains) and the env plugin (NCCLTUNE_DOMAINS).
// Pure but for listing the node type's store directory.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "base/result.h"
#include "node/job_shape.h"

namespace nccltune {

struct JobDomains {
  JobShape job;  // in NCCL's terms: nodes the domains, hosts set (an MNNVL job) when they differ
                 // from nodes or the store's profile says MNNVL
  // For an MNNVL job, what `env` says in a comment and in JSON: the hosts, the domains and how they
  // were known: the flag's or variable's name, or the store ("the only layout tuned for 4 hosts").
  int hosts = 0, domains = 0;
  std::string from;
  bool mnnvl() const { return domains > 0; }
};

// The job `by_host` (job_shape's or launcher_shape's: nodes are hosts, GPUs per node per host) on
// node type `key`, with `domains` as typed (nullopt: not given; `what`: --domains or
// NCCLTUNE_DOMAINS):
// - a key without an mnnvl segment: the job as it is (domains given: an error, the node type has
//   no multi-node NVLink);
// - one host: the job as it is (NCCL does not use MNNVL inside one host);
// - domains given: a whole number from 1 that divides the hosts (job_in_domains);
// - else the store's MNNVL profiles for this many hosts (<N>n<hosts>h.yaml in `key_directory`):
//   one domain count, that one; several, an error asking for `what`; none, the store's one layout
//   (hosts per domain) when there is exactly one and it divides the hosts; several, an error
//   asking for `what`; no MNNVL profile at all, the job as it is (the host-counted lookup then
//   says what the store holds).
Result<JobDomains> job_domains(const JobShape& by_host, std::string_view key,
                               const std::optional<std::string>& domains, const std::string& what,
                               const std::filesystem::path& key_directory);

// "4 hosts taken as 1 NVLink domain (the only layout tuned for 4 hosts), --domains N says
// otherwise"; "4 hosts in 2 NVLink domains (--domains)"; "" for a job that is not MNNVL.
std::string describe_job_domains(const JobDomains& domains, const std::string& what);

}  // namespace nccltune
