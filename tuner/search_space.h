// The search space: the NCCL_* knobs the tuner may set, their candidate values and the cluster
// shapes they apply to, read from configs/search-space.yaml (schema nccltune/search-space/v1,
// every key documented in configs/README.md). Users add knobs without recompiling.
//
// Parsing is strict: unknown keys, duplicate knobs or values, bad names, values outside the safe
// character set and impossible values for the knobs NCCL documents are errors, each one line
// naming the file, the line and the field ("space.yaml:12: knobs[3].values: empty").
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "result.h"

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
  std::string description;
};

struct SearchSpace {
  std::vector<Knob> knobs;
  std::string origin;  // the file (or name) it was read from
};

// What conditions are evaluated against. 0 in nccl_version / gpu_sm means "unknown": every
// comparison on an unknown fact holds, so the search explores rather than guesses (a value the
// library does not support costs one failed trial).
struct ShapeFacts {
  int nodes = 1;
  int gpus_per_node = 1;
  bool nvswitch = false;
  int nics = 0;          // NICs per node
  int nccl_version = 0;  // NCCL's code, 22809 for 2.28.9
  int gpu_sm = 0;        // 90 for Hopper
};

inline constexpr std::string_view kSearchSpaceSchema = "nccltune/search-space/v1";

Result<SearchSpace> parse_search_space(std::string_view yaml_text, std::string_view origin);
Result<SearchSpace> read_search_space(const std::filesystem::path& file);

// Conditions: `fact OP number` with OP one of >= <= > < == != over the numeric facts nodes,
// gpus_per_node, ranks (nodes x gpus_per_node), nics, nccl (a version: 2.24, 2.24.3 or 22403),
// gpu_sm; or `nvswitch` / `!nvswitch`. Spaces are ignored. Checked at parse time.
std::optional<std::string> condition_problem(std::string_view condition);   // nullopt when valid
bool condition_holds(std::string_view condition, const ShapeFacts& facts);  // invalid: false

// The knob's own `when` all hold and at least one of its values applies.
bool knob_applies(const Knob& knob, const ShapeFacts& facts);
// The value's own conditions (value_when) all hold; the knob's `when` is not looked at.
bool value_applies(const Knob& knob, const std::string& value, const ShapeFacts& facts);
// Only the knobs that apply, each with only the values that apply (value_when kept for them).
SearchSpace prune(const SearchSpace& space, const ShapeFacts& facts);

// The checks shared with profiles and env emission.
// ^NCCL_[A-Z0-9_]+$, at most 128 characters.
bool is_safe_env_name(std::string_view name);
// 1..1024 characters from [A-Za-z0-9_,.:^=+-]: nothing a shell, an env file or a YAML reader
// would read specially.
bool is_safe_env_value(std::string_view value);
inline constexpr std::string_view kSafeValueCharacters = "[A-Za-z0-9_,.:^=+-]";
// What is wrong with `value` for the knob `name` when NCCL documents the knob's values
// (NCCL_ALGO, NCCL_PROTO, *_NCHANNELS, NCCL_NET_GDR_LEVEL, ...); nullopt when it is possible or
// the knob is not one of those. Does not check the safe character set.
std::optional<std::string> knob_value_problem(std::string_view name, std::string_view value);

// Names NCCL reads without case (algorithms, protocols, GDR levels).
bool same_text_ignoring_case(std::string_view a, std::string_view b);

// "2.24" -> 22400, "2.28.9" -> 22809, "22809" -> 22809 (NCCL's code since 2.9).
Result<int> parse_nccl_version(std::string_view text);

}  // namespace nccltune
