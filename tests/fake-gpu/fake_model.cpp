#include "fake_model.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cctype>
#include <cstdint>
#include <initializer_list>

#include "base/atomic_file.h"
#include "base/strict_yaml.h"
#include "fake_model_yaml.h"
#include "ll128_trust.h"
#include "profile/nccl_names.h"

namespace nccltune::fake {

namespace {

using namespace model_yaml;

std::vector<FakeDevice> parse_devices(const YAML::Node& node, const std::string& path) {
  yaml_expect_list(node, path);
  if (node.size() == 0) fail(node, path, "must list at least one device");
  std::vector<FakeDevice> devices;
  for (std::size_t i = 0; i < node.size(); ++i) {
    const std::string at = yaml_item(path, i);
    yaml_check_keys(node[i], at, {"name", "pci", "sm"});
    FakeDevice device;
    device.name = yaml_text(required(node[i], at, "name"), yaml_child(at, "name"));
    device.pci = yaml_text(required(node[i], at, "pci"), yaml_child(at, "pci"));
    device.sm = small_integer(required(node[i], at, "sm"), yaml_child(at, "sm"), 10);
    devices.push_back(device);
  }
  return devices;
}

std::map<std::string, AlgoModel> parse_algos(const YAML::Node& node, const std::string& path) {
  yaml_expect_map(node, path);
  std::map<std::string, AlgoModel> algos;
  for (const auto& entry : node) {
    const std::string name = entry.first.Scalar();
    const std::optional<std::string> algo = canonical(name, kNcclAlgorithms);
    const std::string algo_path = yaml_child(path, name);
    if (!algo) fail(entry.first, path, "unknown key '" + name + "'");
    yaml_expect_map(entry.second, algo_path);
    AlgoModel model;
    for (const auto& proto_entry : entry.second) {
      const std::string key = proto_entry.first.Scalar();
      const std::string key_path = yaml_child(algo_path, key);
      if (key == "requires") {
        model.requires_env = parse_condition(proto_entry.second, key_path);
        continue;
      }
      const std::optional<std::string> proto = canonical(key, kNcclProtocols);
      if (!proto) fail(proto_entry.first, algo_path, "unknown key '" + key + "'");
      yaml_check_keys(proto_entry.second, key_path, {"lat_us", "busbw_gbps"});
      ProtoCost cost;
      cost.lat_us =
          non_negative(required(proto_entry.second, key_path, "lat_us"), yaml_child(key_path, "lat_us"));
      cost.busbw_gbps =
          positive(required(proto_entry.second, key_path, "busbw_gbps"), yaml_child(key_path, "busbw_gbps"));
      model.protos[*proto] = cost;
    }
    if (model.protos.empty()) fail(entry.second, algo_path, "has no protocol");
    algos[*algo] = model;
  }
  if (algos.empty()) fail(node, path, "has no algorithm");
  return algos;
}

// `nccl_model`: NCCL's cost model, in `algos`' shape; `requires` belongs to the hardware (`algos`).
std::map<std::string, AlgoModel> parse_nccl_model(const YAML::Node& node, const std::string& path) {
  std::map<std::string, AlgoModel> model = parse_algos(node, path);
  for (const auto& [algo, entry] : model)
    if (!entry.requires_env.empty())
      fail(node[algo] ? node[algo] : node, yaml_child(yaml_child(path, algo), "requires"),
           "belongs in algos: nccl_model is NCCL's cost model only");
  return model;
}

// A level of the model (the top, a `collectives` or a `nodes` entry) gives NCCL's choice one way.
void check_one_choice(const YAML::Node& node, const std::string& path) {
  if (node["default"] && node["nccl_model"])
    fail(node["nccl_model"], yaml_child(path, "nccl_model"),
         "give either default or nccl_model: with nccl_model, NCCL's choice is its cheapest pair");
}

// `algos`, when given, must hold every pair named (nullptr: only the names are checked, and the
// resolved models are checked later).
std::vector<DefaultChoice> parse_defaults(const YAML::Node& node, const std::string& path,
                                          const std::map<std::string, AlgoModel>* algos) {
  yaml_expect_list(node, path);
  std::vector<DefaultChoice> defaults;
  for (std::size_t i = 0; i < node.size(); ++i) {
    const std::string at = yaml_item(path, i);
    yaml_check_keys(node[i], at, {"max_bytes", "algo", "proto"});
    DefaultChoice choice;
    if (node[i]["max_bytes"])
      choice.max_bytes = yaml_integer(node[i]["max_bytes"], yaml_child(at, "max_bytes"), 0, INT64_MAX);
    const std::string algo = yaml_text(required(node[i], at, "algo"), yaml_child(at, "algo"));
    const std::string proto = yaml_text(required(node[i], at, "proto"), yaml_child(at, "proto"));
    const std::optional<std::string> known_algo = canonical(algo, kNcclAlgorithms);
    const std::optional<std::string> known_proto = canonical(proto, kNcclProtocols);
    if (!known_algo || (algos && !algos->contains(*known_algo)))
      fail(node[i]["algo"], yaml_child(at, "algo"), algo + " is not in 'algos'");
    if (!known_proto || (algos && !algos->at(*known_algo).protos.contains(*known_proto)))
      fail(node[i]["proto"], yaml_child(at, "proto"), *known_algo + " has no " + proto + " in 'algos'");
    choice.algo = *known_algo;
    choice.proto = *known_proto;
    defaults.push_back(choice);
  }
  return defaults;
}

void parse_channels(const YAML::Node& node, const std::string& path, FakeModel& model) {
  yaml_check_keys(node, path, {"default", "busbw_scale"});
  model.default_channels = small_integer(required(node, path, "default"), yaml_child(path, "default"), 1);
  if (const YAML::Node scales = node["busbw_scale"]) {
    const std::string scales_path = yaml_child(path, "busbw_scale");
    yaml_expect_map(scales, scales_path);
    for (const auto& entry : scales) {
      const std::string key_path = yaml_child(scales_path, entry.first.Scalar());
      const int channels = small_integer(entry.first, key_path, 1);
      model.channel_scale[channels] = positive(entry.second, key_path);
    }
  }
}


// The keys a `collectives` entry or a `nodes` entry may give instead of the top level's. Its
// `default` must name pairs of its own `algos`, else of `algos` (the one it falls back to); whether
// every model an op resolves to holds its default pairs is checked at the end
// (check_resolved_models).
CollectiveModel parse_override(const YAML::Node& c, const std::string& at,
                               const std::map<std::string, AlgoModel>& algos) {
  CollectiveModel keys;
  check_one_choice(c, at);
  if (c["algos"]) keys.algos = parse_algos(c["algos"], yaml_child(at, "algos"));
  if (c["nccl_model"]) keys.nccl_model = parse_nccl_model(c["nccl_model"], yaml_child(at, "nccl_model"));
  if (c["default"])
    keys.defaults =
        parse_defaults(c["default"], yaml_child(at, "default"), keys.algos ? &*keys.algos : &algos);
  if (c["channels"]) {
    FakeModel channels;
    parse_channels(c["channels"], yaml_child(at, "channels"), channels);
    keys.default_channels = channels.default_channels;
    keys.channel_scale = channels.channel_scale;
  }
  if (c["effects"]) keys.effects = parse_effects(c["effects"], yaml_child(at, "effects"));
  if (c["faults"]) keys.faults = parse_faults(c["faults"], yaml_child(at, "faults"));
  return keys;
}

std::map<std::string, CollectiveModel> parse_collectives(const YAML::Node& node, const std::string& path,
                                                         const std::map<std::string, AlgoModel>& algos) {
  yaml_expect_map(node, path);
  yaml_check_keys(node, path,
                  {"all_reduce", "all_gather", "reduce_scatter", "alltoall", "broadcast", "reduce"});
  std::map<std::string, CollectiveModel> collectives;
  for (const auto& entry : node) {
    const std::string op = entry.first.Scalar();
    const std::string at = yaml_child(path, op);
    yaml_expect_map(entry.second, at);
    yaml_check_keys(entry.second, at, {"default", "nccl_model", "algos", "channels", "effects", "faults"});
    collectives[op] = parse_override(entry.second, at, algos);
  }
  return collectives;
}

// Whether NCCL can run `pair` as its own choice on `nodes` nodes with `ranks_per_node` ranks on
// each (0: any): NVLS on one node only, NVLSTree on more than one (ncclTopoTuneModel,
// src/graph/tuning.cc), both with 2 or more GPUs of the communicator on a node (ncclNvlsInit,
// src/transport/nvls.cc); LL128 not where `ll128_default` is false (protoEnable 2). "" if it can.
std::string why_nccl_cannot_run(const DefaultChoice& pair, int nodes, int ranks_per_node, bool ll128_default) {
  const bool nvls = pair.algo == "NVLS" || pair.algo == "NVLSTree";
  if (pair.algo == "NVLS" && nodes > 1) return "NCCL runs NVLS on one node only (no CollNet)";
  if (pair.algo == "NVLSTree" && nodes == 1) return "NCCL runs NVLSTree on more than one node only";
  if (nvls && ranks_per_node == 1) return "NCCL runs " + pair.algo + " only with 2 or more GPUs on a node";
  if (pair.algo == "CollNetDirect" || pair.algo == "CollNetChain") return "the fake has no CollNet network";
  if (pair.proto == "LL128" && !ll128_default) return "ll128_default is false: NCCL leaves LL128 off";
  return "";
}

// A `nodes` entry's own default tables (its `default` and its collectives'): each pair must be
// one NCCL can pick at the entry's node count.
void check_entry_defaults(const YAML::Node& entry_node, const std::string& at, const NodeCountModel& entry,
                          bool ll128_default) {
  const int ranks = entry.ranks_per_node.value_or(0);
  const bool ll128 = entry.ll128_default.value_or(ll128_default);
  auto check = [&](const YAML::Node& table, const std::string& path, const std::vector<DefaultChoice>& choices) {
    for (std::size_t i = 0; i < choices.size(); ++i) {
      const std::string why = why_nccl_cannot_run(choices[i], entry.min_nodes, ranks, ll128);
      if (!why.empty())
        fail(table[i], yaml_item(path, i),
             choices[i].algo + "/" + choices[i].proto + " cannot be NCCL's choice on " +
                 std::to_string(entry.min_nodes) + " node(s): " + why);
    }
  };
  if (entry.keys.defaults) check(entry_node["default"], yaml_child(at, "default"), *entry.keys.defaults);
  for (const auto& [op, keys] : entry.collectives)
    if (keys.defaults)
      check(entry_node["collectives"][op]["default"], yaml_child(yaml_child(yaml_child(at, "collectives"), op), "default"),
            *keys.defaults);
}

std::vector<NodeCountModel> parse_nodes(const YAML::Node& node, const std::string& path,
                                        const std::map<std::string, AlgoModel>& top_algos, bool ll128_default) {
  yaml_expect_list(node, path);
  std::vector<NodeCountModel> entries;
  for (std::size_t i = 0; i < node.size(); ++i) {
    const std::string at = yaml_item(path, i);
    yaml_expect_map(node[i], at);
    yaml_check_keys(node[i], at,
                    {"min_nodes", "ranks_per_node", "default", "nccl_model", "algos", "channels", "effects",
                     "faults", "collectives", "ll128_default"});
    NodeCountModel entry;
    entry.min_nodes = small_integer(required(node[i], at, "min_nodes"), yaml_child(at, "min_nodes"), 1);
    if (node[i]["ranks_per_node"])
      entry.ranks_per_node = small_integer(node[i]["ranks_per_node"], yaml_child(at, "ranks_per_node"), 1);
    if (node[i]["ll128_default"])
      entry.ll128_default = yaml_boolean(node[i]["ll128_default"], yaml_child(at, "ll128_default"));
    for (const NodeCountModel& before : entries)
      if (before.min_nodes == entry.min_nodes && before.ranks_per_node == entry.ranks_per_node)
        fail(node[i]["min_nodes"], yaml_child(at, "min_nodes"),
             std::to_string(entry.min_nodes) +
                 (entry.ranks_per_node ? " with ranks_per_node " + std::to_string(*entry.ranks_per_node) : "") +
                 " is given twice");
    entry.keys = parse_override(node[i], at, top_algos);
    if (node[i]["collectives"])
      entry.collectives = parse_collectives(node[i]["collectives"], yaml_child(at, "collectives"),
                                            entry.keys.algos ? *entry.keys.algos : top_algos);
    check_entry_defaults(node[i], at, entry, ll128_default);
    entries.push_back(std::move(entry));
  }
  // Ascending; at equal min_nodes the entry without ranks_per_node first (the exact one wins).
  std::sort(entries.begin(), entries.end(), [](const NodeCountModel& a, const NodeCountModel& b) {
    return std::pair(a.min_nodes, a.ranks_per_node.has_value()) < std::pair(b.min_nodes, b.ranks_per_node.has_value());
  });
  return entries;
}

// Every model an op can run under holds the pairs of its default table: an entry that replaces
// `algos` must keep the pairs of the `default` that applies with it, or give its own.
void check_resolved_models(const YAML::Node& root, const FakeModel& model) {
  std::vector<std::pair<int, int>> shapes{{1, 0}};  // (nodes, ranks per node)
  for (const NodeCountModel& entry : model.nodes) shapes.emplace_back(entry.min_nodes, entry.ranks_per_node.value_or(0));
  for (const auto& [nodes, ranks_per_node] : shapes) {
    for (const char* op : {"all_reduce", "all_gather", "reduce_scatter", "alltoall", "broadcast", "reduce"}) {
      const FakeModel resolved = model_for_collective(model, op, nodes, ranks_per_node);
      // NCCL never picks LL128 where it does not trust it (ll128_trust.h); one GPU per node
      // needs an entry's ranks_per_node: 1.
      const std::string untrusted =
          why_ll128_untrusted(resolved, {}, nodes, ranks_per_node > 0 ? ranks_per_node : 2);
      for (const DefaultChoice& choice : resolved.defaults)
        if (choice.proto == "LL128" && !untrusted.empty())
          fail(nodes == 1 ? root : root["nodes"], nodes == 1 ? "default" : "nodes",
               std::string(op) + " on " + std::to_string(nodes) + " node(s) runs a default of " +
                   choice.algo + "/LL128, which NCCL does not trust there: " + untrusted);
      for (const DefaultChoice& choice : resolved.defaults) {
        const auto algo = resolved.algos.find(choice.algo);
        if (algo != resolved.algos.end() && algo->second.protos.contains(choice.proto)) continue;
        const std::string pair = choice.algo + "/" + choice.proto;
        if (nodes == 1 && (model.nodes.empty() || model.nodes.front().min_nodes > 1)) {
          YAML::Node where = root["collectives"];
          if (where && where[op] && where[op]["algos"]) where = where[op]["algos"];
          fail(where ? where : root, yaml_child(yaml_child("collectives", op), "algos"),
               "its algos lack " + pair + ", which the top-level default uses; give it a default");
        }
        fail(root["nodes"], "nodes",
             std::string(op) + " on " + std::to_string(nodes) + " node(s) runs a default of " + pair +
                 " that its algos lack; give that entry its own default");
      }
    }
  }
}

// `paths: {gpu: NVL, nic: PIX}`: NCCL's path type names, as topoPathTypeStr spells them. PXN
// needs NVLink between the GPUs (the relay GPU is reached over it).
NodePaths parse_paths(const YAML::Node& node, const std::string& path) {
  yaml_expect_map(node, path);
  yaml_check_keys(node, path, {"gpu", "nic"});
  NodePaths paths;
  const auto type = [&](const char* key, std::initializer_list<std::string_view> allowed) {
    const std::string at = yaml_child(path, key);
    const std::string name = yaml_text(node[key], at);
    const std::optional<int> found = nccl_path_type(name);
    if (!found || std::find(allowed.begin(), allowed.end(), name) == allowed.end()) {
      std::string names;
      for (std::string_view one : allowed) names += (names.empty() ? "" : ", ") + std::string(one);
      fail(node[key], at, "'" + name + "' is not one of " + names);
    }
    return *found;
  };
  if (node["gpu"]) paths.gpu = type("gpu", {"NVL", "NVB", "C2C", "PIX", "PXB", "PHB", "SYS"});
  if (node["nic"]) paths.nic = type("nic", {"PIX", "PXB", "P2C", "PXN", "PHB", "SYS"});
  if (paths.nic == *nccl_path_type("PXN") && paths.gpu != *nccl_path_type("NVL"))
    fail(node["nic"], yaml_child(path, "nic"), "PXN needs NVLink between the GPUs (gpu: NVL)");
  return paths;
}

// `init_cost_ms: {cuda_context: 400, nccl_comm: 1200, nccl_split: 150, nccl_split_shared: 100}`: whole
// milliseconds, 0 or more.
InitCost parse_init_cost(const YAML::Node& node, const std::string& path) {
  yaml_expect_map(node, path);
  yaml_check_keys(node, path, {"cuda_context", "nccl_comm", "nccl_split", "nccl_split_shared"});
  InitCost cost;
  if (node["cuda_context"])
    cost.cuda_context_ms = small_integer(node["cuda_context"], yaml_child(path, "cuda_context"), 0);
  if (node["nccl_comm"])
    cost.nccl_comm_ms = small_integer(node["nccl_comm"], yaml_child(path, "nccl_comm"), 0);
  if (node["nccl_split"])
    cost.nccl_split_ms = small_integer(node["nccl_split"], yaml_child(path, "nccl_split"), 0);
  if (node["nccl_split_shared"])
    cost.nccl_split_shared_ms =
        small_integer(node["nccl_split_shared"], yaml_child(path, "nccl_split_shared"), 0);
  return cost;
}

// `mnnvl: {hosts_per_domain: 18, health_mask: "0x1aa", imex: true}`. The mask is NVML's, printed
// as NCCL prints it: hexadecimal text ("0x1a9"), 0 to 0xffffffff.
MnnvlModel parse_mnnvl(const YAML::Node& node, const std::string& path) {
  yaml_expect_map(node, path);
  yaml_check_keys(node, path, {"hosts_per_domain", "health_mask", "imex"});
  MnnvlModel mnnvl;
  mnnvl.hosts_per_domain =
      small_integer(required(node, path, "hosts_per_domain"), yaml_child(path, "hosts_per_domain"), 1);
  if (const YAML::Node mask = node["health_mask"]) {
    const std::string at = yaml_child(path, "health_mask");
    const std::string text = yaml_text(mask, at);
    std::uint32_t value = 0;
    const char* first = text.data() + 2;
    const char* last = text.data() + text.size();
    const bool hex = text.size() > 2 && text.size() <= 10 && (text.starts_with("0x") || text.starts_with("0X"));
    const auto [end, error] = hex ? std::from_chars(first, last, value, 16) : std::from_chars_result{first, std::errc::invalid_argument};
    if (!hex || error != std::errc() || end != last)
      fail(mask, at, "'" + text + "' is not a hexadecimal mask (0x0 to 0xffffffff)");
    mnnvl.health_mask = value;
  }
  if (node["imex"]) mnnvl.imex = yaml_boolean(node["imex"], yaml_child(path, "imex"));
  return mnnvl;
}

FakeModel parse_root(const YAML::Node& root) {
  yaml_check_keys(root, "",
                  {"schema", "devices", "device_count", "nccl_version", "default", "nccl_model", "channels",
                   "algos", "effects", "faults", "noise", "nccl_log", "collectives", "nodes", "init_cost_ms",
                   "ll128_default", "mnnvl", "paths"});
  check_one_choice(root, "");
  FakeModel model;
  const std::string schema = yaml_text(required(root, "", "schema"), "schema");
  if (schema != kModelSchema)
    fail(root["schema"], "schema", "'" + schema + "' is not " + std::string(kModelSchema));
  if (root["devices"]) model.devices = parse_devices(root["devices"], "devices");
  model.device_count = std::max(model.device_count, static_cast<int>(model.devices.size()));
  if (root["device_count"]) model.device_count = small_integer(root["device_count"], "device_count", 1);
  if (root["nccl_version"]) model.nccl_version = small_integer(root["nccl_version"], "nccl_version", 1);
  model.algos = parse_algos(required(root, "", "algos"), "algos");
  if (root["default"]) model.defaults = parse_defaults(root["default"], "default", &model.algos);
  if (root["nccl_model"]) model.nccl_model = parse_nccl_model(root["nccl_model"], "nccl_model");
  if (root["ll128_default"]) model.ll128_default = yaml_boolean(root["ll128_default"], "ll128_default");
  for (std::size_t i = 0; i < model.defaults.size(); ++i)
    if (model.defaults[i].proto == "LL128" && !model.ll128_default)
      fail(root["default"][i], yaml_item("default", i), "ll128_default is false: NCCL leaves LL128 off, never its choice");
  if (root["channels"]) parse_channels(root["channels"], "channels", model);
  if (root["effects"]) model.effects = parse_effects(root["effects"], "effects");
  if (root["faults"]) model.faults = parse_faults(root["faults"], "faults");
  if (root["noise"]) model.noise = parse_noise(root["noise"], "noise");
  if (root["nccl_log"]) model.nccl_log = parse_nccl_log(root["nccl_log"], "nccl_log");
  if (root["collectives"])
    model.collectives = parse_collectives(root["collectives"], "collectives", model.algos);
  if (root["nodes"]) model.nodes = parse_nodes(root["nodes"], "nodes", model.algos, model.ll128_default);
  if (root["init_cost_ms"]) model.init_cost = parse_init_cost(root["init_cost_ms"], "init_cost_ms");
  if (root["mnnvl"]) model.mnnvl = parse_mnnvl(root["mnnvl"], "mnnvl");
  if (root["paths"]) model.paths = parse_paths(root["paths"], "paths");
  check_resolved_models(root, model);
  return model;
}

}  // namespace

std::string_view to_string(FaultKind kind) {
  switch (kind) {
    case FaultKind::init_error: return "init_error";
    case FaultKind::hang: return "hang";
    case FaultKind::crash: return "crash";
    case FaultKind::corrupt: return "corrupt";
    case FaultKind::slow_rank: return "slow_rank";
    case FaultKind::slow_node: return "slow_node";
    case FaultKind::slow_link: return "slow_link";
    case FaultKind::late_rank: return "late_rank";
  }
  return "?";
}

bool only_slows(FaultKind kind) {
  return kind == FaultKind::slow_rank || kind == FaultKind::slow_node || kind == FaultKind::slow_link;
}

std::string_view to_string(FaultPath path) {
  switch (path) {
    case FaultPath::any: return "any";
    case FaultPath::network: return "network";
    case FaultPath::local: return "local";
  }
  return "?";
}

std::string_view to_string(NcclTransport transport) {
  switch (transport) {
    case NcclTransport::ib: return "IB";
    case NcclTransport::roce: return "RoCE";
    case NcclTransport::socket: return "Socket";
  }
  return "?";
}

std::optional<std::string> canonical_algo(std::string_view name) {
  return canonical(name, kNcclAlgorithms);
}

std::optional<std::string> canonical_proto(std::string_view name) {
  return canonical(name, kNcclProtocols);
}

namespace {

// NCCL's choice is given one way per level: the more specific level's `default` or `nccl_model`
// replaces both of the level under it.
void apply(FakeModel& out, const CollectiveModel& keys) {
  if (keys.defaults) {
    out.defaults = *keys.defaults;
    out.nccl_model.clear();
  }
  if (keys.nccl_model) {
    out.nccl_model = *keys.nccl_model;
    out.defaults.clear();
  }
  if (keys.algos) out.algos = *keys.algos;
  if (keys.default_channels) out.default_channels = *keys.default_channels;
  if (keys.channel_scale) out.channel_scale = *keys.channel_scale;
  if (keys.effects) out.effects = *keys.effects;
  if (keys.faults) out.faults = *keys.faults;
}

// Later keys win: `over` given in an entry replaces `under`'s.
CollectiveModel merged(CollectiveModel under, const CollectiveModel& over) {
  if (over.defaults) {
    under.defaults = over.defaults;
    under.nccl_model.reset();
  }
  if (over.nccl_model) {
    under.nccl_model = over.nccl_model;
    under.defaults.reset();
  }
  if (over.algos) under.algos = over.algos;
  if (over.default_channels) under.default_channels = over.default_channels;
  if (over.channel_scale) under.channel_scale = over.channel_scale;
  if (over.effects) under.effects = over.effects;
  if (over.faults) under.faults = over.faults;
  return under;
}

}  // namespace

FakeModel model_for_nodes(const FakeModel& model, int nodes, int ranks_per_node) {
  FakeModel out = model;
  out.nodes.clear();
  out.for_nodes = nodes;
  const NodeCountModel* entry = nullptr;
  for (const NodeCountModel& candidate : model.nodes)
    if (candidate.min_nodes <= nodes && (!candidate.ranks_per_node || *candidate.ranks_per_node == ranks_per_node))
      entry = &candidate;
  if (!entry) return out;
  if (entry->ll128_default) out.ll128_default = *entry->ll128_default;
  apply(out, entry->keys);
  for (const auto& [op, keys] : entry->collectives) out.collectives[op] = merged(out.collectives[op], keys);
  return out;
}

FakeModel model_for_collective(const FakeModel& model, std::string_view op, int nodes, int ranks_per_node) {
  FakeModel out = model_for_nodes(model, nodes > 0 ? nodes : model.for_nodes, ranks_per_node);
  const auto it = out.collectives.find(std::string(op));
  if (it != out.collectives.end()) apply(out, it->second);
  out.collectives.clear();
  return out;
}

Result<FakeModel> parse_fake_model(const std::string& text, const std::string& file) {
  FakeModel model;
  const Status parsed = parse_strict_yaml(text, file, [&](const YAML::Node& root) {
    if (root.IsNull()) yaml_fail(1, "", "the model is empty");
    model = parse_root(root);
  });
  if (!parsed) return Error{parsed.error()};
  model.file = file;
  return model;
}

Result<FakeModel> load_fake_model(const std::string& path) {
  Result<std::string> text = read_text_file(path, kMaxConfigBytes);
  if (!text) return Error{"cannot read fake model: " + text.error()};
  return parse_fake_model(*text, path);
}

std::string tagged_model_variable(std::string_view library_path) {
  constexpr std::string_view kPrefix = "libfakenccl-";
  const std::size_t slash = library_path.rfind('/');
  std::string_view name = slash == std::string_view::npos ? library_path : library_path.substr(slash + 1);
  if (name.substr(0, kPrefix.size()) != kPrefix) return "";
  name.remove_prefix(kPrefix.size());
  const std::size_t suffix = name.find(".so");
  if (suffix == std::string_view::npos || suffix == 0) return "";
  const std::string_view tag = name.substr(0, suffix);
  for (const char c : tag)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return "";
  return "NCCLTUNE_FAKE_MODEL_" + std::string(tag);
}

}  // namespace nccltune::fake
