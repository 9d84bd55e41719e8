#include "profile/nccl_observed.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <initializer_list>
#include <limits>
#include <sstream>
#include <type_traits>

#include "base/byte_size.h"
#include "base/clean_text.h"
#include "base/printable_text.h"
#include "base/strict_yaml.h"
#include "base/text_words.h"
#include "profile/nccl_names.h"
#include "profile/profile.h"
#include "profile/size_ranges.h"

namespace nccltune {
namespace {

// ---- comparing names --------------------------------------------------------------------------

// Whether a per_size value ("Tree", "Ring,Tree", "^LL128"; empty: NCCL's own choice, so anything)
// allows what NCCL's log names ("NVLS_TREE").
bool allows(std::string_view value, std::string_view logged) {
  return value.empty() || nccl_list_allows(value, nccl_name_from_log(logged));
}

// Whether two names NCCL's log prints are the same ("NVLS_TREE", "NVLSTree"; "SIMPLE", "Simple").
bool same_logged_name(std::string_view a, std::string_view b) {
  return upper_ascii(nccl_name_from_log(a)) == upper_ascii(nccl_name_from_log(b));
}

// ---- writing ----------------------------------------------------------------------------------

std::string clean_quoted(std::string_view text) {
  return yaml_quoted(cleaned_text(text));
}

template <class T>
void write_optional(std::ostream& out, const char* key, const std::optional<T>& value) {
  if (!value) return;
  out << ", " << key << ": ";
  if constexpr (std::is_same_v<T, bool>)
    out << (*value ? "true" : "false");
  else
    out << *value;
}

void write_observation(std::ostream& out, const char* name, const NcclObservation& o,
                       const std::string& indent = "    ") {
  const std::string in = indent + "  ";
  out << indent << name << ":\n"
      << in << "nccl_version: " << clean_quoted(o.nccl_version) << "\n"
      << in << "transport: " << clean_quoted(o.transport) << "\n"
      << in << "net_plugin: " << clean_quoted(o.net_plugin) << "\n"
      << in << "hcas: [";
  for (std::size_t i = 0; i < o.hcas.size() && i < kMaxObservedEntries; ++i)
    out << (i ? ", " : "") << clean_quoted(o.hcas[i]);
  out << "]\n";
  out << in << "network: {";
  std::ostringstream network;
  write_optional(network, "connections", o.connections);
  write_optional(network, "with_gdr", o.gdr_connections);
  write_optional(network, "nvls_available", o.nvls_available);
  write_optional(network, "nvls_channels", o.nvls_channels);
  write_optional(network, "coll_channels", o.coll_channels);
  out << (network.str().empty() ? "" : network.str().substr(2)) << "}\n";
  out << in << "tuner: " << clean_quoted(o.tuner) << "\n";
  if (o.choices.empty()) {
    out << in << "choices: []\n";
    return;
  }
  out << in << "choices:\n";
  for (std::size_t i = 0; i < o.choices.size() && i < kMaxObservedEntries; ++i) {
    const ObservedChoice& c = o.choices[i];
    out << in << "  - {op: " << clean_quoted(c.op) << ", bytes: " << c.bytes
        << ", algo: " << clean_quoted(c.algo) << ", proto: " << clean_quoted(c.proto) << "}\n";
  }
}

// The shortest text that reads back as `value` (finite: the reader refuses anything else).
std::string model_number_text(double value) {
  char buffer[64];
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
  return ec == std::errc() ? std::string(buffer, end) : std::string("0");
}

void write_nccl_model(std::ostream& out, const std::map<std::string, std::vector<ModelPair>>& model) {
  if (model.empty()) return;
  out << "    nccl_model:\n";
  for (const auto& [op, pairs] : model) {
    out << "      " << clean_quoted(op) << ":" << (pairs.empty() ? " []" : "") << "\n";
    for (std::size_t i = 0; i < pairs.size() && i < kMaxModelPairs; ++i) {
      const ModelPair& pair = pairs[i];
      out << "        - {algo: " << clean_quoted(pair.algo) << ", proto: " << clean_quoted(pair.proto)
          << ", latency_us: " << model_number_text(pair.latency_us);
      if (pair.busbw) out << ", busbw: " << model_number_text(*pair.busbw);
      out << "}\n";
    }
  }
}

// ---- reading ----------------------------------------------------------------------------------

std::uint64_t bytes_at(const YAML::Node& node, const std::string& field) {
  return static_cast<std::uint64_t>(yaml_integer(node, field, 0, std::numeric_limits<long long>::max()));
}

int count_at(const YAML::Node& node, const std::string& field) {
  return static_cast<int>(yaml_integer(node, field, 0, std::numeric_limits<int>::max()));
}

void expect_short_list(const YAML::Node& node, const std::string& field) {
  yaml_expect_list(node, field);
  if (node.size() > kMaxObservedEntries)
    yaml_fail(yaml_line(node), field, "more than " + std::to_string(kMaxObservedEntries) + " entries");
}

std::string text_at(const YAML::Node& map, const char* key, const std::string& field) {
  return map[key] ? yaml_text(map[key], yaml_child(field, key)) : std::string();
}

// Each entry of the list `key` of `map`: at most kMaxObservedEntries, each a map of only `keys`,
// given to `read` with its field name ("provenance.nccl_observed.verdicts[2]").
template <class Read>
void read_entries(const YAML::Node& map, const char* key, const std::string& field,
                  std::initializer_list<std::string_view> keys, const Read& read) {
  const YAML::Node list = map[key];
  if (!list) return;
  const std::string at = yaml_child(field, key);
  expect_short_list(list, at);
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string item = yaml_item(at, i);
    yaml_expect_map(list[i], item);
    yaml_check_keys(list[i], item, keys);
    read(list[i], item);
  }
}

std::uint64_t required_bytes(const YAML::Node& entry, const std::string& item) {
  if (!entry["bytes"]) yaml_fail(yaml_line(entry), yaml_child(item, "bytes"), "missing");
  return bytes_at(entry["bytes"], yaml_child(item, "bytes"));
}

NcclObservation parse_observation(const YAML::Node& node, const std::string& field) {
  yaml_expect_map(node, field);
  yaml_check_keys(node, field,
                  {"nccl_version", "transport", "net_plugin", "hcas", "network", "tuner", "choices"});
  NcclObservation o;
  o.nccl_version = text_at(node, "nccl_version", field);
  o.transport = text_at(node, "transport", field);
  o.net_plugin = text_at(node, "net_plugin", field);
  o.tuner = text_at(node, "tuner", field);
  if (const YAML::Node hcas = node["hcas"]) {
    expect_short_list(hcas, yaml_child(field, "hcas"));
    for (std::size_t i = 0; i < hcas.size(); ++i)
      o.hcas.push_back(yaml_text(hcas[i], yaml_item(yaml_child(field, "hcas"), i)));
  }
  if (const YAML::Node network = node["network"]) {
    const std::string at = yaml_child(field, "network");
    yaml_expect_map(network, at);
    yaml_check_keys(network, at,
                    {"connections", "with_gdr", "nvls_available", "nvls_channels", "coll_channels"});
    if (network["connections"])
      o.connections = count_at(network["connections"], yaml_child(at, "connections"));
    if (network["with_gdr"]) o.gdr_connections = count_at(network["with_gdr"], yaml_child(at, "with_gdr"));
    if (network["nvls_available"])
      o.nvls_available = yaml_boolean(network["nvls_available"], yaml_child(at, "nvls_available"));
    if (network["nvls_channels"])
      o.nvls_channels = count_at(network["nvls_channels"], yaml_child(at, "nvls_channels"));
    if (network["coll_channels"])
      o.coll_channels = count_at(network["coll_channels"], yaml_child(at, "coll_channels"));
    if (o.connections && o.gdr_connections && *o.gdr_connections > *o.connections)
      yaml_fail(yaml_line(network["with_gdr"]), yaml_child(at, "with_gdr"), "more than connections");
  }
  read_entries(node, "choices", field, {"op", "bytes", "algo", "proto"},
               [&o](const YAML::Node& c, const std::string& item) {
                 o.choices.push_back({text_at(c, "op", item), required_bytes(c, item),
                                      text_at(c, "algo", item), text_at(c, "proto", item)});
               });
  return o;
}

// A finite number from 0 (the model's latency and busbw).
double model_number_at(const YAML::Node& node, const std::string& field) {
  const double value = yaml_number(node, field);
  if (!(value >= 0)) yaml_fail(yaml_line(node), field, "must be a finite number from 0");
  return value;
}

// nccl_model: {<collective>: [{algo, proto, latency_us, busbw}]}, tuned collectives only.
std::map<std::string, std::vector<ModelPair>> parse_nccl_model(const YAML::Node& node, const std::string& field) {
  yaml_expect_map(node, field);
  std::map<std::string, std::vector<ModelPair>> model;
  for (const auto& entry : node) {
    const std::string op = entry.first.IsScalar() ? entry.first.Scalar() : std::string();
    if (!is_collective_name(op))
      yaml_fail(yaml_line(entry.first), field,
                "unknown collective '" + printable_excerpt(op, 40) + "' (" + std::string(kCollectiveNames) + ")");
    const std::string at = yaml_child(field, op);
    yaml_expect_list(entry.second, at);
    if (entry.second.size() > kMaxModelPairs)
      yaml_fail(yaml_line(entry.second), at, "more than " + std::to_string(kMaxModelPairs) + " entries");
    std::vector<ModelPair>& pairs = model[op];
    for (std::size_t i = 0; i < entry.second.size(); ++i) {
      const YAML::Node p = entry.second[i];
      const std::string item = yaml_item(at, i);
      yaml_expect_map(p, item);
      yaml_check_keys(p, item, {"algo", "proto", "latency_us", "busbw"});
      ModelPair pair{text_at(p, "algo", item), text_at(p, "proto", item), 0, std::nullopt};
      if (pair.algo.empty() || pair.proto.empty())
        yaml_fail(yaml_line(p), item, "algo and proto are required");
      if (p["latency_us"]) pair.latency_us = model_number_at(p["latency_us"], yaml_child(item, "latency_us"));
      if (p["busbw"]) pair.busbw = model_number_at(p["busbw"], yaml_child(item, "busbw"));
      pairs.push_back(std::move(pair));
    }
  }
  return model;
}

}  // namespace

