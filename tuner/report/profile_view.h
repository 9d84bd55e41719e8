// What a profile says at a glance, as one model for every renderer of it: `show`'s text
// (profile_summary.h) and `show --format json` (profile_json.h) read the same values here, so
// the two never disagree. Per communicator shape (the world first, then a v3 profile's rail and
// node sections; a v2 profile is the world alone) and per collective: the speedups against the
// defaults (geometric mean and best size, the env alone and with the tuner plugin), each measured
// size's busbw and choices, the confirmation status and the share of the hardware peak.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "profile/profile.h"

namespace nccltune {

// One column's gain over NCCL's defaults.
struct SpeedupView {
  double geomean = 1;  // over the objective's sizes, as the tune recorded it
  // The measured size where it gains most, and its ratio; nullopt when no size has both numbers.
  std::optional<std::uint64_t> best_bytes;
  double best_ratio = 0;
};

// What reaches jobs of a collective, and how sure the tune is of it.
enum class Confirmation {
  confirmed,      // the tuner plugin served the per-size choices in fresh workers and they held
  not_served,     // the plugin declined them (reason: its own); they do not ship
  withheld,       // they were slower under the plugin, or nothing beat the defaults: not shipped
  not_confirmed,  // per-size choices the tune did not confirm through the plugin (none loaded)
  env_only,       // no per-size choices: the env alone, confirmed by the A/B rounds
  guard,          // measured against the defaults only, never tuned
};
std::string_view to_string(Confirmation status);  // "confirmed", "not_served", ... as in JSON

// One measured size. NaN where the profile does not record a number.
struct SizeView {
  std::uint64_t bytes = 0;
  double defaults_gbps = 0, tuned_gbps = 0, with_plugin_gbps = 0;
  double speedup = 0, with_plugin_speedup = 0;  // against the defaults
  std::optional<SizeChoice> choice;             // the per_size range holding this size
  std::string nccl_chose;  // "RING/LL128" as NCCL's log said (the world only); "" when not shown
};

struct CollectiveView {
  std::string name;                            // nccl-tests name
  const CollectiveProfile* profile = nullptr;  // into the Profile the view was made of
  SpeedupView tuned;                           // the env alone
  std::optional<SpeedupView> with_plugin;      // env + the tuner plugin, where it was confirmed
  double worst_ratio = 1;                      // results.worst_size_ratio
  Confirmation confirmation = Confirmation::env_only;
  std::string reason;
  // The hardware peak of this collective on the shape, and the largest size's share of it.
  std::optional<double> peak_gbps, peak_percent;
  std::string peak_bottleneck;  // what bounds it, or why it is unknown
  std::vector<SizeView> sizes;
};

struct SectionView {
  CommRole role = CommRole::world;
  int nodes = 1, ranks_per_node = 1;
  std::vector<CollectiveView> collectives;  // by name
};

// Points into `profile`, which must outlive it.
struct ProfileView {
  const Profile* profile = nullptr;
  std::vector<SectionView> sections;  // the world first, then Profile::shapes in order
};

// The per-size gains of `values` over `baseline` at their best: nullopt where none is finite.
std::optional<std::pair<std::uint64_t, double>> best_size(const std::vector<std::uint64_t>& sizes,
                                                          const std::vector<double>& baseline,
                                                          const std::vector<double>& values);

// The confirmation status of one collective and its reason ("" when the profile gives none).
std::pair<Confirmation, std::string> confirmation_of(const Profile& profile,
                                                     const CollectiveProfile& collective);

// `world`: NCCL's own choices (logged on the world communicator) go with the world's sizes only.
CollectiveView view_collective(const Profile& profile, const std::string& name,
                               const CollectiveProfile& collective, bool world);

ProfileView view_profile(const Profile& profile);

}  // namespace nccltune
