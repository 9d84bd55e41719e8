// The search space: the NCCL_* knobs the tuner may set, their candidate values and the cluster
// shapes they apply to, read from configs/search-space.yaml (schema nccltune/search-space/v1,
// every key documented in configs/README.md). Users add knobs without recompiling.
//
// Parsing is strict (base/strict_yaml.h): unknown keys, duplicate knobs or values, bad names, values outside
// the safe character set and impossible values for the knobs NCCL documents are errors, each one line naming
// the file, the line and the field ("space.yaml:12: knobs[3].values: empty").
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "search/shape_condition.h"

namespace nccltune {

// process: NCCL caches the variable once per process; comm: NCCL re-reads it at each
// communicator init (NCCL_ALGO, NCCL_PROTO, NCCL_COLLNET_ENABLE).
enum class KnobScope { process, comm };
std::string_view to_string(KnobScope scope);

struct Knob {
  std::string name;                          // "NCCL_ALGO"; matches ^NCCL_[A-Z0-9_]+$
  std::vector<std::string> values;           // candidates, as env values; never the default
  std::optional<std::string> default_value;  // NCCL's own default, never re-tested as a candidate
  std::vector<std::string> when;             // conditions on the shape, all must hold
  KnobScope scope = KnobScope::process;
  int line = 0;  // where it was defined, for messages
  // Conditions of single values (the map form `{value: NVLS, when: [nvswitch]}`), all must hold
  // for that value to be a candidate. Values without an entry have no condition.
  std::map<std::string, std::vector<std::string>> value_when;
  // A knob that does nothing unless this one is set (NCCL_IB_SPLIT_DATA_ON_QPS acts only with
  // more than one NCCL_IB_QPS_PER_CONNECTION): each value is screened on top of that knob's best
  // screened value, and not at all when none of that knob's values beat the defaults. Names a knob
  // listed before this one; empty for none.
  std::string with;
  std::string description;
};

struct SearchSpace {
  std::vector<Knob> knobs;
  std::string origin;  // the file (or name) it was read from
};

inline constexpr std::string_view kSearchSpaceSchema = "nccltune/search-space/v1";

Result<SearchSpace> parse_search_space(std::string_view yaml_text, std::string_view origin);
// NCCL can act on the knob in this cluster (why_nccl_cannot_act, search/nccl_acts.h), its own
// `when` all hold and at least one of its values applies.
bool knob_applies(const Knob& knob, const ShapeFacts& facts);
// The value's own conditions (value_when) all hold; the knob's `when` is not looked at.
bool value_applies(const Knob& knob, const std::string& value, const ShapeFacts& facts);
// Only the knobs that apply, each with only the values that apply (value_when kept for them); a
// knob whose `with` knob does not apply does not either.
SearchSpace prune(const SearchSpace& space, const ShapeFacts& facts);

}  // namespace nccltune
