#include "mnnvl_domains.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace nccltune::fake {

bool p2p_disabled(const NcclEnv& env) {
  // ncclGetLevel: NCCL_P2P_DISABLE read by strtol, only 1 disabling; else NCCL_P2P_LEVEL.
  if (const auto disable = env.find("NCCL_P2P_DISABLE"); disable != env.end())
    if (std::strtol(disable->second.c_str(), nullptr, 0) == 1) return true;
  const auto level = env.find("NCCL_P2P_LEVEL");
  return level != env.end() && normalized_value("NCCL_P2P_LEVEL", level->second) == "LOC";
}

bool mnnvl_checked(const NcclEnv& env, bool several_hosts) {
  const long enable = integer_variable(env, "NCCL_MNNVL_ENABLE").value_or(2);
  return (several_hosts && enable != 0 && !p2p_disabled(env)) || enable == 1;
}

NcclNodeKeys nccl_node_keys(const std::vector<std::string>& host_of_rank, const std::vector<int>& host_index,
                            int rank, const std::optional<MnnvlModel>& fabric, const NcclEnv& env) {
  NcclNodeKeys keys;
  for (const std::string& host : host_of_rank) keys.node_of_rank.push_back("host " + host);
  if (!fabric) return keys;
  keys.mnnvl.fabric = true;
  const auto me = static_cast<std::size_t>(rank);
  const bool several_hosts = std::any_of(host_of_rank.begin(), host_of_rank.end(),
                                         [&](const std::string& host) { return host != host_of_rank[me]; });
  std::vector<int> domain_of_rank;
  for (const int index : host_index) domain_of_rank.push_back(index / fabric->hosts_per_domain);
  keys.mnnvl.domain = domain_of_rank[me];
  if (!mnnvl_checked(env, several_hosts)) return keys;
  for (std::size_t r = 0; r < domain_of_rank.size(); ++r) {
    if (domain_of_rank[r] != keys.mnnvl.domain) continue;
    if (r < me) ++keys.mnnvl.clique_rank;
    ++keys.mnnvl.clique_size;
  }
  // A rank alone in its domain keeps MNNVL off; it is alone on its host too, so grouping every
  // rank by domain still gives NCCL's nodes.
  keys.mnnvl.enabled = keys.mnnvl.clique_size > 1;
  for (std::size_t r = 0; r < domain_of_rank.size(); ++r)
    keys.node_of_rank[r] = "domain " + std::to_string(domain_of_rank[r]);
  return keys;
}

std::string domain_layout_problem(const MnnvlModel& fabric, const std::string& file, int emulated_hosts) {
  if (emulated_hosts % fabric.hosts_per_domain == 0) return "";
  return file + ": mnnvl.hosts_per_domain " + std::to_string(fabric.hosts_per_domain) + " does not divide the " +
         std::to_string(emulated_hosts) + " emulated hosts (NCCLTUNE_EMULATE_NODES): every NVLink domain must be whole";
}

std::string fabric_uuid(int domain) {
  char text[40];
  std::snprintf(text, sizeof text, "%lx.%lx", 0x4e564c3732000000ul + static_cast<unsigned long>(domain) + 1,
                0x6661627269630000ul);
  return text;
}

}  // namespace nccltune::fake
