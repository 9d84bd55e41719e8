// The fake model's YAML helpers and the parsers of what acts on a run (conditions, effects,
// faults, noise, the log's facts: fake_model_effects.cpp), shared by fake_model.cpp. Private to
// the fake model.
#pragma once

#include <yaml-cpp/yaml.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/strict_yaml.h"
#include "fake_model.h"
#include "profile/nccl_names.h"

namespace nccltune::fake::model_yaml {

template <std::size_t N>
std::optional<std::string> canonical(std::string_view name, const std::array<std::string_view, N>& names) {
  for (std::string_view known : names)
    if (same_text_ignoring_case(name, known)) return std::string(known);
  return std::nullopt;
}

[[noreturn]] inline void fail(const YAML::Node& node, const std::string& path, const std::string& message) {
  yaml_fail(yaml_line(node), path, message);
}

inline YAML::Node required(const YAML::Node& map, const std::string& path, const char* key) {
  const YAML::Node node = map[key];
  if (!node) yaml_fail(yaml_line(map), yaml_child(path, key), "missing");
  return node;
}

inline int small_integer(const YAML::Node& node, const std::string& path, int64_t min) {
  return static_cast<int>(yaml_integer(node, path, min, int64_t{1} << 30));
}

inline double positive(const YAML::Node& node, const std::string& path) {
  const double value = yaml_number(node, path);
  if (!(value > 0)) fail(node, path, "must be above 0");
  return value;
}

inline double non_negative(const YAML::Node& node, const std::string& path) {
  const double value = yaml_number(node, path);
  if (!(value >= 0)) fail(node, path, "must not be negative");
  return value;
}

// `when`: NCCL_ variables and the values (or lists of values, null: unset) an entry applies under.
Condition parse_condition(const YAML::Node& node, const std::string& path);
std::vector<Effect> parse_effects(const YAML::Node& node, const std::string& path);
std::vector<Fault> parse_faults(const YAML::Node& node, const std::string& path);
Noise parse_noise(const YAML::Node& node, const std::string& path);
NcclLogModel parse_nccl_log(const YAML::Node& node, const std::string& path);

}  // namespace nccltune::fake::model_yaml
