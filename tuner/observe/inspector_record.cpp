#include "observe/inspector_record.h"

#include <array>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "base/collective_names.h"
#include "base/printable_text.h"

namespace nccltune {

namespace {

using InspectorJson = nlohmann::json;

// The keys NCCL 2.28's and 2.30's Inspector write, per object; anything else is reported once.
constexpr std::array<std::string_view, 4> kTopKeys = {"header", "metadata", "coll_perf", "p2p_perf"};
constexpr std::array<std::string_view, 5> kHeaderKeys = {"id", "comm_name", "rank", "n_ranks", "nnodes"};
constexpr std::array<std::string_view, 6> kMetadataKeys = {
    "inspector_output_format_version", "git_rev", "rec_mechanism", "dump_timestamp_us", "hostname", "pid"};
constexpr std::array<std::string_view, 9> kCollKeys = {"coll",
                                                       "coll_sn",
                                                       "coll_msg_size_bytes",
                                                       "coll_exec_time_us",
                                                       "coll_timing_source",
                                                       "coll_algobw_gbs",
                                                       "coll_busbw_gbs",
                                                       "event_trace_sn",
                                                       "event_trace_ts"};

template <std::size_t N>
void note_unknown(const InspectorJson& object, std::string_view where,
                  const std::array<std::string_view, N>& known, std::vector<std::string>& unknown) {
  for (auto it = object.begin(); it != object.end(); ++it) {
    bool found = false;
    for (std::string_view key : known) found = found || key == it.key();
    if (!found) unknown.push_back(where.empty() ? it.key() : std::string(where) + "." + it.key());
  }
}

Error missing(std::string_view field, std::string_view what) {
  return Error{std::string(field) + ": " + std::string(what)};
}

// The object under `key`; nullptr when absent or not an object.
const InspectorJson* object_at(const InspectorJson& parent, const char* key) {
  const auto it = parent.find(key);
  return it != parent.end() && it->is_object() ? &*it : nullptr;
}

std::optional<std::string> string_at(const InspectorJson& parent, const char* key) {
  const auto it = parent.find(key);
  if (it == parent.end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

std::optional<std::int64_t> integer_at(const InspectorJson& parent, const char* key) {
  const auto it = parent.find(key);
  if (it == parent.end() || !it->is_number_integer()) return std::nullopt;
  if (it->is_number_unsigned() &&
      it->get<std::uint64_t>() > std::uint64_t(std::numeric_limits<std::int64_t>::max()))
    return std::nullopt;
  return it->get<std::int64_t>();
}

// Inspector writes doubles with %lf and NaN as the string "nan".
std::optional<double> number_at(const InspectorJson& parent, const char* key) {
  const auto it = parent.find(key);
  if (it == parent.end()) return std::nullopt;
  if (it->is_number()) return it->get<double>();
  if (it->is_string() &&
      (it->get_ref<const std::string&>() == "nan" || it->get_ref<const std::string&>() == "-nan"))
    return std::numeric_limits<double>::quiet_NaN();
  return std::nullopt;
}

}  // namespace

Result<std::optional<InspectorRecord>> parse_inspector_line(std::string_view line) {
  InspectorJson json = InspectorJson::parse(line.begin(), line.end(), nullptr, false);
  if (json.is_discarded()) {
    // A line cut short (a process killed mid-dump) is the common case: say so plainly.
    const bool closed = line.find_last_not_of(" \t\r") != std::string_view::npos &&
                        line[line.find_last_not_of(" \t\r")] == '}';
    return Error{closed ? "not a JSON object" : "a truncated record (the JSON object does not close)"};
  }
  if (!json.is_object()) return Error{"not a JSON object"};
  InspectorRecord record;
  note_unknown(json, "", kTopKeys, record.unknown_fields);
  if (json.contains("p2p_perf") && !json.contains("coll_perf")) return std::optional<InspectorRecord>{};
  const InspectorJson* header = object_at(json, "header");
  const InspectorJson* metadata = object_at(json, "metadata");
  const InspectorJson* perf = object_at(json, "coll_perf");
  if (header == nullptr) return missing("header", "missing or not an object");
  if (metadata == nullptr) return missing("metadata", "missing or not an object");
  if (perf == nullptr) return missing("coll_perf", "missing or not an object");
  note_unknown(*header, "header", kHeaderKeys, record.unknown_fields);
  note_unknown(*metadata, "metadata", kMetadataKeys, record.unknown_fields);
  note_unknown(*perf, "coll_perf", kCollKeys, record.unknown_fields);

  const auto id = string_at(*header, "id");
  if (!id || id->empty()) return missing("header.id", "missing or not a string");
  record.comm_id = *id;
  record.comm_name = string_at(*header, "comm_name").value_or("");
  const auto n_ranks = integer_at(*header, "n_ranks");
  if (!n_ranks || *n_ranks < 1 || *n_ranks > (1 << 20))
    return missing("header.n_ranks", "missing or not 1..1048576");
  record.n_ranks = int(*n_ranks);
  const auto rank = integer_at(*header, "rank");
  if (!rank || *rank < 0 || *rank >= *n_ranks) return missing("header.rank", "missing or not 0..n_ranks-1");
  record.rank = int(*rank);
  const auto nnodes = integer_at(*header, "nnodes");
  if (!nnodes || *nnodes < 1 || *nnodes > *n_ranks)
    return missing("header.nnodes", "missing or not 1..n_ranks");
  record.nnodes = int(*nnodes);

  const auto version = string_at(*metadata, "inspector_output_format_version");
  if (!version || version->empty())
    return missing("metadata.inspector_output_format_version", "missing or not a string");
  record.version = *version;
  record.hostname = string_at(*metadata, "hostname").value_or("");
  record.pid = std::uint64_t(integer_at(*metadata, "pid").value_or(0));

  const auto coll = string_at(*perf, "coll");
  if (!coll || coll->empty()) return missing("coll_perf.coll", "missing or not a string");
  record.coll = *coll;
  const auto sn = integer_at(*perf, "coll_sn");
  if (!sn || *sn < 0) return missing("coll_perf.coll_sn", "missing or not a whole number");
  record.coll_sn = std::uint64_t(*sn);
  const auto bytes = integer_at(*perf, "coll_msg_size_bytes");
  if (!bytes || *bytes < 0) return missing("coll_perf.coll_msg_size_bytes", "missing or not a whole number");
  record.bytes = std::uint64_t(*bytes);
  const auto exec = number_at(*perf, "coll_exec_time_us");
  if (!exec || !std::isfinite(*exec) || *exec < 0)
    return missing("coll_perf.coll_exec_time_us", "missing or not a number from 0");
  record.exec_us = *exec;
  const auto busbw = number_at(*perf, "coll_busbw_gbs");
  if (!busbw || *busbw < 0) return missing("coll_perf.coll_busbw_gbs", "missing or not a number from 0");
  record.busbw_gbps = *busbw;
  return std::optional<InspectorRecord>(std::move(record));
}

bool is_inspector_file_name(std::string_view name) {
  constexpr std::string_view suffix = ".log";
  if (name.size() <= suffix.size() || name.substr(name.size() - suffix.size()) != suffix) return false;
  const std::string_view stem = name.substr(0, name.size() - suffix.size());
  const auto pid = stem.rfind("-pid");
  if (pid == std::string_view::npos || pid + 4 == stem.size()) return false;
  for (char c : stem.substr(pid + 4))
    if (c < '0' || c > '9') return false;
  return true;
}

std::string collective_from_nccl(std::string_view function) {
  for (const CollectiveName& row : kCollectiveTable)
    if (!row.log.empty() && row.log == function) return std::string(row.name);
  return std::string(function);
}

}  // namespace nccltune
