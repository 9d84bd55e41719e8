// What a profile says, as one model for every renderer of it: `show`'s text and tune's closing
// lines (profile_summary.h), `show --format json` (profile_json.h), the report's overview table
// and per-size tables (report_html.h) and `report --summary` (at_a_glance.h) read the same values
// here, computed once, so they never disagree. Per communicator shape (the world first, then a v3
// profile's rail and node sections; a v2 profile is the world alone) and per collective: the
// speedups against the defaults (geometric mean and best size, the env alone and with the tuner
// plugin), what the plugin serves, each measured size's busbw and choices, where a choice switches
// between measured sizes, the confirmation status and the share of the hardware peak. Values
// only: how they read is each renderer's (and profile_text.h's), so the view depends on none of
// them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "profile/profile.h"

namespace nccltune {

// The measured size where a column gains most over NCCL's defaults, and its ratio.
struct BestSize {
  std::uint64_t bytes = 0;
  double ratio = 0;
};

// One column's gain over NCCL's defaults.
struct SpeedupView {
  double geomean = 1;            // over the objective's sizes, as the tune recorded it
  std::optional<BestSize> best;  // nullopt when no size has both numbers
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
// The same in words, as the report and `report --summary` print it: "not served", "env only".
std::string confirmation_words(Confirmation status);

// One measured size. NaN where the profile does not record a number.
struct SizeView {
  std::uint64_t bytes = 0;
  double defaults_gbps = 0, tuned_gbps = 0, with_plugin_gbps = 0;
  double speedup = 0, with_plugin_speedup = 0;  // against the defaults
  std::optional<double> peak_percent;           // its busbw's share of the hardware peak (percent_of_peak)
  std::optional<SizeChoice> choice;             // the per_size range holding this size
  std::string nccl_chose;  // "RING/LL128" as NCCL's log said (the world only); "" when not shown
};

// Where a per_size choice gives way to the next between two measured sizes (the profile's
// `switches`), and where that falls among the collective's measured sizes.
struct SwitchView {
  SizeSwitch at;
  bool crossing = false;  // the fitted costs cross at at.bytes; else it stays at at.hi, as measured
  // How many of CollectiveView::sizes lie below at.bytes: the per-size table's rows before it.
  std::size_t sizes_below = 0;
  // per_size still changes range at at.bytes (one range ends at bytes - 1, the next starts at
  // bytes); false where the confirmation cut a range back or dropped it since.
  bool in_per_size = true;
};

struct CollectiveView {
  std::string name;                            // nccl-tests name
  const CollectiveProfile* profile = nullptr;  // into the Profile the view was made of
  SpeedupView tuned;                           // the env alone
  std::optional<SpeedupView> with_plugin;      // env + the tuner plugin, where it was confirmed
  double worst_ratio = 1;                      // results.worst_size_ratio
  Confirmation confirmation = Confirmation::env_only;
  std::string reason;
  // The per-size choices the tuner plugin serves for it; empty where the env alone serves it
  // (and for a guard, which is never tuned).
  std::vector<SizeChoice> plugin_choices;
  // NCCL's log showed its own choices on this communicator (the world's, when the tune read the
  // log): the sizes' nccl_chose is what jobs get without the plugin ("" where it showed none).
  bool nccl_logged = false;
  // The hardware peak of this collective on the shape, and the largest size's share of it.
  std::optional<double> peak_gbps, peak_percent;
  std::string peak_bottleneck;  // what bounds it, or why it is unknown
  std::vector<SizeView> sizes;
  std::vector<SwitchView> switches;  // ascending, as the profile records them
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
std::optional<BestSize> best_size(const std::vector<std::uint64_t>& sizes, const std::vector<double>& baseline,
                                  const std::vector<double>& values);

// The confirmation status of one collective and its reason ("" when the profile gives none).
std::pair<Confirmation, std::string> confirmation_of(const Profile& profile,
                                                     const CollectiveProfile& collective);

// `world`: NCCL's own choices (logged on the world communicator) go with the world's sizes only.
CollectiveView view_collective(const Profile& profile, const std::string& name,
                               const CollectiveProfile& collective, bool world);

ProfileView view_profile(const Profile& profile);

// The section as the profile names it: "world: 2 nodes x 8 ranks" (describe_section).
CommunicatorSection section_shape(const SectionView& section);

}  // namespace nccltune
