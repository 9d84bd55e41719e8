// The parsers of what acts on a run in a fake model: the conditions entries apply under,
// effects, faults, noise and the facts NCCL's log states (fake_model_yaml.h).
#include <algorithm>

#include "fake_model_yaml.h"

namespace nccltune::fake::model_yaml {
namespace {

std::optional<std::string> condition_value(const YAML::Node& node, const std::string& path) {
  if (node.IsNull()) return std::nullopt;
  return yaml_text(node, path);
}

// An effect's `algos` or `protos`: a non-empty list of NCCL's names (any case), each once.
template <typename Names>
std::vector<std::string> parse_scope(const YAML::Node& node, const std::string& path, const Names& known,
                                     const std::string& what) {
  yaml_expect_list(node, path);
  if (node.size() == 0) fail(node, path, "is empty (leave it out to act on every " + what + ")");
  std::vector<std::string> names;
  for (std::size_t i = 0; i < node.size(); ++i) {
    const std::string at = yaml_item(path, i);
    const std::string name = yaml_text(node[i], at);
    const std::optional<std::string> known_name = canonical(name, known);
    if (!known_name) fail(node[i], at, "'" + name + "' is not an NCCL " + what);
    if (std::find(names.begin(), names.end(), *known_name) != names.end())
      fail(node[i], at, "names " + *known_name + " twice");
    names.push_back(*known_name);
  }
  return names;
}

FaultKind parse_fault_kind(const YAML::Node& node, const std::string& path) {
  const std::string name = yaml_text(node, path);
  for (FaultKind kind : {FaultKind::init_error, FaultKind::hang, FaultKind::crash, FaultKind::corrupt,
                         FaultKind::slow_rank, FaultKind::slow_node, FaultKind::slow_link, FaultKind::late_rank})
    if (to_string(kind) == name) return kind;
  fail(node, path,
       "unknown fault '" + name +
           "' (init_error, hang, crash, corrupt, slow_rank, slow_node, slow_link or late_rank)");
}

FaultPath parse_fault_path(const YAML::Node& node, const std::string& path) {
  const std::string name = yaml_text(node, path);
  for (FaultPath kind : {FaultPath::any, FaultPath::network, FaultPath::local})
    if (to_string(kind) == name) return kind;
  fail(node, path, "unknown path '" + name + "' (any, network or local)");
}

// slow_link's `nodes`: the two ends of the link, distinct emulated node indexes.
std::pair<int, int> parse_link(const YAML::Node& node, const std::string& path) {
  yaml_expect_list(node, path);
  if (node.size() != 2) fail(node, path, "must list two nodes");
  const int a = small_integer(node[0], yaml_item(path, 0), 0);
  const int b = small_integer(node[1], yaml_item(path, 1), 0);
  if (a == b) fail(node, path, "names node " + std::to_string(a) + " twice");
  return {a, b};
}

// A device name as NCCL prints it ("mlx5_0", "eth0"): it goes into log lines verbatim.
std::string device_name(const YAML::Node& node, const std::string& path) {
  const std::string name = yaml_text(node, path);
  const bool plain = std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-' || c == '.';
  });
  if (name.empty() || name.size() > 64 || !plain)
    fail(node, path, "'" + name + "' is not a device name (1 to 64 letters, digits, '_', '-', '.')");
  return name;
}

}  // namespace

Condition parse_condition(const YAML::Node& node, const std::string& path) {
  yaml_expect_map(node, path);
  Condition condition;
  for (const auto& entry : node) {
    const std::string name = entry.first.Scalar();
    const std::string key_path = yaml_child(path, name);
    if (name.rfind("NCCL_", 0) != 0) fail(entry.first, key_path, "is not an NCCL_ variable");
    std::vector<std::optional<std::string>>& values = condition[name];
    if (entry.second.IsSequence()) {
      for (std::size_t i = 0; i < entry.second.size(); ++i)
        values.push_back(condition_value(entry.second[i], yaml_item(key_path, i)));
    } else {
      values.push_back(condition_value(entry.second, key_path));
    }
  }
  return condition;
}

std::vector<Effect> parse_effects(const YAML::Node& node, const std::string& path) {
  yaml_expect_list(node, path);
  std::vector<Effect> effects;
  for (std::size_t i = 0; i < node.size(); ++i) {
    const std::string at = yaml_item(path, i);
    yaml_check_keys(node[i], at, {"when", "algo", "algos", "protos", "busbw_scale", "lat_scale"});
    Effect effect;
    effect.when = parse_condition(required(node[i], at, "when"), yaml_child(at, "when"));
    if (const YAML::Node algo = node[i]["algo"]) {
      const std::string name = yaml_text(algo, yaml_child(at, "algo"));
      effect.algo = canonical(name, kNcclAlgorithms);
      if (!effect.algo) fail(algo, yaml_child(at, "algo"), "'" + name + "' is not an NCCL algorithm");
    }
    if (const YAML::Node algos = node[i]["algos"])
      effect.algos = parse_scope(algos, yaml_child(at, "algos"), kNcclAlgorithms, "algorithm");
    if (const YAML::Node protos = node[i]["protos"])
      effect.protos = parse_scope(protos, yaml_child(at, "protos"), kNcclProtocols, "protocol");
    if (node[i]["busbw_scale"])
      effect.busbw_scale = positive(node[i]["busbw_scale"], yaml_child(at, "busbw_scale"));
    if (node[i]["lat_scale"]) effect.lat_scale = positive(node[i]["lat_scale"], yaml_child(at, "lat_scale"));
    effects.push_back(effect);
  }
  return effects;
}

