#include "search_space.h"

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <set>
#include <utility>

#include "atomic_file.h"
#include "printable_text.h"
#include "strict_yaml.h"
#include "yaml_error.h"

namespace nccltune {
namespace {

constexpr std::array<std::string_view, 7> kAlgoNames = {
    "Ring", "Tree", "CollnetDirect", "CollnetChain", "NVLS", "NVLSTree", "PAT"};
constexpr std::array<std::string_view, 3> kProtoNames = {"LL", "LL128", "Simple"};
constexpr std::array<std::string_view, 5> kGdrLevelNames = {"LOC", "PIX", "PXB", "PHB", "SYS"};
// Variables NCCL reads as 0/1 besides every NCCL_*_DISABLE.
constexpr std::array<std::string_view, 5> kBooleanKnobs = {"NCCL_NET_GDR_READ", "NCCL_COLLNET_ENABLE",
                                                           "NCCL_NET_SHARED_BUFFERS", "NCCL_CUMEM_ENABLE",
                                                           "NCCL_IB_ADAPTIVE_ROUTING"};
// Variables NCCL re-reads at every communicator init.
constexpr std::array<std::string_view, 3> kCommScopedKnobs = {"NCCL_ALGO", "NCCL_PROTO",
                                                              "NCCL_COLLNET_ENABLE"};

template <std::size_t N>
bool is_one_of(std::string_view text, const std::array<std::string_view, N>& names, bool ignore_case) {
  return std::any_of(names.begin(), names.end(), [&](std::string_view name) {
    return ignore_case ? same_text_ignoring_case(text, name) : text == name;
  });
}

template <std::size_t N>
std::string join_names(const std::array<std::string_view, N>& names) {
  std::string out;
  for (std::string_view name : names) out += (out.empty() ? "" : ", ") + std::string(name);
  return out;
}

bool ends_with(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

std::optional<long long> parse_integer(std::string_view text) {
  if (text.empty() || text.size() > 18) return std::nullopt;
  if (!std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  long long value = 0;
  std::from_chars(text.data(), text.data() + text.size(), value);
  return value;
}

// Values whose NCCL spelling is case-insensitive compare without case.
bool case_insensitive_knob(std::string_view name) {
  return name == "NCCL_ALGO" || name == "NCCL_PROTO" || name == "NCCL_NET_GDR_LEVEL";
}

bool same_value(std::string_view knob, std::string_view a, std::string_view b) {
  return case_insensitive_knob(knob) ? same_text_ignoring_case(a, b) : a == b;
}

// "Ring,Tree" or "^NVLS,PAT": a list of names from `names`, optionally excluded.
template <std::size_t N>
std::optional<std::string> name_list_problem(std::string_view name, std::string_view value,
                                             const std::array<std::string_view, N>& names) {
  std::string_view list = value;
  if (!list.empty() && list.front() == '^') list.remove_prefix(1);
  std::set<std::string> seen;
  while (true) {
    const std::size_t comma = list.find(',');
    const std::string_view item = list.substr(0, comma);
    if (!is_one_of(item, names, true))
      return "'" + std::string(value) + "' is not a valid " + std::string(name) + " value (a list of " +
             join_names(names) + ", optionally after ^)";
    std::string lower(item);
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (!seen.insert(lower).second)
      return "'" + std::string(value) + "' names '" + std::string(item) + "' twice";
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return std::nullopt;
}

std::optional<std::string> integer_range_problem(std::string_view name, std::string_view value, long long min,
                                                 long long max) {
  const std::optional<long long> number = parse_integer(value);
  if (!number || *number < min || *number > max)
    return "'" + std::string(value) + "' is not a valid " + std::string(name) + " value (an integer from " +
           std::to_string(min) + " to " + std::to_string(max) + ")";
  return std::nullopt;
}

// ---- conditions -------------------------------------------------------------------------------

enum class Fact { nodes, gpus_per_node, ranks, nics, nccl, gpu_sm, nvswitch };
enum class Op { ge, le, gt, lt, eq, ne, is_true, is_false };

struct Condition {
  Fact fact = Fact::nodes;
  Op op = Op::is_true;
  long long number = 0;
};

constexpr std::string_view kFactNames = "nodes, gpus_per_node, ranks, nics, nccl, gpu_sm, nvswitch";

std::optional<Fact> fact_named(std::string_view name) {
  if (name == "nodes") return Fact::nodes;
  if (name == "gpus_per_node") return Fact::gpus_per_node;
  if (name == "ranks") return Fact::ranks;
  if (name == "nics") return Fact::nics;
  if (name == "nccl") return Fact::nccl;
  if (name == "gpu_sm") return Fact::gpu_sm;
  if (name == "nvswitch") return Fact::nvswitch;
  return std::nullopt;
}

bool is_operator_char(char c) {
  return c == '<' || c == '>' || c == '=' || c == '!';
}

Result<Condition> parse_condition(std::string_view text) {
  std::string compact;
  for (char c : text)
    if (c != ' ' && c != '\t') compact += c;
  const std::string quoted = "'" + std::string(text) + "'";
  if (compact.empty()) return Error{"empty condition"};
  Condition condition;
  if (compact.front() == '!' && compact.find_first_of("<>=", 1) == std::string::npos &&
      compact.find('!', 1) == std::string::npos) {
    const std::optional<Fact> fact = fact_named(std::string_view(compact).substr(1));
    if (!fact)
      return Error{quoted + ": unknown fact '" + compact.substr(1) + "' (" + std::string(kFactNames) + ")"};
    if (*fact != Fact::nvswitch) return Error{quoted + ": only nvswitch can be negated with !"};
    condition.fact = *fact;
    condition.op = Op::is_false;
    return condition;
  }
  const std::size_t op_start = static_cast<std::size_t>(
      std::find_if(compact.begin(), compact.end(), is_operator_char) - compact.begin());
  const std::string name = compact.substr(0, op_start);
  const std::optional<Fact> fact = fact_named(name);
  if (!fact) return Error{quoted + ": unknown fact '" + name + "' (" + std::string(kFactNames) + ")"};
  condition.fact = *fact;
  if (op_start == compact.size()) {
    if (*fact != Fact::nvswitch)
      return Error{quoted + ": '" + name + "' needs a comparison, e.g. " + name + ">1"};
    condition.op = Op::is_true;
    return condition;
  }
  if (*fact == Fact::nvswitch) return Error{quoted + ": nvswitch is written as nvswitch or !nvswitch"};
  std::size_t op_end = op_start;
  while (op_end < compact.size() && is_operator_char(compact[op_end])) ++op_end;
  const std::string op = compact.substr(op_start, op_end - op_start);
  static constexpr std::pair<std::string_view, Op> kOperators[] = {
      {">=", Op::ge}, {"<=", Op::le}, {">", Op::gt}, {"<", Op::lt}, {"==", Op::eq}, {"!=", Op::ne}};
  const auto known = std::find_if(std::begin(kOperators), std::end(kOperators),
                                  [&](const auto& entry) { return entry.first == op; });
  if (known == std::end(kOperators))
    return Error{quoted + ": unknown operator '" + op + "' (>=, <=, >, <, ==, !=)"};
  condition.op = known->second;
  const std::string operand = compact.substr(op_end);
  if (*fact == Fact::nccl) {
    Result<int> version = parse_nccl_version(operand);
    if (!version) return Error{quoted + ": " + version.error()};
    condition.number = *version;
  } else {
    const std::optional<long long> number = parse_integer(operand);
    if (!number) return Error{quoted + ": '" + operand + "' is not a whole number"};
    condition.number = *number;
  }
  return condition;
}

bool evaluate(const Condition& condition, const ShapeFacts& facts) {
  long long actual = 0;
  switch (condition.fact) {
    case Fact::nodes: actual = facts.nodes; break;
    case Fact::gpus_per_node: actual = facts.gpus_per_node; break;
    case Fact::ranks: actual = static_cast<long long>(facts.nodes) * facts.gpus_per_node; break;
    case Fact::nics: actual = facts.nics; break;
    case Fact::nccl: actual = facts.nccl_version; break;
    case Fact::gpu_sm: actual = facts.gpu_sm; break;
    case Fact::nvswitch: return condition.op == Op::is_true ? facts.nvswitch : !facts.nvswitch;
  }
  // Unknown NCCL version or GPU architecture: every comparison holds (explore rather than guess).
  if ((condition.fact == Fact::nccl || condition.fact == Fact::gpu_sm) && actual <= 0) return true;
  switch (condition.op) {
    case Op::ge: return actual >= condition.number;
    case Op::le: return actual <= condition.number;
    case Op::gt: return actual > condition.number;
    case Op::lt: return actual < condition.number;
    case Op::eq: return actual == condition.number;
    case Op::ne: return actual != condition.number;
    case Op::is_true:
    case Op::is_false: return false;
  }
  return false;
}

bool all_hold(const std::vector<std::string>& conditions, const ShapeFacts& facts) {
  return std::all_of(conditions.begin(), conditions.end(),
                     [&](const std::string& condition) { return condition_holds(condition, facts); });
}

// ---- YAML reading -----------------------------------------------------------------------------

std::string shown(std::string_view text) { return printable_excerpt(text, 60); }

std::string scalar(const YAML::Node& node, int fallback_line, const std::string& field) {
  if (!node.IsScalar())
    yaml_fail(node.IsDefined() ? yaml_line(node) : fallback_line, field, "must be a string");
  return node.Scalar();
}

// Every key of `map` is in `allowed` and appears once.
void check_keys(const YAML::Node& map, const std::string& field,
                std::initializer_list<std::string_view> allowed) {
  std::set<std::string> seen;
  for (const auto& entry : map) {
    if (!entry.first.IsScalar()) yaml_fail(yaml_line(entry.first), field, "keys must be strings");
    const std::string key = entry.first.Scalar();
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end())
      yaml_fail(yaml_line(entry.first), field, "unknown key '" + shown(key) + "'");
    if (!seen.insert(key).second) yaml_fail(yaml_line(entry.first), field, "key '" + key + "' appears twice");
  }
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
  check_keys(node, field, {"name", "values", "default_value", "when", "scope", "description"});
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
      check_keys(item, item_field, {"value", "when"});
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

  const bool comm_by_default = is_one_of(knob.name, kCommScopedKnobs, false);
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

  if (const YAML::Node description = node["description"]; description && !description.IsNull())
    knob.description = scalar(description, knob.line, field + ".description");
  return knob;
}

SearchSpace parse_document(const YAML::Node& root) {
  if (!root.IsMap()) yaml_fail(yaml_line(root), "", "the document must be a map with schema and knobs");
  check_keys(root, "", {"schema", "knobs"});
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
    space.knobs.push_back(std::move(knob));
  }
  return space;
}

}  // namespace

bool same_text_ignoring_case(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

std::string_view to_string(KnobScope scope) {
  return scope == KnobScope::comm ? "comm" : "process";
}

Result<SearchSpace> parse_search_space(std::string_view yaml_text, std::string_view origin) {
  const std::string where(origin);
  try {
    const YAML::Node root = YAML::Load(std::string(yaml_text));
    SearchSpace space = parse_document(root);
    space.origin = where;
    return space;
  } catch (const YamlFieldError& error) {
    return Error{where + ":" + std::to_string(std::max(error.line, 1)) + ": " + error.message};
  } catch (const YAML::Exception& error) {
    return Error{yaml_error(where, error)};
  }
}

Result<SearchSpace> read_search_space(const std::filesystem::path& file) {
  Result<std::string> text = read_text_file(file);
  if (!text) return Error{text.error()};
  return parse_search_space(*text, file.string());
}

std::optional<std::string> condition_problem(std::string_view condition) {
  Result<Condition> parsed = parse_condition(condition);
  if (!parsed) return parsed.error();
  return std::nullopt;
}

bool condition_holds(std::string_view condition, const ShapeFacts& facts) {
  Result<Condition> parsed = parse_condition(condition);
  return parsed && evaluate(*parsed, facts);
}

bool value_applies(const Knob& knob, const std::string& value, const ShapeFacts& facts) {
  const auto conditions = knob.value_when.find(value);
  return conditions == knob.value_when.end() || all_hold(conditions->second, facts);
}

bool knob_applies(const Knob& knob, const ShapeFacts& facts) {
  if (!all_hold(knob.when, facts)) return false;
  return std::any_of(knob.values.begin(), knob.values.end(),
                     [&](const std::string& value) { return value_applies(knob, value, facts); });
}

SearchSpace prune(const SearchSpace& space, const ShapeFacts& facts) {
  SearchSpace pruned;
  pruned.origin = space.origin;
  for (const Knob& knob : space.knobs) {
    if (!knob_applies(knob, facts)) continue;
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

bool is_safe_env_name(std::string_view name) {
  if (name.size() <= 5 || name.size() > 128 || name.substr(0, 5) != "NCCL_") return false;
  return std::all_of(name.begin() + 5, name.end(),
                     [](char c) { return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'; });
}

bool is_safe_env_value(std::string_view value) {
  if (value.empty() || value.size() > 1024) return false;
  return std::all_of(value.begin(), value.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
           std::string_view("_,.:^=+-").find(c) != std::string_view::npos;
  });
}

std::optional<std::string> knob_value_problem(std::string_view name, std::string_view value) {
  if (name == "NCCL_ALGO") return name_list_problem(name, value, kAlgoNames);
  if (name == "NCCL_PROTO") return name_list_problem(name, value, kProtoNames);
  if (ends_with(name, "_NCHANNELS")) return integer_range_problem(name, value, 1, 64);
  if (name == "NCCL_NET_GDR_LEVEL") {
    if (is_one_of(value, kGdrLevelNames, true) || (value.size() == 1 && value[0] >= '0' && value[0] <= '5'))
      return std::nullopt;
    return "'" + std::string(value) + "' is not a valid NCCL_NET_GDR_LEVEL value (" +
           join_names(kGdrLevelNames) + " or 0-5)";
  }
  if (name == "NCCL_BUFFSIZE") return integer_range_problem(name, value, 1, 1LL << 40);
  if (name == "NCCL_NTHREADS") {
    if (value == "64" || value == "128" || value == "256" || value == "512") return std::nullopt;
    return "'" + std::string(value) + "' is not a valid NCCL_NTHREADS value (64, 128, 256 or 512)";
  }
  if (name == "NCCL_IB_QPS_PER_CONNECTION") return integer_range_problem(name, value, 1, 128);
  if (name == "NCCL_CROSS_NIC" || name == "NCCL_NVLS_ENABLE") return integer_range_problem(name, value, 0, 2);
  if (ends_with(name, "_DISABLE") || is_one_of(name, kBooleanKnobs, false))
    return integer_range_problem(name, value, 0, 1);
  return std::nullopt;
}

Result<int> parse_nccl_version(std::string_view text) {
  const std::string quoted = "'" + std::string(text) + "'";
  std::vector<long long> parts;
  std::string_view rest = text;
  while (true) {
    const std::size_t dot = rest.find('.');
    const std::optional<long long> part = parse_integer(rest.substr(0, dot));
    if (!part) return Error{quoted + " is not an NCCL version (e.g. 2.24 or 2.28.9)"};
    parts.push_back(*part);
    if (dot == std::string_view::npos) break;
    rest.remove_prefix(dot + 1);
  }
  if (parts.size() == 1 && parts[0] >= 10000 && parts[0] < 1000000) return static_cast<int>(parts[0]);
  if (parts.size() < 2 || parts.size() > 3 || parts[0] < 2 || parts[0] > 99 || parts[1] > 99 ||
      (parts.size() == 3 && parts[2] > 99))
    return Error{quoted + " is not an NCCL version (e.g. 2.24 or 2.28.9)"};
  const long long patch = parts.size() == 3 ? parts[2] : 0;
  // NCCL's code: major*10000 + minor*100 + patch since 2.9, major*1000 + minor*100 + patch before.
  if (parts[0] == 2 && parts[1] < 9) return static_cast<int>(parts[0] * 1000 + parts[1] * 100 + patch);
  return static_cast<int>(parts[0] * 10000 + parts[1] * 100 + patch);
}

}  // namespace nccltune
