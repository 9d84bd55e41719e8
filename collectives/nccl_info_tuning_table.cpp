#include "collectives/nccl_info_tuning_table.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <utility>

#include "base/collective_names.h"
#include "base/text_words.h"
#include "collectives/bus_bandwidth.h"

namespace nccltune {
namespace {

// The pieces of "label | a | b |" between the bars, trimmed; the empty piece after the last bar
// dropped.
std::vector<std::string_view> table_pieces(std::string_view body) {
  std::vector<std::string_view> pieces;
  while (true) {
    const std::size_t bar = body.find('|');
    pieces.push_back(trimmed(body.substr(0, bar)));
    if (bar == std::string_view::npos) break;
    body.remove_prefix(bar + 1);
  }
  if (pieces.size() > 1 && pieces.back().empty()) pieces.pop_back();
  return pieces;
}

bool is_name(std::string_view word) {
  return !word.empty() && word.size() <= 32 && std::all_of(word.begin(), word.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c));
  });
}

// ncclAlgoStr / ncclProtoStr as the TUNING choice lines print them (ncclAlgoToString).
std::string table_algo_name(std::string_view name) {
  static constexpr std::pair<std::string_view, std::string_view> kNames[] = {
      {"Tree", "TREE"},
      {"Ring", "RING"},
      {"CollNetDirect", "COLLNET_DIRECT"},
      {"CollNetChain", "COLLNET_CHAIN"},
      {"NVLS", "NVLS"},
      {"NVLSTree", "NVLS_TREE"},
      {"PAT", "PAT"}};
  for (const auto& [printed, spelled] : kNames)
    if (name == printed) return std::string(spelled);
  return std::string(name);
}

std::string table_proto_name(std::string_view name) {
  return name == "Simple" ? std::string("SIMPLE") : std::string(name);
}

// "   6.3/  66.7": latency and bandwidth, finite and not negative.
std::optional<std::pair<double, double>> table_cell(std::string_view cell) {
  const std::size_t slash = cell.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  double values[2] = {0, 0};
  const std::string_view parts[2] = {trimmed(cell.substr(0, slash)), trimmed(cell.substr(slash + 1))};
  for (int i = 0; i < 2; ++i) {
    const std::string_view part = parts[i];
    if (part.empty()) return std::nullopt;
    const auto [end, error] = std::from_chars(part.data(), part.data() + part.size(), values[i]);
    if (error != std::errc() || end != part.data() + part.size() || !std::isfinite(values[i]) ||
        values[i] < 0)
      return std::nullopt;
  }
  return std::pair{values[0], values[1]};
}

// NCCL's function names in nccl-tests' (bus_bandwidth_factor's).
std::string_view nccl_tests_name(std::string_view op) {
  for (const CollectiveName& row : kCollectiveTable)
    if (!row.log.empty() && row.log == op) return row.name;
  return "";
}

}  // namespace

std::optional<double> model_busbw(const NcclModelCell& cell, std::optional<int> ranks) {
  if (!ranks || *ranks < 1) return std::nullopt;
  const double factor = bus_bandwidth_factor(nccl_tests_name(cell.op), *ranks);
  if (factor <= 0) return std::nullopt;
  return cell.algbw * factor;
}

bool NcclTuningTableReader::read(std::string_view body, std::optional<int> ranks) {
  if (body.find('|') == std::string_view::npos) return false;
  const std::vector<std::string_view> pieces = table_pieces(body);
  if (pieces.size() < 2) return false;
  const std::string_view label = pieces[0];
  const std::vector<std::string_view> cells(pieces.begin() + 1, pieces.end());

  if (label == "Algorithm") {
    if (!std::all_of(cells.begin(), cells.end(), is_name)) return false;
    const bool repeats = std::any_of(cells.begin(), cells.end(), [&](std::string_view name) {
      return std::find(table_algos_.begin(), table_algos_.end(), table_algo_name(name)) != table_algos_.end();
    });
    if (repeats || table_algos_.size() > 64) finish();
    if (!started_) table_.ranks = ranks;
    started_ = true;
    algos_.clear();
    protos_.clear();
    max_threads_.clear();
    for (std::string_view name : cells) {
      algos_.push_back(table_algo_name(name));
      table_algos_.push_back(algos_.back());
    }
    return true;
  }
  if (!started_) return false;
  if (label == "Protocol") {
    if (!std::all_of(cells.begin(), cells.end(), is_name)) return false;
    // All three slots of a block print every protocol: one period of them is the list.
    std::size_t period = 1;
    while (period < cells.size() && cells[period] != cells[0]) ++period;
    protos_.clear();
    for (std::size_t i = 0; i < period; ++i) protos_.push_back(table_proto_name(cells[i]));
    return true;
  }
  const std::size_t width = algos_.size() * protos_.size();
  if (label == "Max NThreads") {
    max_threads_.clear();
    if (cells.size() != width) return true;
    for (std::string_view cell : cells) {
      const auto value = to_int(cell);
      max_threads_.push_back(value && *value >= 0 && *value <= (1 << 20) ? std::optional<int>(*value)
                                                                         : std::nullopt);
    }
    return true;
  }
  if (!is_name(label) || width == 0 || cells.size() != width) return false;
  std::vector<std::pair<double, double>> values;
  for (std::string_view cell : cells) {
    const auto value = table_cell(cell);
    if (!value) return false;
    values.push_back(*value);
  }
  for (std::size_t i = 0; i < width; ++i) {
    const auto [latency, bandwidth] = values[i];
    if (latency == 0 && bandwidth == 0) continue;  // never modelled
    if (table_.cells.size() >= kMaxModelCells) break;
    table_.cells.push_back({std::string(label), algos_[i / protos_.size()], protos_[i % protos_.size()],
                            latency, bandwidth,
                            max_threads_.size() == width ? max_threads_[i] : std::nullopt});
  }
  return true;
}

void NcclTuningTableReader::finish() {
  if (!table_.cells.empty() && done_.size() < kMaxModelTables) done_.push_back(std::move(table_));
  table_ = {};
  table_algos_.clear();
  algos_.clear();
  protos_.clear();
  max_threads_.clear();
  started_ = false;
}

std::vector<NcclModelTable> NcclTuningTableReader::take() {
  finish();
  return std::exchange(done_, {});
}

}  // namespace nccltune
