#include "observe/inspector_prom.h"

#include <array>
#include <charconv>
#include <cmath>
#include <limits>

#include "base/printable_text.h"

namespace nccltune {

namespace {

struct KnownMetric {
  std::string_view name;
  InspectorPromMetric metric;
  bool p2p;
};
constexpr std::array<KnownMetric, 4> kInspectorMetrics = {{
    {"nccl_bus_bandwidth_gbs", InspectorPromMetric::bus_bandwidth, false},
    {"nccl_collective_exec_time_microseconds", InspectorPromMetric::exec_time, false},
    {"nccl_p2p_bus_bandwidth_gbs", InspectorPromMetric::p2p_bus_bandwidth, true},
    {"nccl_p2p_exec_time_microseconds", InspectorPromMetric::p2p_exec_time, true},
}};

// The labels of inspectorPromGetLabelsColl and inspectorPromGetLabelsP2p.
constexpr std::array<std::string_view, 8> kCommonLabels = {
    "version", "slurm_job_id", "node", "gpu", "comm_name", "n_nodes", "nranks", "message_size"};
constexpr int kMaxLabels = 32;
constexpr int kMaxRanks = 1 << 20;

bool name_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
}
bool name_char(char c) {
  return name_start(c) || (c >= '0' && c <= '9');
}

// A metric or label name at `at`, advancing past it; "" where none starts.
std::string_view read_name(std::string_view line, std::size_t& at) {
  const std::size_t start = at;
  if (at < line.size() && name_start(line[at])) ++at;
  while (at > start && at < line.size() && name_char(line[at])) ++at;
  return line.substr(start, at - start);
}

Result<int> count_label(const std::string& text, const char* label, int lowest) {
  int value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < lowest || value > kMaxRanks)
    return Error{std::string(label) + " " + printable_excerpt(text, 40) + " is not a count from " +
                 std::to_string(lowest) + " to " + std::to_string(kMaxRanks)};
  return value;
}

Result<double> sample_value(std::string_view text) {
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  double value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size())
    return Error{"value " + printable_excerpt(text, 40) + " is not a number"};
  return value;
}

}  // namespace

bool is_inspector_prom_file_name(std::string_view file_name) {
  constexpr std::string_view prefix = "nccl_inspector_metrics_", suffix = ".prom";
  return file_name.size() > prefix.size() + suffix.size() && file_name.starts_with(prefix) &&
         file_name.ends_with(suffix);
}

Result<std::pair<std::uint64_t, std::uint64_t>> parse_message_size_range(std::string_view text) {
  if (text == "0B") return std::pair<std::uint64_t, std::uint64_t>{0, 0};
  const auto bad = [&] {
    return Error{"message_size " + printable_excerpt(text, 40) + " is not a range like 4-5GB"};
  };
  constexpr std::array<std::string_view, 5> units = {"B", "KB", "MB", "GB", "TB"};
  std::uint64_t lower = 0, upper = 0;
  const char* const begin = text.data();
  const char* const end = begin + text.size();
  auto [after_lower, lower_error] = std::from_chars(begin, end, lower);
  if (lower_error != std::errc() || after_lower == end || *after_lower != '-') return bad();
  auto [after_upper, upper_error] = std::from_chars(after_lower + 1, end, upper);
  if (upper_error != std::errc() || lower < 1 || upper != lower + 1) return bad();
  const std::string_view unit(after_upper, std::size_t(end - after_upper));
  for (std::size_t i = 0; i < units.size(); ++i) {
    if (unit != units[i]) continue;
    const std::uint64_t unit_bytes = std::uint64_t(1) << (10 * i);
    // Below TB the unit grows at 1024 (inspectorPromFormatMessageSizeRange); TB is the last.
    if ((i + 1 < units.size() && upper > 1024) ||
        upper > std::numeric_limits<std::uint64_t>::max() / unit_bytes)
      return bad();
    return std::pair<std::uint64_t, std::uint64_t>{lower * unit_bytes, upper * unit_bytes - 1};
  }
  return bad();
}