const ModelPair* model_pair_for(const std::vector<ModelPair>& model, std::string_view choice) {
  const std::size_t slash = choice.find('/');
  if (slash == std::string_view::npos) return nullptr;
  for (const ModelPair& pair : model)
    if (same_logged_name(pair.algo, choice.substr(0, slash)) &&
        same_logged_name(pair.proto, choice.substr(slash + 1)))
      return &pair;
  return nullptr;
}

const NcclObservation* jobs_observation(const NcclObserved& observed) {
  if (observed.shipped) return &*observed.shipped;
  return observed.defaults ? &*observed.defaults : nullptr;
}

std::string observed_choice_at(const NcclObservation& observation, std::string_view op, std::uint64_t bytes) {
  for (const ObservedChoice& c : observation.choices)
    if (c.bytes == bytes && (c.op.empty() || c.op == op)) return c.algo + "/" + c.proto;
  return "";
}

std::vector<ChoiceContradiction> choice_contradictions(const NcclObservation& observation,
                                                       std::string_view op,
                                                       const std::vector<SizeChoice>& per_size,
                                                       const MeasuredRange& measured) {
  std::vector<ChoiceContradiction> found;
  for (const ObservedChoice& c : observation.choices) {
    if (!c.op.empty() && c.op != op) continue;
    if (measured.known() && (c.bytes < measured.min_bytes || c.bytes > measured.max_bytes)) continue;
    const SizeChoice* best = choice_for_size(per_size, c.bytes);
    if (best == nullptr || (allows(best->algo, c.algo) && allows(best->proto, c.proto))) continue;
    found.push_back(
        {std::string(op), c.bytes, c.algo + "/" + c.proto,
         (best->algo.empty() ? "auto" : best->algo) + "/" + (best->proto.empty() ? "auto" : best->proto)});
  }
  // By size, one per size (an op-less line and the op's own may both name one).
  std::stable_sort(found.begin(), found.end(),
                   [](const auto& a, const auto& b) { return a.bytes < b.bytes; });
  found.erase(std::unique(found.begin(), found.end(),
                          [](const auto& a, const auto& b) { return a.bytes == b.bytes; }),
              found.end());
  if (found.size() > kMaxObservedEntries) found.resize(kMaxObservedEntries);
  return found;
}

