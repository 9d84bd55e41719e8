#include "daemon/observed_network.h"

#include <system_error>

#include "profile/profile_store.h"

namespace nccltune {

std::optional<ObservedNetwork> newest_observed_network(const std::filesystem::path& store,
                                                       std::string_view key, uid_t uid,
                                                       std::vector<std::string>& warnings) {
  std::optional<ObservedNetwork> newest;
  if (!is_valid_node_type_key(key)) return newest;
  std::error_code error;
  for (std::filesystem::directory_iterator it(store / key, error), end; !error && it != end;
       it.increment(error)) {
    const std::optional<int> nodes = profile_file_nodes(it->path().filename().string());
    if (!nodes) continue;
    auto loaded = load_store_profile(store, key, *nodes, true, uid);
    if (!loaded) {
      warnings.push_back(loaded.error());
      continue;
    }
    if (!*loaded) continue;
    const Profile& profile = (*loaded)->profile;
    const NcclObservation* observation = jobs_observation(profile.provenance.nccl_observed);
    // RFC 3339 times in UTC ("...Z", as tune writes them) order as text.
    if (observation == nullptr || (newest && profile.provenance.date <= newest->date)) continue;
    newest = ObservedNetwork{(*loaded)->match.file, profile.provenance.date, *observation};
  }
  return newest;
}

}  // namespace nccltune
