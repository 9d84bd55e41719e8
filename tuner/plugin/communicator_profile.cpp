#include "plugin/communicator_profile.h"

#include <cstdlib>
#include <map>
#include <mutex>
#include <string_view>
#include <system_error>
#include <utility>

#include "node/env_config.h"
#include "node/job_domains.h"
#include "node/job_shape.h"
#include "node/node_state.h"
#include "node/profile_for_job.h"
#include "plugin/shape_section.h"

namespace nccltune {
namespace {

std::filesystem::path environment_path(const char* name, std::filesystem::path fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? std::filesystem::path(value) : std::move(fallback);
}

std::string count_text(std::size_t count, const char* one, const char* many) {
  return std::to_string(count) + (count == 1 ? one : many);
}

// "2 nodes, 16 ranks"; "2 nodes" when the ranks per node are unknown.
std::string shape_text(const JobShape& job) {
  const auto nodes = static_cast<std::size_t>(job.nodes);
  if (!job.gpus_per_node) return count_text(nodes, " node", " nodes");
  if (*job.gpus_per_node == 0) return count_text(nodes, " node", " nodes") + " with uneven ranks per node";
  return count_text(nodes, " node, ", " nodes, ") +
         count_text(nodes * static_cast<std::size_t>(*job.gpus_per_node), " rank", " ranks");
}

// " (1 NVLink domain of 16 GPUs on 4 hosts)" for an MNNVL profile: NCCL's node count is not the
// hosts the job runs on, so the line says both; "" for any other profile.
std::string tuned_text(const ProfileShape& shape) {
  return shape.mnnvl ? " (" + describe_profile_shape(shape) + ")" : std::string();
}

// "; withheld (NCCL's own choice stands): A; B", or "" when nothing was.
std::string withheld_text(const std::vector<std::string>& withheld) {
  std::string text;
  for (const std::string& line : withheld)
    text += (text.empty() ? "; withheld (NCCL's own choice stands): " : "; ") + line;
  return text;
}

struct Lookup {
  const char* subject;  // "communicator" (the tuner plugin) or "job" (the env plugin)
  std::optional<std::string> domains;  // the job's NCCLTUNE_DOMAINS
  // The tuner plugin serves a communicator the section of its shape (shape_section.h); the env
  // plugin serves the job's process-wide env, the world's.
  bool by_section = false;
  CommunicatorProfile result;
  void info(std::string text) { result.log.push_back({false, std::move(text)}); }
  void warn(std::string text) {
    result.log.push_back({true, std::move(text) + "; NCCL's own choices stand"});
  }

  // A profile measured with gpus_per_node ranks on each node says nothing about a communicator
  // with another number per node (a tensor-parallel group inside a node, a pipeline stage across
  // nodes): one INFO line and NCCL's own choices.
  void not_fitting(const std::filesystem::path& file, const Profile& profile, const JobShape& job) {
    const ProfileShape& shape = profile.shape;
    info("not using " + file.string() + ": tuned for " +
         count_text(static_cast<std::size_t>(shape.gpus_per_node), " GPU", " GPUs") +
         (shape.mnnvl ? " per NVLink domain (" + describe_profile_shape(shape) + ")" : std::string(" per node")) +
         ", this " +
         subject + " has " + shape_text(job) +
         (profile.shapes.empty() ? "" : " (its shapes: " + measured_shapes_text(profile) + ")") +
         "; NCCL's own choices stand");
  }

  // A communicator of a shape the profile measured apart from the world (a rail, a node) gets that
  // section; false when there is none (the world's rule then decides).
  bool use_section(const Profile& profile, const std::filesystem::path& file, const std::string& source,
                   const JobShape& job) {
    if (!by_section) return false;
    std::optional<ServedSection> section = section_for_communicator(profile, job);
    if (!section) return false;
    info("using " + source + " for " + shape_text(job) + tuned_text(profile.shape) + ", its " + section->label +
         " section");
    use(std::move(section->profile), file);
    return true;
  }