Result<InspectorPromLine> parse_inspector_prom_line(std::string_view line) {
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t'))
    line.remove_suffix(1);
  std::size_t at = line.find_first_not_of(" \t");
  if (at == std::string_view::npos || line[at] == '#') return InspectorPromLine{};
  if (line.size() > kMaxInspectorPromLine)
    return Error{"a line longer than " + std::to_string(kMaxInspectorPromLine) + " bytes"};
  const std::string_view name = read_name(line, at);
  if (name.empty()) return Error{"not a Prometheus sample (no metric name)"};
  const KnownMetric* known = nullptr;
  for (const KnownMetric& metric : kInspectorMetrics)
    if (metric.name == name) known = &metric;
  if (known == nullptr) return InspectorPromLine{std::nullopt, std::string(name)};

  InspectorPromSample sample;
  sample.metric = known->metric;
  std::vector<std::pair<std::string, std::string>> labels;
  if (at < line.size() && line[at] == '{') {
    ++at;
    while (true) {
      if (at < line.size() && line[at] == '}') {
        ++at;
        break;
      }
      const std::string_view label = read_name(line, at);
      if (label.empty() || at + 1 >= line.size() || line[at] != '=' || line[at + 1] != '"')
        return Error{"labels of " + std::string(name) + " are not name=\"value\" pairs"};
      at += 2;
      std::string value;
      bool closed = false;
      while (at < line.size() && !closed) {
        const char c = line[at++];
        if (c == '"') {
          closed = true;
        } else if (c == '\\' && at < line.size()) {
          const char escaped = line[at++];
          value += escaped == 'n' ? '\n' : escaped;
        } else {
          value += c;
        }
      }
      if (!closed) return Error{"label " + std::string(label) + " has no closing quote (cut short?)"};
      for (const auto& [seen, ignored] : labels)
        if (seen == label) return Error{"label " + std::string(label) + " appears twice"};
      if (labels.size() >= kMaxLabels) return Error{"more than " + std::to_string(kMaxLabels) + " labels"};
      labels.emplace_back(std::string(label), std::move(value));
      if (at < line.size() && line[at] == ',') ++at;
    }
  }
  const std::size_t value_start = line.find_first_not_of(" \t", at);
  if (value_start == at || value_start == std::string_view::npos)
    return Error{std::string(name) + " has no value (cut short?)"};
  std::string_view value_text = line.substr(value_start);
  // An optional timestamp after the value (the text format's); Inspector writes none.
  if (const std::size_t space = value_text.find_first_of(" \t"); space != std::string_view::npos) {
    const std::string_view stamp = value_text.substr(value_text.find_first_not_of(" \t", space));
    std::int64_t ignored = 0;
    const auto [end, error] = std::from_chars(stamp.data(), stamp.data() + stamp.size(), ignored);
    if (error != std::errc() || end != stamp.data() + stamp.size())
      return Error{std::string(name) + " has text after its value"};
    value_text = value_text.substr(0, space);
  }
  auto value = sample_value(value_text);
  if (!value) return Error{value.error()};
  sample.value = *value;

  const std::string_view operation_label = known->p2p ? "p2p_operation" : "collective";
  bool seen_common[kCommonLabels.size()] = {};
  bool seen_operation = false, seen_algo_proto = false;
  std::string n_nodes, nranks, message_size;
  for (auto& [label, text] : labels) {
    bool common = false;
    for (std::size_t i = 0; i < kCommonLabels.size(); ++i)
      if (label == kCommonLabels[i]) common = seen_common[i] = true;
    if (label == "version")
      sample.version = std::move(text);
    else if (label == "slurm_job_id")
      sample.slurm_job_id = std::move(text);
    else if (label == "node")
      sample.node = std::move(text);
    else if (label == "gpu")
      sample.gpu = std::move(text);
    else if (label == "comm_name")
      sample.comm_name = std::move(text);
    else if (label == "n_nodes")
      n_nodes = std::move(text);
    else if (label == "nranks")
      nranks = std::move(text);
    else if (label == "message_size")
      message_size = std::move(text);
    else if (label == operation_label) {
      seen_operation = true;
      sample.operation = std::move(text);
    } else if (!known->p2p && label == "algo_proto") {
      seen_algo_proto = true;
      sample.algo_proto = std::move(text);
    } else if (!common) {
      sample.unknown_labels.push_back(label);
    }
  }
  for (std::size_t i = 0; i < kCommonLabels.size(); ++i)
    if (!seen_common[i])
      return Error{std::string(name) + " has no " + std::string(kCommonLabels[i]) + " label"};
  if (!seen_operation) return Error{std::string(name) + " has no " + std::string(operation_label) + " label"};
  if (!known->p2p && !seen_algo_proto) return Error{std::string(name) + " has no algo_proto label"};
  if (sample.operation.empty()) return Error{std::string(operation_label) + " is empty"};
  auto nodes = count_label(n_nodes, "n_nodes", 1);
  if (!nodes) return Error{nodes.error()};
  auto ranks = count_label(nranks, "nranks", 1);
  if (!ranks) return Error{ranks.error()};
  if (*nodes > *ranks) return Error{"n_nodes " + n_nodes + " is more than nranks " + nranks};
  sample.n_nodes = *nodes;
  sample.nranks = *ranks;
  auto range = parse_message_size_range(message_size);
  if (!range) return Error{range.error()};
  sample.min_bytes = range->first;
  sample.max_bytes = range->second;
  if (!std::isnan(sample.value) && sample.value < 0) return Error{std::string(name) + " is negative"};
  return InspectorPromLine{std::move(sample), ""};
}

}  // namespace nccltune