std::vector<Fault> parse_faults(const YAML::Node& node, const std::string& path) {
  yaml_expect_list(node, path);
  std::vector<Fault> faults;
  for (std::size_t i = 0; i < node.size(); ++i) {
    const std::string at = yaml_item(path, i);
    yaml_check_keys(node[i], at, {"when", "fault", "rank", "factor", "node", "nodes", "path", "delay_us"});
    Fault fault;
    if (node[i]["when"]) fault.when = parse_condition(node[i]["when"], yaml_child(at, "when"));
    fault.kind = parse_fault_kind(required(node[i], at, "fault"), yaml_child(at, "fault"));
    if (node[i]["rank"]) fault.rank = small_integer(node[i]["rank"], yaml_child(at, "rank"), 0);
    if (node[i]["factor"]) fault.factor = positive(node[i]["factor"], yaml_child(at, "factor"));
    const bool link = fault.kind == FaultKind::slow_link;
    if (const YAML::Node one = node[i]["node"]) {
      // A link has two ends; "only ranks on one node" would not be a link.
      if (link) fail(one, yaml_child(at, "node"), "slow_link names its two nodes in 'nodes'");
      fault.node = small_integer(one, yaml_child(at, "node"), 0);
    }
    if (link)
      fault.link = parse_link(required(node[i], at, "nodes"), yaml_child(at, "nodes"));
    else if (node[i]["nodes"])
      fail(node[i]["nodes"], yaml_child(at, "nodes"), "only slow_link takes nodes");
    if (const YAML::Node where = node[i]["path"]) {
      if (fault.kind != FaultKind::slow_node)
        fail(where, yaml_child(at, "path"), "only slow_node takes a path");
      fault.path = parse_fault_path(where, yaml_child(at, "path"));
    }
    if (fault.kind == FaultKind::late_rank) {
      fault.delay_us = positive(required(node[i], at, "delay_us"), yaml_child(at, "delay_us"));
      if (fault.rank.has_value() == fault.node.has_value())
        fail(node[i], at, "late_rank names one 'rank' or one 'node'");
    } else if (node[i]["delay_us"]) {
      fail(node[i]["delay_us"], yaml_child(at, "delay_us"), "only late_rank takes delay_us");
    }
    faults.push_back(fault);
  }
  return faults;
}

Noise parse_noise(const YAML::Node& node, const std::string& path) {
  yaml_check_keys(node, path, {"cv", "seed"});
  Noise noise;
  if (node["cv"]) noise.cv = non_negative(node["cv"], yaml_child(path, "cv"));
  if (node["seed"])
    noise.seed = static_cast<uint64_t>(yaml_integer(node["seed"], yaml_child(path, "seed"), 0, INT64_MAX));
  return noise;
}

NcclLogModel parse_nccl_log(const YAML::Node& node, const std::string& path) {
  yaml_check_keys(node, path, {"transport", "devices", "gdr", "nvls"});
  NcclLogModel log;
  if (const YAML::Node transport = node["transport"]) {
    const std::string at = yaml_child(path, "transport");
    const std::string name = yaml_text(transport, at);
    bool known = false;
    for (NcclTransport kind : {NcclTransport::ib, NcclTransport::roce, NcclTransport::socket}) {
      if (to_string(kind) != name) continue;
      log.transport = kind;
      known = true;
    }
    if (!known) fail(transport, at, "unknown transport '" + name + "' (IB, RoCE or Socket)");
  }
  if (const YAML::Node devices = node["devices"]) {
    const std::string at = yaml_child(path, "devices");
    yaml_expect_list(devices, at);
    if (devices.size() == 0 || devices.size() > 64) fail(devices, at, "must list 1 to 64 devices");
    log.devices.clear();
    for (std::size_t i = 0; i < devices.size(); ++i)
      log.devices.push_back(device_name(devices[i], yaml_item(at, i)));
  }
  if (node["gdr"]) log.gdr = yaml_boolean(node["gdr"], yaml_child(path, "gdr"));
  if (node["nvls"]) log.nvls = yaml_boolean(node["nvls"], yaml_child(path, "nvls"));
  return log;
}

}  // namespace nccltune::fake::model_yaml