  void use(Profile profile, const std::filesystem::path& file) {
    result.profile = std::move(profile);
    result.file = file;
  }
};

void from_named_file(Lookup& lookup, const std::filesystem::path& file, JobShape job) {
  Result<Profile> profile = read_profile(file);
  if (!profile) return lookup.warn(profile.error());
  if (!lookup.by_section && profile->shape.mnnvl) {
    // A launcher counts hosts; the named MNNVL profile's NVLink domains have host_count() / nodes
    // hosts each, unless NCCLTUNE_DOMAINS says how many domains the job's hosts make.
    const int per_domain = profile->shape.host_count() / profile->shape.nodes;
    if (!lookup.domains && job.nodes % per_domain != 0)
      return lookup.info("not using " + file.string() + ": " + describe_profile_shape(profile->shape) +
                         ", this job has " + std::to_string(job.nodes) +
                         " hosts (NCCLTUNE_DOMAINS says how many NVLink domains they make); NCCL's own choices stand");
    const Result<int> domains =
        lookup.domains ? parse_job_count(*lookup.domains, "NCCLTUNE_DOMAINS", 1) : Result<int>(job.nodes / per_domain);
    if (!domains) return lookup.warn(domains.error());
    Result<JobShape> in = job_in_domains(job, *domains, "NCCLTUNE_DOMAINS");
    if (!in) return lookup.warn(in.error());
    job = *in;
  }
  if (lookup.use_section(*profile, file, file.string() + " (NCCLTUNE_PROFILE)", job)) return;
  if (!profile_fits_job(profile->shape, job)) return lookup.not_fitting(file, *profile, job);
  const auto tuned_nodes = static_cast<std::size_t>(profile->shape.nodes);
  const auto nodes = static_cast<std::size_t>(job.nodes);
  if (tuned_nodes == nodes) {
    lookup.info("using " + file.string() + " (NCCLTUNE_PROFILE) for " + shape_text(job) +
                tuned_text(profile->shape));
    return lookup.use(std::move(*profile), file);
  }
  // Measured at another node count: the serving rule, with that count on one side only.
  const MeasuredCount measured{&*profile, file.string()};
  const bool below = tuned_nodes < nodes;
  ServedProfile served = serve_unmeasured_count(static_cast<int>(nodes), below ? measured : MeasuredCount{},
                                                below ? MeasuredCount{} : measured, below);
  lookup.info("using " + file.string() + " (NCCLTUNE_PROFILE) for " + shape_text(job) + ", tuned for " +
              count_text(tuned_nodes, " node", " nodes") + withheld_text(served.withheld));
  lookup.use(std::move(served.profile), file);
}

void from_store(Lookup& lookup, const ProfileLocations& locations, JobShape job, uid_t caller_uid) {
  Result<EnvConfig> config = read_env_config(locations.config, locations.config_named);
  if (!config) return lookup.warn(config.error());
  const std::filesystem::path store = locations.store.empty() ? config->store : locations.store;

  std::error_code error;
  if (!std::filesystem::exists(locations.node_state, error))
    return lookup.info("no node type: " + locations.node_state.string() +
                       " does not exist (nccltuned writes it; NCCLTUNE_PROFILE names a profile without it)");
  Result<std::string> key = read_node_type_key(locations.node_state);
  if (!key) return lookup.warn(key.error());
  if (!lookup.by_section) {
    // A launcher counts hosts; on an MNNVL node type NCCL counts NVLink domains.
    Result<JobDomains> domains = job_domains(job, *key, lookup.domains, "NCCLTUNE_DOMAINS", store / *key);
    if (!domains) return lookup.warn(domains.error());
    if (domains->mnnvl()) lookup.info(describe_job_domains(*domains, "NCCLTUNE_DOMAINS"));
    job = domains->job;
  }

  // A communicator knows only NCCL's counts: every layout of the node type is weighed (on an
  // MNNVL rack NCCL's node is an NVLink domain of several hosts); a job's env plugin knows its hosts.
  const auto measured_apart = [&job](const Profile& profile) {
    return section_for_communicator(profile, job).has_value();
  };
  Result<ProfileForJob> loaded =
      lookup.by_section ? find_profile_for_communicator(store, *key, job, measured_apart, config->prefer_below,
                                                        caller_uid, ProfileParts::for_jobs)
                        : find_profile_for_job(store, *key, job, config->prefer_below, caller_uid,
                                               ProfileParts::for_jobs);
  if (!loaded) return lookup.warn(loaded.error());
  if (!loaded->stored)
    return lookup.info("no profile for " + *key + " in " + store.string() + " (" + shape_text(job) + ")");
  StoreProfile& found = *loaded->stored;
  if (lookup.use_section(found.profile, found.match.file, found.match.file.string(), job)) return;
  if (!loaded->fits) return lookup.not_fitting(found.match.file, found.profile, job);
  std::string sources;
  for (const std::string& source : loaded->served.sources)
    sources += (sources.empty() ? "" : " and ") + source;
  lookup.info("using " + sources + " for " + shape_text(job) + tuned_text(found.profile.shape) +
              (found.match.exact ? "" : " (the measured node counts around it)") +
              withheld_text(loaded->served.withheld));
  lookup.use(std::move(loaded->served.profile), found.match.file);
}

struct CacheKey {
  ProfileLocations locations;
  std::size_t ranks = 0, nodes = 0;
  uid_t caller_uid = 0;
  auto operator<=>(const CacheKey&) const = default;
};

// One lookup's result; its mutex is held while the lookup runs, so that the other communicators
// of the shape wait for it instead of starting their own.
struct CacheEntry {
  std::mutex mutex;
  std::shared_ptr<const CommunicatorProfile> found;
};

struct Cache {
  std::mutex mutex;  // guards `entries`, never held during a lookup
  std::map<CacheKey, std::shared_ptr<CacheEntry>> entries;
};

Cache& process_cache() {
  static Cache cache;
  return cache;
}

}  // namespace

ProfileLocations profile_locations_from_environment() {
  ProfileLocations locations;
  locations.profile_file = environment_path("NCCLTUNE_PROFILE", {});
  locations.store = environment_path("NCCLTUNE_PROFILES", {});
  locations.config = environment_path("NCCLTUNE_CONFIG", locations.config);
  locations.config_named = locations.config != kDefaultConfigFile;
  locations.node_state = environment_path("NCCLTUNE_NODE_STATE", locations.node_state);
  return locations;
}

namespace {

CommunicatorProfile find_profile(const ProfileLocations& locations, const JobShape& job, uid_t caller_uid,
                                 const char* subject, const std::optional<std::string>& domains = std::nullopt) {
  Lookup lookup{subject, domains, std::string_view(subject) == "communicator", {}};
  if (!locations.profile_file.empty())
    from_named_file(lookup, locations.profile_file, job);
  else
    from_store(lookup, locations, job, caller_uid);
  return std::move(lookup.result);
}

}  // namespace

CommunicatorProfile find_job_profile(const ProfileLocations& locations, const JobShape& job,
                                     uid_t caller_uid, const std::optional<std::string>& domains) {
  return find_profile(locations, job, caller_uid, "job", domains);
}

CommunicatorProfile find_communicator_profile(const ProfileLocations& locations, std::size_t ranks,
                                              std::size_t nodes, uid_t caller_uid) {
  return find_profile(locations, communicator_shape(ranks, nodes), caller_uid, "communicator");
}

CachedCommunicatorProfile cached_communicator_profile(const ProfileLocations& locations, std::size_t ranks,
                                                      std::size_t nodes, uid_t caller_uid) {
  Cache& cache = process_cache();
  std::shared_ptr<CacheEntry> entry;
  {
    const std::lock_guard lock(cache.mutex);
    std::shared_ptr<CacheEntry>& slot = cache.entries[CacheKey{locations, ranks, nodes, caller_uid}];
    if (!slot) slot = std::make_shared<CacheEntry>();
    entry = slot;
  }
  const std::lock_guard lock(entry->mutex);
  if (entry->found) return {entry->found, true};
  entry->found = std::make_shared<const CommunicatorProfile>(
      find_communicator_profile(locations, ranks, nodes, caller_uid));
  return {entry->found, false};
}

}  // namespace nccltune