std::string describe_contradiction(const ChoiceContradiction& c) {
  return c.op + " at " + format_byte_size(c.bytes) + ": NCCL chose " + c.nccl + " under the shipped env; " +
         c.measured + " measured fastest (per_size: only the tuner plugin applies it)";
}

std::string describe_observation(const NcclObservation& o) {
  std::string out;
  auto part = [&out](const std::string& text) { out += (out.empty() ? "" : ", ") + text; };
  if (!o.transport.empty() || !o.net_plugin.empty())
    part((o.transport.empty() ? "network ?" : o.transport) +
         (o.net_plugin.empty() || o.net_plugin == o.transport ? "" : " (plugin " + o.net_plugin + ")"));
  if (!o.hcas.empty()) {
    std::string devices;
    for (std::size_t i = 0; i < o.hcas.size() && i < 4; ++i) devices += (i ? ", " : "") + o.hcas[i];
    part(std::to_string(o.hcas.size()) + (o.hcas.size() == 1 ? " device (" : " devices (") + devices +
         (o.hcas.size() > 4 ? ", ...)" : ")"));
  }
  if (o.connections && o.gdr_connections)
    part("GPUDirect RDMA on " + std::to_string(*o.gdr_connections) + " of " + std::to_string(*o.connections) +
         " connections");
  if (o.nvls_available)
    part(*o.nvls_available ? "NVLS " + std::to_string(o.nvls_channels.value_or(0)) + " channels"
                           : std::string("NVLS unavailable"));
  if (o.coll_channels) part(std::to_string(*o.coll_channels) + " channels");
  if (!o.tuner.empty()) part("tuner: " + o.tuner);
  return out;
}

