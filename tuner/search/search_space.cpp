#include "search/search_space.h"

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <set>
#include <utility>

#include "base/printable_text.h"
#include "base/strict_yaml.h"
#include "profile/env_names.h"
#include "profile/nccl_names.h"
#include "search/nccl_acts.h"
#include "search/shape_condition.h"

namespace nccltune {
namespace {

// Variables NCCL re-reads at every communicator init.
constexpr std::string_view kCommScopedKnobs[] = {"NCCL_ALGO", "NCCL_PROTO", "NCCL_COLLNET_ENABLE"};

bool same_value(std::string_view knob, std::string_view a, std::string_view b) {
  return is_case_insensitive_knob(knob) ? same_text_ignoring_case(a, b) : a == b;
}

// ---- YAML reading -----------------------------------------------------------------------------

std::string shown(std::string_view text) {
  return printable_excerpt(text, 60);
}

std::string scalar(const YAML::Node& node, int fallback_line, const std::string& field) {
  if (!node.IsScalar())
    yaml_fail(node.IsDefined() ? yaml_line(node) : fallback_line, field, "must be a string");
  return node.Scalar();
}

std::vector<std::string> parse_when(const YAML::Node& node, const std::string& field) {
  std::vector<std::string> conditions;
  auto add = [&](const YAML::Node& item, const std::string& item_field) {
    if (const std::string& tag = item.Tag(); tag.size() > 1 && tag.front() == '!')
      yaml_fail(yaml_line(item), item_field,
                "'" + shown(tag) + "' reads as a YAML tag: write \"" + shown(tag) + "\" in quotes");
    const std::string text = scalar(item, yaml_line(node), item_field);
    if (std::optional<std::string> problem = condition_problem(text))
      yaml_fail(yaml_line(item), item_field, *problem);
    conditions.push_back(text);
  };
  if (node.IsNull()) return conditions;
  if (node.IsScalar()) {
    add(node, field);
  } else if (node.IsSequence()) {
    for (std::size_t i = 0; i < node.size(); ++i) add(node[i], yaml_item(field, i));
  } else {
    yaml_fail(yaml_line(node), field, "must be a condition or a list of conditions");
  }
  return conditions;
}

void check_value(const std::string& knob, const std::string& value, int line, const std::string& field) {
  if (!is_safe_env_value(value)) {
    if (value.empty()) yaml_fail(line, field, "empty value");
    yaml_fail(line, field,
              "'" + shown(value) + "' has characters outside " + std::string(kSafeValueCharacters) +
                  " (or is longer than 1024)");
  }
  if (std::optional<std::string> problem = knob_value_problem(knob, value)) yaml_fail(line, field, *problem);
}

Knob parse_knob(const YAML::Node& node, const std::string& field) {
  if (!node.IsMap()) yaml_fail(yaml_line(node), field, "must be a map with name and values");
  yaml_check_keys(node, field, {"name", "values", "default_value", "when", "scope", "with", "description"});
  Knob knob;
  knob.line = yaml_line(node);

  const YAML::Node name = node["name"];
  if (!name) yaml_fail(knob.line, field + ".name", "missing");
  knob.name = scalar(name, knob.line, field + ".name");
  if (!is_safe_env_name(knob.name))
    yaml_fail(yaml_line(name), field + ".name",
              "'" + shown(knob.name) + "' does not match ^NCCL_[A-Z0-9_]+$");

  if (const YAML::Node default_value = node["default_value"]; default_value && !default_value.IsNull()) {
    knob.default_value = scalar(default_value, knob.line, field + ".default_value");
    check_value(knob.name, *knob.default_value, yaml_line(default_value), field + ".default_value");
  }

  const YAML::Node values = node["values"];
  if (!values) yaml_fail(knob.line, field + ".values", "missing");
  yaml_expect_list(values, field + ".values");
  if (values.size() == 0) yaml_fail(yaml_line(values), field + ".values", "empty");
  std::vector<std::string> all_values;
  for (std::size_t i = 0; i < values.size(); ++i) {
    const YAML::Node item = values[i];
    const std::string item_field = yaml_item(field + ".values", i);
    std::string value;
    std::vector<std::string> conditions;
    if (item.IsMap()) {
      yaml_check_keys(item, item_field, {"value", "when"});
      if (!item["value"]) yaml_fail(yaml_line(item), item_field + ".value", "missing");
      value = scalar(item["value"], yaml_line(item), item_field + ".value");
      if (item["when"]) conditions = parse_when(item["when"], item_field + ".when");
    } else {
      value = scalar(item, yaml_line(values), item_field);
    }
    check_value(knob.name, value, yaml_line(item), item_field);
    for (const std::string& earlier : all_values)
      if (same_value(knob.name, earlier, value))
        yaml_fail(yaml_line(item), item_field, "'" + value + "' is listed twice");
    all_values.push_back(value);
    // NCCL's default is what the baseline measures; it is never a candidate of its own.
    if (knob.default_value && same_value(knob.name, *knob.default_value, value)) continue;
    knob.values.push_back(value);
    if (!conditions.empty()) knob.value_when[value] = std::move(conditions);
  }
  if (knob.values.empty())
    yaml_fail(yaml_line(values), field + ".values",
              "nothing to try besides default_value '" + *knob.default_value + "'");

  if (const YAML::Node when = node["when"]) knob.when = parse_when(when, field + ".when");

  const bool comm_by_default = std::find(std::begin(kCommScopedKnobs), std::end(kCommScopedKnobs),
                                         knob.name) != std::end(kCommScopedKnobs);
  knob.scope = comm_by_default ? KnobScope::comm : KnobScope::process;
  if (const YAML::Node scope = node["scope"]; scope && !scope.IsNull()) {
    const std::string text = scalar(scope, knob.line, field + ".scope");
    if (text == "process")
      knob.scope = KnobScope::process;
    else if (text == "comm")
      knob.scope = KnobScope::comm;
    else
      yaml_fail(yaml_line(scope), field + ".scope", "'" + shown(text) + "' is not process or comm");
  }

  if (const YAML::Node with = node["with"]; with && !with.IsNull())
    knob.with = scalar(with, knob.line, field + ".with");

  if (const YAML::Node description = node["description"]; description && !description.IsNull())
    knob.description = scalar(description, knob.line, field + ".description");
  return knob;
}

SearchSpace parse_document(const YAML::Node& root) {
  if (!root.IsMap()) yaml_fail(yaml_line(root), "", "the document must be a map with schema and knobs");
  yaml_check_keys(root, "", {"schema", "knobs"});
  const YAML::Node schema = root["schema"];
  if (!schema) yaml_fail(1, "schema", "missing (" + std::string(kSearchSpaceSchema) + ")");
  const std::string schema_text = scalar(schema, 1, "schema");
  if (schema_text != kSearchSpaceSchema)
    yaml_fail(yaml_line(schema), "schema",
              "expected '" + std::string(kSearchSpaceSchema) + "', found '" + shown(schema_text) + "'");
  const YAML::Node knobs = root["knobs"];
  if (!knobs) yaml_fail(1, "knobs", "missing");
  yaml_expect_list(knobs, "knobs");
  SearchSpace space;
  std::map<std::string, int> first_line;
  for (std::size_t i = 0; i < knobs.size(); ++i) {
    const std::string field = yaml_item("knobs", i);
    Knob knob = parse_knob(knobs[i], field);
    if (auto [at, inserted] = first_line.emplace(knob.name, knob.line); !inserted)
      yaml_fail(yaml_line(knobs[i]["name"]), field + ".name",
                "duplicate knob '" + knob.name + "' (first at line " + std::to_string(at->second) + ")");
    if (!knob.with.empty()) {
      const auto with = std::find_if(space.knobs.begin(), space.knobs.end(),
                                     [&](const Knob& earlier) { return earlier.name == knob.with; });
      if (with == space.knobs.end())
        yaml_fail(yaml_line(knobs[i]["with"]), field + ".with",
                  "'" + shown(knob.with) + "' is not a knob listed before this one");
      if (!with->with.empty())
        yaml_fail(yaml_line(knobs[i]["with"]), field + ".with",
                  "'" + knob.with + "' itself acts only with '" + with->with + "'");
    }
    space.knobs.push_back(std::move(knob));
  }
  return space;
}

}  // namespace

std::string_view to_string(KnobScope scope) {
  return scope == KnobScope::comm ? "comm" : "process";
}

Result<SearchSpace> parse_search_space(std::string_view yaml_text, std::string_view origin) {
  SearchSpace space;
  const Status parsed =
      parse_strict_yaml(yaml_text, origin, [&](const YAML::Node& root) { space = parse_document(root); });
  if (!parsed) return Error{parsed.error()};
  space.origin = std::string(origin);
  return space;
}

bool value_applies(const Knob& knob, const std::string& value, const ShapeFacts& facts) {
  const auto conditions = knob.value_when.find(value);
  return conditions == knob.value_when.end() || all_conditions_hold(conditions->second, facts);
}

bool knob_applies(const Knob& knob, const ShapeFacts& facts) {
  if (why_nccl_cannot_act(knob.name, facts) || !all_conditions_hold(knob.when, facts)) return false;
  return std::any_of(knob.values.begin(), knob.values.end(),
                     [&](const std::string& value) { return value_applies(knob, value, facts); });
}

SearchSpace prune(const SearchSpace& space, const ShapeFacts& facts) {
  SearchSpace pruned;
  pruned.origin = space.origin;
  for (const Knob& knob : space.knobs) {
    if (!knob_applies(knob, facts)) continue;
    const auto with_kept = [&](const Knob& earlier) { return earlier.name == knob.with; };
    if (!knob.with.empty() && std::none_of(pruned.knobs.begin(), pruned.knobs.end(), with_kept)) continue;
    Knob kept = knob;
    kept.values.clear();
    kept.value_when.clear();
    for (const std::string& value : knob.values) {
      if (!value_applies(knob, value, facts)) continue;
      kept.values.push_back(value);
      if (auto conditions = knob.value_when.find(value); conditions != knob.value_when.end())
        kept.value_when.insert(*conditions);
    }
    pruned.knobs.push_back(std::move(kept));
  }
  return pruned;
}

}  // namespace nccltune
