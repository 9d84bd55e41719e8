// Reading a profile: the strict YAML reader of profile.h's model (every field checked, one error
// naming the line and the field), and parse_profile / read_profile over it.
#include "profile/profile.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <optional>
#include <utility>

#include "base/atomic_file.h"
#include "base/printable_text.h"
#include "base/strict_yaml.h"
#include "base/utf8.h"
#include "profile/env_names.h"
#include "profile/nccl_names.h"
#include "profile/profile_fields.h"

namespace nccltune {
namespace {

using namespace profile_fields;

int small_integer(const YAML::Node& node, const std::string& field, int min) {
  return static_cast<int>(yaml_integer(node, field, min, std::numeric_limits<int>::max()));
}

// `served`: the env a job gets (env, withheld), given the NCCL version the profile was tuned with
// (profile_nccl_version; 0 when it does not say): each setting must pass served_env_problem, the
// one check every reader that serves a profile applies (a variable NCCL reads, NCCL_ALGO /
// NCCL_PROTO lists as that NCCL parses them, values as NCCL reads them). A failed trial's env is
// only held to the safe names and characters: it may hold what NCCL refused.
std::map<std::string, std::string> parse_env(const YAML::Node& node, int line, const std::string& field,
                                             std::optional<int> served = std::nullopt) {
  if (node.IsMap() && node.size() == 0) return {};
  yaml_expect_map(node, field, line);
  std::map<std::string, std::string> env;
  for (const auto& entry : node) {
    if (!entry.first.IsScalar()) yaml_fail(yaml_line(entry.first), field, "names must be strings");
    const std::string& name = entry.first.Scalar();
    if (!is_safe_env_name(name))
      yaml_fail(yaml_line(entry.first), field, "name '" + shown(name) + "' does not match ^NCCL_[A-Z0-9_]+$");
    const std::string name_field = yaml_child(field, name);
    // yaml-cpp marks an empty (null) value where the next token starts: name the key's line.
    const int value_line = entry.second.IsNull() ? yaml_line(entry.first) : yaml_line(entry.second);
    if (!entry.second.IsScalar()) yaml_fail(value_line, name_field, "must be a string");
    const std::string& value = entry.second.Scalar();
    // A list NCCL_ALGO / NCCL_PROTO holds is refused for what is wrong in it, not for its ';'.
    std::string listed = value;
    std::replace(listed.begin(), listed.end(), ';', ',');
    if (served && is_safe_env_value(listed))
      if (std::optional<std::string> problem = served_env_problem(name, value, *served))
        yaml_fail(problem->find(" is no variable NCCL") != std::string::npos ? yaml_line(entry.first) : value_line,
                  name_field, *problem);
    if (!is_safe_env_setting(name, value))
      yaml_fail(value_line, name_field,
                value.empty() ? std::string("empty value")
                              : "'" + shown(value) + "' has characters outside " +
                                    std::string(kSafeValueCharacters) + " or is longer than 1024");
    if (!env.emplace(name, value).second) yaml_fail(yaml_line(entry.first), name_field, "appears twice");
  }
  return env;
}

// What NCCL_ALGO / NCCL_PROTO could be set to (usually one name), or empty for NCCL's own choice.
std::string choice_name(const YAML::Node& node, const std::string& field, std::string_view knob) {
  const std::string value = yaml_text(node, field);
  if (value.empty()) return value;
  if (!is_safe_env_value(value))
    yaml_fail(yaml_line(node), field,
              "'" + shown(value) + "' has characters outside " + std::string(kSafeValueCharacters));
  if (std::optional<std::string> problem = knob_value_problem(knob, value))
    yaml_fail(yaml_line(node), field, *problem);
  return value;
}

std::string count_of(int count, const char* one, const char* many) {
  return std::to_string(count) + (count == 1 ? one : many);
}

// shape.hosts and shape.mnnvl, after the counts: NCCL's nodes are NVLink domains of whole hosts
// each (as many hosts in each), a host holds as many ranks as the others, and only an NVLink domain
// spans hosts. A profile that breaks one of these was never measured: the plugin and env would
// serve it to jobs of a shape it never saw.
void parse_hosts(const YAML::Node& node, ProfileShape& shape) {
  if (node["mnnvl"]) shape.mnnvl = yaml_boolean(node["mnnvl"], "shape.mnnvl");
  if (!node["hosts"]) {
    if (shape.mnnvl) shape.hosts = shape.nodes;  // one host per domain, as profile_to_yaml writes it
    return;
  }
  const YAML::Node hosts = node["hosts"];
  const int count = small_integer(hosts, "shape.hosts", 1);
  if (!shape.mnnvl) {
    if (count != shape.nodes)
      yaml_fail(yaml_line(hosts), "shape.hosts",
                count_of(count, " host", " hosts") + " for " + count_of(shape.nodes, " node", " nodes") +
                    " needs mnnvl: true (only an NVLink domain spans hosts)");
    return;  // a node is a host: hosts says nothing more than nodes
  }
  if (count < shape.nodes)
    yaml_fail(yaml_line(hosts), "shape.hosts",
              count_of(count, " host cannot", " hosts cannot") + " hold " +
                  count_of(shape.nodes, " NVLink domain", " NVLink domains"));
  if (count % shape.nodes != 0)
    yaml_fail(yaml_line(hosts), "shape.hosts",
              count_of(count, " host does", " hosts do") + " not make " +
                  count_of(shape.nodes, " NVLink domain", " NVLink domains") + " of as many hosts each");
  if (shape.ranks % count != 0)
    yaml_fail(yaml_line(hosts), "shape.hosts",
              count_of(shape.ranks, " rank does", " ranks do") + " not spread evenly over " +
                  count_of(count, " host", " hosts"));
  shape.hosts = count;
}

ProfileShape parse_shape(const YAML::Node& node, int line) {
  const std::string field = "shape";
  yaml_expect_map(node, field, line);
  yaml_check_keys(node, field,
                  {"key", "nodes", "gpus_per_node", "ranks", "hosts", "mnnvl", "gpu", "nvswitch", "nics_per_node",
                   "nic", "gpu_nic_affinity", "nccl_version", "cuda_driver"});
  ProfileShape shape;
  const int at = yaml_line(node);
  if (!node["key"]) yaml_fail(at, "shape.key", "missing");
  shape.node_type_key = yaml_text(node["key"], "shape.key");
  if (!is_valid_node_type_key(shape.node_type_key))
    yaml_fail(yaml_line(node["key"]), "shape.key",
              "'" + shown(shape.node_type_key) + "' is not a name from [A-Za-z0-9._-]");
  if (!node["nodes"]) yaml_fail(at, "shape.nodes", "missing");
  shape.nodes = small_integer(node["nodes"], "shape.nodes", 1);
  if (node["gpus_per_node"])
    shape.gpus_per_node = small_integer(node["gpus_per_node"], "shape.gpus_per_node", 1);
  if (node["ranks"]) shape.ranks = small_integer(node["ranks"], "shape.ranks", 1);
  // One rank per GPU, as tune measures: ranks = nodes x gpus_per_node. A count left out follows
  // from the others (so that what profile_to_yaml writes parses back); a profile whose counts
  // disagree was edited by hand, and the plugin and env would match it to jobs of a shape it
  // never saw.
  const long long gpus = static_cast<long long>(shape.nodes) * shape.gpus_per_node;
  if (node["ranks"] && !node["gpus_per_node"]) {
    if (shape.ranks % shape.nodes != 0)
      yaml_fail(
          yaml_line(node["ranks"]), "shape.ranks",
          std::to_string(shape.ranks) + " is not a multiple of nodes (" + std::to_string(shape.nodes) + ")");
    shape.gpus_per_node = shape.ranks / shape.nodes;
  } else if (!node["ranks"]) {
    if (gpus > std::numeric_limits<int>::max())
      yaml_fail(at, "shape",
                "nodes x gpus_per_node is more than " + std::to_string(std::numeric_limits<int>::max()));
    shape.ranks = static_cast<int>(gpus);
  } else if (shape.ranks != gpus) {
    yaml_fail(yaml_line(node["ranks"]), "shape.ranks",
              std::to_string(shape.ranks) + " is not nodes x gpus_per_node (" + std::to_string(shape.nodes) +
                  " x " + std::to_string(shape.gpus_per_node) + ")");
  }
  parse_hosts(node, shape);
  if (node["gpu"]) shape.gpu = yaml_text(node["gpu"], "shape.gpu");
  if (node["nvswitch"]) shape.nvswitch = yaml_boolean(node["nvswitch"], "shape.nvswitch");
  if (node["nics_per_node"])
    shape.nics_per_node = small_integer(node["nics_per_node"], "shape.nics_per_node", 0);
  if (node["nic"]) shape.nic = yaml_text(node["nic"], "shape.nic");
  if (node["gpu_nic_affinity"])
    shape.gpu_nic_affinity = yaml_text(node["gpu_nic_affinity"], "shape.gpu_nic_affinity");
  if (node["nccl_version"]) shape.nccl_version = yaml_text(node["nccl_version"], "shape.nccl_version");
  if (node["cuda_driver"]) shape.cuda_driver = yaml_text(node["cuda_driver"], "shape.cuda_driver");
  return shape;
}

std::vector<SizeChoice> parse_per_size(const YAML::Node& node, int line, const std::string& field) {
  yaml_expect_list(node, field, line);
  std::vector<SizeChoice> ranges;
  for (std::size_t i = 0; i < node.size(); ++i) {
    const YAML::Node entry = node[i];
    const std::string at = yaml_item(field, i);
    yaml_expect_map(entry, at, yaml_line(node));
    yaml_check_keys(entry, at, {"min_bytes", "max_bytes", "algo", "proto", "channels", "chunk_bytes"});
    SizeChoice choice;
    for (const char* key : {"min_bytes", "max_bytes"})
      if (!entry[key]) yaml_fail(yaml_line(entry), yaml_child(at, key), "missing");
    choice.min_bytes = byte_count(entry["min_bytes"], yaml_child(at, "min_bytes"));
    choice.max_bytes = byte_count(entry["max_bytes"], yaml_child(at, "max_bytes"));
    if (choice.max_bytes < choice.min_bytes)
      yaml_fail(yaml_line(entry["max_bytes"]), yaml_child(at, "max_bytes"), "below min_bytes");
    if (!ranges.empty() && choice.min_bytes <= ranges.back().max_bytes)
      yaml_fail(yaml_line(entry["min_bytes"]), yaml_child(at, "min_bytes"),
                "overlaps or precedes the range before it");
    if (entry["algo"]) choice.algo = choice_name(entry["algo"], yaml_child(at, "algo"), "NCCL_ALGO");
    if (entry["proto"]) choice.proto = choice_name(entry["proto"], yaml_child(at, "proto"), "NCCL_PROTO");
    if (entry["channels"])
      choice.channels = static_cast<int>(yaml_integer(entry["channels"], yaml_child(at, "channels"), 0, 64));
    if (entry["chunk_bytes"])  // NCCL clamps a chunk to its buffers; 1 GiB is far above any of them
      choice.chunk_bytes = static_cast<std::uint64_t>(
          yaml_integer(entry["chunk_bytes"], yaml_child(at, "chunk_bytes"), 0, 1 << 30));
    ranges.push_back(std::move(choice));
  }
  return ranges;
}

MeasuredRange parse_measured(const YAML::Node& node, int line, const std::string& field) {
  yaml_expect_map(node, field, line);
  yaml_check_keys(node, field, {"min_bytes", "max_bytes"});
  MeasuredRange range;
  for (const char* key : {"min_bytes", "max_bytes"})
    if (!node[key]) yaml_fail(yaml_line(node), yaml_child(field, key), "missing");
  range.min_bytes = byte_count(node["min_bytes"], yaml_child(field, "min_bytes"));
  range.max_bytes = byte_count(node["max_bytes"], yaml_child(field, "max_bytes"));
  if (range.max_bytes == 0 || range.max_bytes < range.min_bytes)
    yaml_fail(yaml_line(node["max_bytes"]), yaml_child(field, "max_bytes"),
              "must be from 1 and at least min_bytes");
  return range;
}

std::vector<double> numbers(const YAML::Node& node, int line, const std::string& field) {
  yaml_expect_list(node, field, line);
  std::vector<double> values;
  for (std::size_t i = 0; i < node.size(); ++i) values.push_back(number(node[i], yaml_item(field, i)));
  return values;
}

ProfileResults parse_results(const YAML::Node& node, int line, const std::string& field) {
  yaml_expect_map(node, field, line);
  yaml_check_keys(node, field,
                  {"sizes", "baseline", "tuned", "speedup_geomean", "worst_size_ratio", "peak_busbw_gbps",
                   "peak_bottleneck", "with_plugin", "with_plugin_speedup_geomean"});
  ProfileResults results;
  const int at = yaml_line(node);
  if (const YAML::Node sizes = node["sizes"]) {
    const std::string sizes_field = yaml_child(field, "sizes");
    yaml_expect_list(sizes, sizes_field, at);
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      const std::uint64_t bytes = byte_count(sizes[i], yaml_item(sizes_field, i));
      if (!results.sizes.empty() && bytes <= results.sizes.back())
        yaml_fail(yaml_line(sizes[i]), yaml_item(sizes_field, i), "sizes must be ascending");
      results.sizes.push_back(bytes);
    }
  }
  for (const char* key : {"baseline", "tuned", "with_plugin"}) {
    const YAML::Node values = node[key];
    if (!values) continue;
    std::vector<double>& target = std::string_view(key) == "baseline" ? results.baseline
                                  : std::string_view(key) == "tuned"  ? results.tuned
                                                                      : results.with_plugin;
    target = numbers(values, at, yaml_child(field, key));
    // An empty list is one left out, which the writer writes as [] (a profile that kept the
    // defaults has no tuned curve).
    if (!target.empty() && target.size() != results.sizes.size())
      yaml_fail(
          yaml_line(values), yaml_child(field, key),
          std::to_string(target.size()) + " values for " + std::to_string(results.sizes.size()) + " sizes");
  }
  if (node["speedup_geomean"])
    results.speedup_geomean = number(node["speedup_geomean"], yaml_child(field, "speedup_geomean"));
  if (node["worst_size_ratio"])
    results.worst_size_ratio = number(node["worst_size_ratio"], yaml_child(field, "worst_size_ratio"));
  if (node["with_plugin_speedup_geomean"])
    results.with_plugin_speedup_geomean =
        number(node["with_plugin_speedup_geomean"], yaml_child(field, "with_plugin_speedup_geomean"));
  if (node["peak_busbw_gbps"])
    results.peak_busbw_gbps = non_negative(node["peak_busbw_gbps"], yaml_child(field, "peak_busbw_gbps"));
  if (node["peak_bottleneck"])
    results.peak_bottleneck = yaml_text(node["peak_bottleneck"], yaml_child(field, "peak_bottleneck"));
  return results;
}

PluginVerdict parse_plugin_verdict(const YAML::Node& node, int line, const std::string& field) {
  yaml_expect_map(node, field, line);
  yaml_check_keys(node, field, {"status", "why"});
  PluginVerdict verdict;
  const std::string status = yaml_text(node["status"], yaml_child(field, "status"));
  const auto known = {PluginStatus::confirmed, PluginStatus::not_served, PluginStatus::slower};
  const auto named =
      std::find_if(known.begin(), known.end(), [&](PluginStatus s) { return to_string(s) == status; });
  if (named == known.end())
    yaml_fail(yaml_line(node["status"]), yaml_child(field, "status"),
              "unknown status '" + shown(status) + "' (confirmed, not_served, slower)");
  verdict.status = *named;
  if (node["why"]) verdict.why = yaml_text(node["why"], yaml_child(field, "why"));
  return verdict;
}

// One collective's part; `field` is where it sits ("" at a v1 document's top level).
CollectiveProfile parse_collective(const YAML::Node& node, const std::string& field) {
  CollectiveProfile collective;
  const auto child = [&](const char* key) {
    return field.empty() ? std::string(key) : yaml_child(field, key);
  };
  if (const YAML::Node n = node["measured"])
    collective.measured = parse_measured(n, yaml_line(n), child("measured"));
  if (const YAML::Node n = node["per_size"])
    collective.per_size = parse_per_size(n, yaml_line(n), child("per_size"));
  if (const YAML::Node n = node["switches"])
    collective.switches = parse_switches(n, yaml_line(n), child("switches"));
  if (const YAML::Node n = node["results"])
    collective.results = parse_results(n, yaml_line(n), child("results"));
  if (const YAML::Node n = node["guard"]) collective.guard = yaml_boolean(n, child("guard"));
  if (const YAML::Node n = node["plugin"])
    collective.plugin = parse_plugin_verdict(n, yaml_line(n), child("plugin"));
  return collective;
}

std::map<std::string, CollectiveProfile> parse_collectives(const YAML::Node& node, int line,
                                                           const std::string& field = "collectives") {
  yaml_expect_map(node, field, line);
  std::map<std::string, CollectiveProfile> collectives;
  for (const auto& entry : node) {
    const std::string name = entry.first.IsScalar() ? entry.first.Scalar() : std::string();
    if (!is_collective_name(name))
      yaml_fail(yaml_line(entry.first), field,
                "unknown collective '" + shown(name) + "' (" + std::string(kCollectiveNames) + ")");
    const std::string at = yaml_child(field, name);
    yaml_expect_map(entry.second, at, yaml_line(entry.first));
    yaml_check_keys(entry.second, at, {"measured", "per_size", "switches", "results", "guard", "plugin"});
    collectives[name] = parse_collective(entry.second, at);
  }
  return collectives;
}

// v3's `communicators`: the world's collectives (exactly one `role: world` entry, the profile's
// own shape) into `world`, the others into the returned list, in the file's order.
std::vector<CommunicatorSection> parse_communicators(const YAML::Node& node, int line,
                                                     const ProfileShape& shape,
                                                     std::map<std::string, CollectiveProfile>& world) {
  const std::string field = "communicators";
  yaml_expect_list(node, field, line);
  std::vector<CommunicatorSection> sections;
  std::vector<std::pair<int, int>> seen;  // (nodes, ranks_per_node)
  bool has_world = false;
  const int hosts_per_node = shape.host_count() / shape.nodes;
  for (std::size_t i = 0; i < node.size(); ++i) {
    const YAML::Node entry = node[i];
    const std::string at = yaml_item(field, i);
    yaml_expect_map(entry, at, yaml_line(node));
    yaml_check_keys(entry, at, {"nodes", "ranks_per_node", "role", "collectives"});
    for (const char* key : {"nodes", "ranks_per_node", "role"})
      if (!entry[key]) yaml_fail(yaml_line(entry), yaml_child(at, key), "missing");
    CommunicatorSection section;
    // A communicator of the job's ranks: never more nodes, or ranks on a node, than the job has.
    section.nodes = static_cast<int>(yaml_integer(entry["nodes"], yaml_child(at, "nodes"), 1, shape.nodes));
    section.ranks_per_node = static_cast<int>(
        yaml_integer(entry["ranks_per_node"], yaml_child(at, "ranks_per_node"), 1, shape.gpus_per_node));
    const std::string role = yaml_text(entry["role"], yaml_child(at, "role"));
    const std::optional<CommRole> parsed = parse_comm_role(role);
    if (!parsed)
      yaml_fail(yaml_line(entry["role"]), yaml_child(at, "role"),
                "unknown role '" + shown(role) + "' (world, rail, node)");
    section.role = *parsed;
    switch (section.role) {
      case CommRole::world:
        if (has_world) yaml_fail(yaml_line(entry["role"]), yaml_child(at, "role"), "a second world");
        if (section.nodes != shape.nodes)
          yaml_fail(yaml_line(entry["nodes"]), yaml_child(at, "nodes"),
                    "the world's is shape.nodes (" + std::to_string(shape.nodes) + ")");
        if (section.ranks_per_node != shape.gpus_per_node)
          yaml_fail(yaml_line(entry["ranks_per_node"]), yaml_child(at, "ranks_per_node"),
                    "the world's is shape.ranks / shape.nodes (" + std::to_string(shape.gpus_per_node) + ")");
        has_world = true;
        break;
      case CommRole::rail:
        // One rank per host: per NCCL node, one per host of its NVLink domain on MNNVL.
        if (section.ranks_per_node != hosts_per_node)
          yaml_fail(yaml_line(entry["ranks_per_node"]), yaml_child(at, "ranks_per_node"),
                    shape.mnnvl ? "a rail has one rank per host: " + std::to_string(hosts_per_node) +
                                      " per NVLink domain of " + std::to_string(hosts_per_node) + " hosts"
                                : std::string("a rail has one rank per node"));
        break;
      case CommRole::node:
        if (section.nodes != 1)
          yaml_fail(yaml_line(entry["nodes"]), yaml_child(at, "nodes"), "a node section has 1 node");
        break;
    }
    const std::pair<int, int> counts{section.nodes, section.ranks_per_node};
    if (std::find(seen.begin(), seen.end(), counts) != seen.end())
      yaml_fail(yaml_line(entry["nodes"]), at,
                std::to_string(section.nodes) + " nodes x " + std::to_string(section.ranks_per_node) +
                    " ranks appears twice");
    seen.push_back(counts);
    if (const YAML::Node n = entry["collectives"])
      section.collectives = parse_collectives(n, yaml_line(n), yaml_child(at, "collectives"));
    if (section.role == CommRole::world)
      world = std::move(section.collectives);
    else
      sections.push_back(std::move(section));
  }
  if (!has_world) yaml_fail(line, field, "no entry with role: world");
  return sections;
}

std::vector<WithheldSetting> parse_withheld(const YAML::Node& node, int line, int nccl_version) {
  const std::string field = "withheld";
  yaml_expect_list(node, field, line);
  std::vector<WithheldSetting> withheld;
  for (std::size_t i = 0; i < node.size(); ++i) {
    const YAML::Node entry = node[i];
    const std::string at = yaml_item(field, i);
    yaml_expect_map(entry, at, yaml_line(node));
    yaml_check_keys(entry, at, {"env", "why"});
    for (const char* key : {"env", "why"})
      if (!entry[key]) yaml_fail(yaml_line(entry), yaml_child(at, key), "missing");
    WithheldSetting setting;
    setting.env = parse_env(entry["env"], yaml_line(entry), yaml_child(at, "env"), nccl_version);
    if (setting.env.empty()) yaml_fail(yaml_line(entry["env"]), yaml_child(at, "env"), "names no setting");
    setting.why = yaml_text(entry["why"], yaml_child(at, "why"));
    withheld.push_back(std::move(setting));
  }
  return withheld;
}

ProfileProvenance parse_provenance(const YAML::Node& node, int line) {
  const std::string field = "provenance";
  yaml_expect_map(node, field, line);
  yaml_check_keys(node, field,
                  {"tool", "date", "trials", "pairs", "failed_trials", "duration_s", "objective", "hosts",
                   "noise_floor", "confirmation", "plugin_confirmation", "nccl_observed"});
  ProfileProvenance provenance;
  if (node["tool"]) provenance.tool = yaml_text(node["tool"], "provenance.tool");
  if (node["date"]) provenance.date = yaml_text(node["date"], "provenance.date");
  if (node["trials"]) provenance.trials = small_integer(node["trials"], "provenance.trials", 0);
  if (node["pairs"]) provenance.pairs = small_integer(node["pairs"], "provenance.pairs", 0);
  if (node["failed_trials"])
    provenance.failed_trials = small_integer(node["failed_trials"], "provenance.failed_trials", 0);
  if (node["duration_s"]) provenance.duration_s = non_negative(node["duration_s"], "provenance.duration_s");
  if (const YAML::Node objective = node["objective"]) {
    provenance.objective = yaml_text(objective, "provenance.objective");
    if (!provenance.objective.empty()) {
      Result<Objective> parsed = parse_objective(provenance.objective);
      if (!parsed) yaml_fail(yaml_line(objective), "provenance.objective", parsed.error());
    }
  }
  if (node["hosts"]) provenance.hosts = small_integer(node["hosts"], "provenance.hosts", 0);
  if (node["noise_floor"])
    provenance.noise_floor = non_negative(node["noise_floor"], "provenance.noise_floor");
  if (node["confirmation"])
    provenance.confirmation = yaml_text(node["confirmation"], "provenance.confirmation");
  if (node["plugin_confirmation"])
    provenance.plugin_confirmation = yaml_text(node["plugin_confirmation"], "provenance.plugin_confirmation");
  if (node["nccl_observed"])
    provenance.nccl_observed = parse_nccl_observed(node["nccl_observed"], "provenance.nccl_observed");
  return provenance;
}

std::vector<FailedTrial> parse_failed(const YAML::Node& node, int line) {
  const std::string field = "failed";
  yaml_expect_list(node, field, line);
  std::vector<FailedTrial> failed;
  for (std::size_t i = 0; i < node.size(); ++i) {
    const YAML::Node entry = node[i];
    const std::string at = yaml_item(field, i);
    yaml_expect_map(entry, at, yaml_line(node));
    yaml_check_keys(entry, at, {"env", "outcome", "reason"});
    FailedTrial trial;
    if (entry["env"]) trial.env = parse_env(entry["env"], yaml_line(entry), yaml_child(at, "env"));
    if (const YAML::Node outcome = entry["outcome"]) {
      const std::string name = yaml_text(outcome, yaml_child(at, "outcome"));
      const std::optional<TrialOutcome> parsed = parse_trial_outcome(name);
      if (!parsed || *parsed == TrialOutcome::ok)
        yaml_fail(yaml_line(outcome), yaml_child(at, "outcome"),
                  "'" + shown(name) + "' is not wrong_data, timeout, init_error or crash");
      trial.outcome = *parsed;
    }
    if (entry["reason"]) trial.reason = yaml_text(entry["reason"], yaml_child(at, "reason"));
    failed.push_back(std::move(trial));
  }
  return failed;
}

Profile parse_document(const YAML::Node& root) {
  if (!root.IsMap())
    yaml_fail(root.IsDefined() ? yaml_line(root) : 1, "",
              "the document must be a map (schema, shape, env, ...)");
  const YAML::Node schema = root["schema"];
  if (!schema) yaml_fail(1, "schema", "missing (" + std::string(kProfileSchema) + ")");
  const bool v1 = schema.IsScalar() && schema.Scalar() == kProfileSchemaV1;
  const bool v3 = schema.IsScalar() && schema.Scalar() == kProfileSchemaV3;
  if (!v1 && !v3 && (!schema.IsScalar() || schema.Scalar() != kProfileSchema))
    yaml_fail(yaml_line(schema), "schema",
              "expected '" + std::string(kProfileSchemaV3) + "', '" + std::string(kProfileSchema) + "' or '" +
                  std::string(kProfileSchemaV1) + "'" +
                  (schema.IsScalar() ? ", found '" + shown(schema.Scalar()) + "'" : std::string()));
  if (v1)
    yaml_check_keys(root, "",
                    {"schema", "shape", "env", "keep_defaults", "measured", "per_size", "results",
                     "provenance", "failed", "notes"});
  else if (v3)
    yaml_check_keys(root, "",
                    {"schema", "shape", "env", "keep_defaults", "withheld", "communicators", "provenance",
                     "failed", "notes"});
  else
    yaml_check_keys(
        root, "",
        {"schema", "shape", "env", "keep_defaults", "collectives", "provenance", "failed", "notes"});
  Profile profile;
  if (!root["shape"]) yaml_fail(1, "shape", "missing");
  profile.shape = parse_shape(root["shape"], yaml_line(root["shape"]));
  const YAML::Node env = root["env"];
  if (!env) yaml_fail(1, "env", "missing ({} when NCCL's defaults are kept)");
  const int nccl_version = profile_nccl_version(profile.shape.nccl_version, profile.shape.node_type_key);
  profile.env = parse_env(env, yaml_line(env), "env", nccl_version);
  if (const YAML::Node keep = root["keep_defaults"]) {
    profile.keep_defaults = yaml_boolean(keep, "keep_defaults");
    if (profile.keep_defaults && !profile.env.empty())
      yaml_fail(yaml_line(env), "env", "must be empty when keep_defaults is true");
  }
  // A v1 profile tuned all_reduce alone, with its parts at the top level.
  if (v3) {
    if (const YAML::Node node = root["withheld"]) profile.withheld = parse_withheld(node, yaml_line(node), nccl_version);
    const YAML::Node node = root["communicators"];
    if (!node) yaml_fail(1, "communicators", "missing (v3 holds the world's collectives there)");
    profile.shapes = parse_communicators(node, yaml_line(node), profile.shape, profile.collectives);
  } else if (v1)
    profile.collectives[kAllReduce] = parse_collective(root, "");
  else if (const YAML::Node node = root["collectives"])
    profile.collectives = parse_collectives(node, yaml_line(node));
  if (const YAML::Node node = root["provenance"])
    profile.provenance = parse_provenance(node, yaml_line(node));
  if (const YAML::Node node = root["failed"]) profile.failed = parse_failed(node, yaml_line(node));
  if (const YAML::Node node = root["notes"]) {
    yaml_expect_list(node, "notes", yaml_line(node));
    for (std::size_t i = 0; i < node.size(); ++i)
      profile.notes.push_back(yaml_text(node[i], yaml_item("notes", i)));
  }
  return profile;
}

}  // namespace