std::string render_nccl_observed_lines(const NcclObserved& observed) {
  std::string out;
  if (observed.defaults) out += "NCCL said (defaults): " + describe_observation(*observed.defaults) + "\n";
  if (observed.shipped) {
    NcclObservation shipped_facts = *observed.shipped,
                    default_facts = observed.defaults.value_or(NcclObservation{});
    shipped_facts.choices.clear();
    default_facts.choices.clear();
    if (!observed.defaults || shipped_facts != default_facts)
      out += "NCCL said (with env): " + describe_observation(*observed.shipped) + "\n";
  }
  for (const ObservedVerdict& v : observed.verdicts)
    if (v.level != "info") out += "  " + v.level + "  " + v.check + ": " + v.message + "\n";
  for (const ChoiceContradiction& c : observed.contradictions)
    out += "  note  " + describe_contradiction(c) + "\n";
  for (const CommObserved& comm : observed.comms) {
    const NcclObservation* facts = comm.shipped ? &*comm.shipped : comm.defaults ? &*comm.defaults : nullptr;
    if (facts) out += "NCCL said (" + comm.comm + "): " + describe_observation(*facts) + "\n";
    for (const ObservedVerdict& v : comm.verdicts)
      if (v.level != "info") out += "  " + v.level + "  " + v.check + " (" + comm.comm + "): " + v.message + "\n";
  }
  return out;
}

