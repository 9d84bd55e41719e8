#include "node/job_domains.h"

#include <algorithm>
#include <vector>

#include "profile/profile.h"
#include "profile/profile_store.h"

namespace nccltune {

namespace {

std::string hosts_text(int hosts) {
  return std::to_string(hosts) + (hosts == 1 ? " host" : " hosts");
}

std::string domains_text(int domains) {
  return std::to_string(domains) + (domains == 1 ? " NVLink domain" : " NVLink domains");
}

Result<JobDomains> in_domains(const JobShape& by_host, int domains, const std::string& what, std::string from) {
  Result<JobShape> job = job_in_domains(by_host, domains, what);
  if (!job) return Error{job.error()};
  return JobDomains{*job, by_host.nodes, domains, std::move(from)};
}

}  // namespace

Result<JobDomains> job_domains(const JobShape& by_host, std::string_view key,
                               const std::optional<std::string>& domains, const std::string& what,
                               const std::filesystem::path& key_directory) {
  const JobDomains as_it_is{by_host, 0, 0, ""};
  if (!is_mnnvl_node_type_key(key)) {
    if (domains)
      return Error{what + ": node type " + std::string(key) +
                   " has no multi-node NVLink (no mnnvl in its key): its nodes are hosts"};
    return as_it_is;
  }
  const int hosts = by_host.nodes;
  if (domains) {
    const Result<int> count = parse_job_count(*domains, what, 1);
    if (!count) return Error{count.error()};
    if (hosts == 1 && *count == 1) return as_it_is;
    return in_domains(by_host, *count, what, what);
  }
  if (hosts == 1) return as_it_is;

  const std::vector<StoreFileName> names = stored_profile_names(key_directory);
  std::vector<int> tuned;  // the domain counts tuned for this many hosts
  for (const StoreFileName& name : names)
    if (name.mnnvl() && name.hosts == hosts) tuned.push_back(name.nodes);
  const std::string ask = "; say which with " + what + " N";
  if (tuned.size() == 1)
    return in_domains(by_host, tuned.front(), what,
                      "the only layout tuned for " + hosts_text(hosts));
  if (tuned.size() > 1) {
    std::string counts;
    for (std::size_t i = 0; i < tuned.size(); ++i)
      counts += (i == 0 ? "" : i + 1 == tuned.size() ? " and " : ", ") + std::to_string(tuned[i]);
    return Error{hosts_text(hosts) + " on MNNVL node type " + std::string(key) + ": the store holds profiles of " +
                 counts + " NVLink domains for " + hosts_text(hosts) + ask};
  }
  const std::vector<StoreLayout> layouts = stored_mnnvl_layouts(key_directory);
  if (layouts.empty()) return as_it_is;
  if (layouts.size() == 1 && hosts % layouts.front().hosts_per_node == 0) {
    const int per_domain = layouts.front().hosts_per_node;
    return in_domains(by_host, hosts / per_domain, what,
                      "the only layout tuned: NVLink domains of " + hosts_text(per_domain));
  }
  return Error{hosts_text(hosts) + " on MNNVL node type " + std::string(key) +
               ": no profile for this many hosts, and the store's do not say how many hosts an NVLink domain has" +
               ask};
}

std::string describe_job_domains(const JobDomains& domains, const std::string& what) {
  if (!domains.mnnvl()) return "";
  if (domains.from == what) return hosts_text(domains.hosts) + " in " + domains_text(domains.domains) + " (" + what + ")";
  return hosts_text(domains.hosts) + " taken as " + domains_text(domains.domains) + " (" + domains.from + "), " +
         what + " N says otherwise";
}

}  // namespace nccltune