Result<Profile> parse_profile(std::string_view text, std::string_view origin, ProfileParts parts) {
  // What the strict reader refuses anywhere in the file is looked for in all of it: such a file
  // is parsed whole, for the same error.
  const bool skim = parts == ProfileParts::for_jobs && text.size() <= kMaxProfileBytes &&
                    text.find('\0') == std::string_view::npos && is_valid_utf8(text);
  const std::optional<std::string> for_jobs = skim ? profile_text_for_jobs(text) : std::nullopt;
  Profile profile;
  const Status parsed = parse_strict_yaml(
      for_jobs ? std::string_view(*for_jobs) : text, origin,
      [&](const YAML::Node& root) { profile = parse_document(root); }, kMaxProfileBytes);
  // A layout the skim misreads (a flow value whose closing bracket sits at column 0) must not make
  // a valid profile fail: the whole text decides then.
  if (!parsed && for_jobs) return parse_profile(text, origin, ProfileParts::whole);
  if (!parsed) return Error{parsed.error()};
  return profile;
}

Result<Profile> read_profile(const std::filesystem::path& file) {
  Result<std::string> text = read_text_file(file, kMaxProfileBytes);
  if (!text) return Error{text.error()};
  return parse_profile(*text, file.string());
}

}  // namespace nccltune