namespace {

void write_verdicts(std::ostream& out, const std::vector<ObservedVerdict>& verdicts, const std::string& indent) {
  out << indent << "verdicts:" << (verdicts.empty() ? " []" : "") << "\n";
  for (std::size_t i = 0; i < verdicts.size() && i < kMaxObservedEntries; ++i) {
    const ObservedVerdict& v = verdicts[i];
    out << indent << "  - {level: " << clean_quoted(v.level) << ", check: " << clean_quoted(v.check)
        << ", message: " << clean_quoted(v.message) << "}\n";
  }
}

void read_verdicts(const YAML::Node& node, const std::string& field, std::vector<ObservedVerdict>& verdicts) {
  read_entries(node, "verdicts", field, {"level", "check", "message"},
               [&verdicts](const YAML::Node& v, const std::string& item) {
                 ObservedVerdict verdict{text_at(v, "level", item), text_at(v, "check", item),
                                         text_at(v, "message", item)};
                 if (verdict.level != "info" && verdict.level != "warn" && verdict.level != "fail")
                   yaml_fail(yaml_line(v), yaml_child(item, "level"), "expected info, warn or fail");
                 verdicts.push_back(std::move(verdict));
               });
}

// comms: {rail: {defaults: ..., shipped: ..., verdicts: [...]}, node: ...}, in the worker's order.
void write_comms(std::ostream& out, const std::vector<CommObserved>& comms) {
  if (comms.empty()) return;
  out << "    comms:\n";
  for (const CommObserved& comm : comms) {
    out << "      " << clean_quoted(comm.comm) << ":\n";
    if (comm.defaults) write_observation(out, "defaults", *comm.defaults, "        ");
    if (comm.shipped) write_observation(out, "shipped", *comm.shipped, "        ");
    write_verdicts(out, comm.verdicts, "        ");
  }
}

std::vector<CommObserved> parse_comms(const YAML::Node& node, const std::string& field) {
  yaml_expect_map(node, field);
  std::vector<CommObserved> comms;
  for (const auto& entry : node) {
    const std::string name = entry.first.IsScalar() ? entry.first.Scalar() : std::string();
    if (name.empty() || name.size() > 64 || comms.size() >= 8)
      yaml_fail(yaml_line(entry.first), field, "expected up to 8 communicator names (rail, node)");
    const std::string at = yaml_child(field, name);
    yaml_expect_map(entry.second, at);
    yaml_check_keys(entry.second, at, {"defaults", "shipped", "verdicts"});
    CommObserved comm{name, {}, {}, {}};
    if (entry.second["defaults"])
      comm.defaults = parse_observation(entry.second["defaults"], yaml_child(at, "defaults"));
    if (entry.second["shipped"])
      comm.shipped = parse_observation(entry.second["shipped"], yaml_child(at, "shipped"));
    read_verdicts(entry.second, at, comm.verdicts);
    comms.push_back(std::move(comm));
  }
  return comms;
}

}  // namespace

void write_nccl_observed(std::ostream& out, const NcclObserved& observed) {
  if (observed.empty() && observed.verdicts.empty() && observed.nccl_model.empty() && observed.comms.empty())
    return;
  out << "  nccl_observed:\n";
  if (observed.defaults) write_observation(out, "defaults", *observed.defaults);
  if (observed.shipped) write_observation(out, "shipped", *observed.shipped);
  write_verdicts(out, observed.verdicts, "    ");
  out << "    contradictions:" << (observed.contradictions.empty() ? " []" : "") << "\n";
  for (std::size_t i = 0; i < observed.contradictions.size() && i < kMaxObservedEntries; ++i) {
    const ChoiceContradiction& c = observed.contradictions[i];
    out << "      - {op: " << clean_quoted(c.op) << ", bytes: " << c.bytes
        << ", nccl: " << clean_quoted(c.nccl) << ", measured: " << clean_quoted(c.measured) << "}\n";
  }
  write_nccl_model(out, observed.nccl_model);
  write_comms(out, observed.comms);
}

NcclObserved parse_nccl_observed(const YAML::Node& node, const std::string& field) {
  yaml_expect_map(node, field);
  yaml_check_keys(node, field, {"defaults", "shipped", "verdicts", "contradictions", "nccl_model", "comms"});
  NcclObserved observed;
  if (node["defaults"])
    observed.defaults = parse_observation(node["defaults"], yaml_child(field, "defaults"));
  if (node["shipped"]) observed.shipped = parse_observation(node["shipped"], yaml_child(field, "shipped"));
  read_verdicts(node, field, observed.verdicts);
  read_entries(node, "contradictions", field, {"op", "bytes", "nccl", "measured"},
               [&observed](const YAML::Node& c, const std::string& item) {
                 observed.contradictions.push_back({text_at(c, "op", item), required_bytes(c, item),
                                                    text_at(c, "nccl", item), text_at(c, "measured", item)});
               });
  if (node["nccl_model"]) observed.nccl_model = parse_nccl_model(node["nccl_model"], yaml_child(field, "nccl_model"));
  if (node["comms"]) observed.comms = parse_comms(node["comms"], yaml_child(field, "comms"));
  return observed;
}

}  // namespace nccltune
