#include "fake_model.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <initializer_list>
#include <sstream>

namespace nccltune::fake {

namespace {

constexpr std::array<std::string_view, 7> kAlgoNames = {
    "Tree", "Ring", "CollnetDirect", "CollnetChain", "NVLS", "NVLSTree", "PAT"};
constexpr std::array<std::string_view, 3> kProtoNames = {"LL", "LL128", "Simple"};

bool same_name(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

template <std::size_t N>
std::optional<std::string> canonical(std::string_view name, const std::array<std::string_view, N>& names) {
  for (std::string_view known : names)
    if (same_name(name, known)) return std::string(known);
  return std::nullopt;
}

// Thrown inside the parser only; parse_fake_model turns it into an Error.
struct ModelError {
  std::string message;
};

[[noreturn]] void fail(const std::string& message) {
  throw ModelError{message};
}

std::string child(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : path + "." + std::string(key);
}

std::string item(const std::string& path, std::size_t index) {
  return path + "[" + std::to_string(index) + "]";
}

void expect_map(const YAML::Node& node, const std::string& path) {
  if (!node.IsMap()) fail("'" + path + "' must be a map");
}

void expect_list(const YAML::Node& node, const std::string& path) {
  if (!node.IsSequence()) fail("'" + path + "' must be a list");
}

// Every key of `node` must be one of `allowed`.
void check_keys(const YAML::Node& node, const std::string& path,
                std::initializer_list<std::string_view> allowed) {
  expect_map(node, path.empty() ? "the model" : path);
  for (const auto& entry : node) {
    const std::string key = entry.first.Scalar();
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end())
      fail("unknown key '" + child(path, key) + "'");
  }
}

YAML::Node required(const YAML::Node& map, const std::string& path, const char* key) {
  const YAML::Node node = map[key];
  if (!node) fail("missing key '" + child(path, key) + "'");
  return node;
}

std::string text(const YAML::Node& node, const std::string& path) {
  if (!node.IsScalar()) fail("'" + path + "' must be a string");
  return node.Scalar();
}

double number(const YAML::Node& node, const std::string& path) {
  if (node.IsScalar()) {
    std::istringstream in(node.Scalar());
    double value = 0;
    if (in >> value && (in >> std::ws).eof()) return value;
  }
  fail("'" + path + "' must be a number");
}

int64_t integer(const YAML::Node& node, const std::string& path) {
  if (node.IsScalar()) {
    std::istringstream in(node.Scalar());
    int64_t value = 0;
    if (in >> value && (in >> std::ws).eof()) return value;
  }
  fail("'" + path + "' must be an integer");
}

int small_integer(const YAML::Node& node, const std::string& path, int64_t min) {
  const int64_t value = integer(node, path);
  if (value < min || value > (int64_t{1} << 30))
    fail("'" + path + "' must be an integer from " + std::to_string(min));
  return static_cast<int>(value);
}

double positive(const YAML::Node& node, const std::string& path) {
  const double value = number(node, path);
  if (!(value > 0)) fail("'" + path + "' must be above 0");
  return value;
}

double non_negative(const YAML::Node& node, const std::string& path) {
  const double value = number(node, path);
  if (!(value >= 0)) fail("'" + path + "' must not be negative");
  return value;
}

std::optional<std::string> condition_value(const YAML::Node& node, const std::string& path) {
  if (node.IsNull()) return std::nullopt;
  return text(node, path);
}

Condition parse_condition(const YAML::Node& node, const std::string& path) {
  expect_map(node, path);
  Condition condition;
  for (const auto& entry : node) {
    const std::string name = entry.first.Scalar();
    const std::string key_path = child(path, name);
    if (name.rfind("NCCL_", 0) != 0) fail("'" + key_path + "' is not an NCCL_ variable");
    std::vector<std::optional<std::string>>& values = condition[name];
    if (entry.second.IsSequence()) {
      for (std::size_t i = 0; i < entry.second.size(); ++i)
        values.push_back(condition_value(entry.second[i], item(key_path, i)));
    } else {
      values.push_back(condition_value(entry.second, key_path));
    }
  }
  return condition;
}

std::vector<FakeDevice> parse_devices(const YAML::Node& node, const std::string& path) {
  expect_list(node, path);
  if (node.size() == 0) fail("'" + path + "' must list at least one device");
  std::vector<FakeDevice> devices;
  for (std::size_t i = 0; i < node.size(); ++i) {
    const std::string at = item(path, i);
    check_keys(node[i], at, {"name", "pci", "sm"});
    FakeDevice device;
    device.name = text(required(node[i], at, "name"), child(at, "name"));
    device.pci = text(required(node[i], at, "pci"), child(at, "pci"));
    device.sm = small_integer(required(node[i], at, "sm"), child(at, "sm"), 10);
    devices.push_back(device);
  }
  return devices;
}

std::map<std::string, AlgoModel> parse_algos(const YAML::Node& node, const std::string& path) {
  expect_map(node, path);
  std::map<std::string, AlgoModel> algos;
  for (const auto& entry : node) {
    const std::string name = entry.first.Scalar();
    const std::optional<std::string> algo = canonical(name, kAlgoNames);
    const std::string algo_path = child(path, name);
    if (!algo) fail("unknown key '" + algo_path + "'");
    expect_map(entry.second, algo_path);
    AlgoModel model;
    for (const auto& proto_entry : entry.second) {
      const std::string key = proto_entry.first.Scalar();
      const std::string key_path = child(algo_path, key);
      if (key == "requires") {
        model.requires_env = parse_condition(proto_entry.second, key_path);
        continue;
      }
      const std::optional<std::string> proto = canonical(key, kProtoNames);
      if (!proto) fail("unknown key '" + key_path + "'");
      check_keys(proto_entry.second, key_path, {"lat_us", "busbw_gbps"});
      ProtoCost cost;
      cost.lat_us = non_negative(required(proto_entry.second, key_path, "lat_us"), child(key_path, "lat_us"));
      cost.busbw_gbps =
          positive(required(proto_entry.second, key_path, "busbw_gbps"), child(key_path, "busbw_gbps"));
      model.protos[*proto] = cost;
    }
    if (model.protos.empty()) fail("'" + algo_path + "' has no protocol");
    algos[*algo] = model;
  }
  if (algos.empty()) fail("'" + path + "' has no algorithm");
  return algos;
}

std::vector<DefaultChoice> parse_defaults(const YAML::Node& node, const std::string& path,
                                          const std::map<std::string, AlgoModel>& algos) {
  expect_list(node, path);
  std::vector<DefaultChoice> defaults;
  for (std::size_t i = 0; i < node.size(); ++i) {
    const std::string at = item(path, i);
    check_keys(node[i], at, {"max_bytes", "algo", "proto"});
    DefaultChoice choice;
    if (node[i]["max_bytes"]) choice.max_bytes = integer(node[i]["max_bytes"], child(at, "max_bytes"));
    const std::string algo = text(required(node[i], at, "algo"), child(at, "algo"));
    const std::string proto = text(required(node[i], at, "proto"), child(at, "proto"));
    const std::optional<std::string> known_algo = canonical(algo, kAlgoNames);
    const std::optional<std::string> known_proto = canonical(proto, kProtoNames);
    if (!known_algo || !algos.contains(*known_algo))
      fail("'" + child(at, "algo") + "': " + algo + " is not in 'algos'");
    if (!known_proto || !algos.at(*known_algo).protos.contains(*known_proto))
      fail("'" + child(at, "proto") + "': " + *known_algo + " has no " + proto + " in 'algos'");
    choice.algo = *known_algo;
    choice.proto = *known_proto;
    defaults.push_back(choice);
  }
  return defaults;
}

void parse_channels(const YAML::Node& node, const std::string& path, FakeModel& model) {
  check_keys(node, path, {"default", "busbw_scale"});
  model.default_channels = small_integer(required(node, path, "default"), child(path, "default"), 1);
  if (const YAML::Node scales = node["busbw_scale"]) {
    const std::string scales_path = child(path, "busbw_scale");
    expect_map(scales, scales_path);
    for (const auto& entry : scales) {
      const std::string key_path = child(scales_path, entry.first.Scalar());
      const int channels = small_integer(entry.first, key_path, 1);
      model.channel_scale[channels] = positive(entry.second, key_path);
    }
  }
}

std::vector<Effect> parse_effects(const YAML::Node& node, const std::string& path) {
  expect_list(node, path);
  std::vector<Effect> effects;
  for (std::size_t i = 0; i < node.size(); ++i) {
    const std::string at = item(path, i);
    check_keys(node[i], at, {"when", "busbw_scale", "lat_scale"});
    Effect effect;
    effect.when = parse_condition(required(node[i], at, "when"), child(at, "when"));
    if (node[i]["busbw_scale"])
      effect.busbw_scale = positive(node[i]["busbw_scale"], child(at, "busbw_scale"));
    if (node[i]["lat_scale"]) effect.lat_scale = positive(node[i]["lat_scale"], child(at, "lat_scale"));
    effects.push_back(effect);
  }
  return effects;
}

FaultKind parse_fault_kind(const std::string& name, const std::string& path) {
  for (FaultKind kind :
       {FaultKind::init_error, FaultKind::hang, FaultKind::crash, FaultKind::corrupt, FaultKind::slow_rank})
    if (to_string(kind) == name) return kind;
  fail("'" + path + "': unknown fault '" + name + "' (init_error, hang, crash, corrupt or slow_rank)");
}

std::vector<Fault> parse_faults(const YAML::Node& node, const std::string& path) {
  expect_list(node, path);
  std::vector<Fault> faults;
  for (std::size_t i = 0; i < node.size(); ++i) {
    const std::string at = item(path, i);
    check_keys(node[i], at, {"when", "fault", "rank", "factor"});
    Fault fault;
    if (node[i]["when"]) fault.when = parse_condition(node[i]["when"], child(at, "when"));
    fault.kind =
        parse_fault_kind(text(required(node[i], at, "fault"), child(at, "fault")), child(at, "fault"));
    if (node[i]["rank"]) fault.rank = small_integer(node[i]["rank"], child(at, "rank"), 0);
    if (node[i]["factor"]) fault.factor = positive(node[i]["factor"], child(at, "factor"));
    faults.push_back(fault);
  }
  return faults;
}

Noise parse_noise(const YAML::Node& node, const std::string& path) {
  check_keys(node, path, {"cv", "seed"});
  Noise noise;
  if (node["cv"]) noise.cv = non_negative(node["cv"], child(path, "cv"));
  if (node["seed"]) noise.seed = static_cast<uint64_t>(integer(node["seed"], child(path, "seed")));
  return noise;
}

FakeModel parse_root(const YAML::Node& root) {
  check_keys(root, "",
             {"schema", "devices", "device_count", "nccl_version", "default", "channels", "algos", "effects",
              "faults", "noise"});
  FakeModel model;
  const std::string schema = text(required(root, "", "schema"), "schema");
  if (schema != kModelSchema) fail("schema '" + schema + "' is not " + std::string(kModelSchema));
  if (root["devices"]) model.devices = parse_devices(root["devices"], "devices");
  model.device_count = std::max(model.device_count, static_cast<int>(model.devices.size()));
  if (root["device_count"]) model.device_count = small_integer(root["device_count"], "device_count", 1);
  if (root["nccl_version"]) model.nccl_version = small_integer(root["nccl_version"], "nccl_version", 1);
  model.algos = parse_algos(required(root, "", "algos"), "algos");
  if (root["default"]) model.defaults = parse_defaults(root["default"], "default", model.algos);
  if (root["channels"]) parse_channels(root["channels"], "channels", model);
  if (root["effects"]) model.effects = parse_effects(root["effects"], "effects");
  if (root["faults"]) model.faults = parse_faults(root["faults"], "faults");
  if (root["noise"]) model.noise = parse_noise(root["noise"], "noise");
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
  }
  return "?";
}

std::optional<std::string> canonical_algo(std::string_view name) {
  return canonical(name, kAlgoNames);
}

std::optional<std::string> canonical_proto(std::string_view name) {
  return canonical(name, kProtoNames);
}

Result<FakeModel> parse_fake_model(const std::string& text, const std::string& file) {
  try {
    const YAML::Node root = YAML::Load(text);
    if (!root || root.IsNull()) return Error{file + ": the model is empty"};
    FakeModel model = parse_root(root);
    model.file = file;
    return model;
  } catch (const ModelError& error) {
    return Error{file + ": " + error.message};
  } catch (const YAML::Exception& error) {
    return Error{file + ": line " + std::to_string(error.mark.line + 1) + ": " + error.msg};
  }
}

Result<FakeModel> load_fake_model(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Error{"cannot read fake model '" + path + "': " + std::strerror(errno)};
  std::ostringstream text;
  text << in.rdbuf();
  return parse_fake_model(text.str(), path);
}

}  // namespace nccltune::fake
