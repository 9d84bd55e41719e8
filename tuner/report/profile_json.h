// `nccltune show --format json`: a profile's view (profile_view.h, the model show's text renders
// too) as `nccltune/show/v1` JSON, for scripts that want a profile's gain without parsing text or
// the profile's YAML. The schema is documented in configs/README.md ("show --format json").
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "report/profile_view.h"

namespace nccltune {

inline constexpr std::string_view kShowSchema = "nccltune/show/v1";

// Where the profile came from and who renders it.
struct ShowContext {
  std::string profile;             // the path as given
  std::string generated_by;        // "nccltune 0.3.0"
  std::vector<int> stored_counts;  // the node counts the store holds beside it for this node type
};

// Pretty-printed (two spaces) and ending in a newline. A number the profile does not record
// (NaN, or a size a list does not reach) is null, never invented.
std::string render_profile_json(const ProfileView& view, const ShowContext& context);

}  // namespace nccltune
