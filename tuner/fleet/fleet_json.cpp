// The survey as `nccltune/fleet/v1` JSON, written and read back (fleet_output.h).
#include "fleet/fleet_output.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <limits>
#include <utility>

#include "base/atomic_file.h"
#include "base/clean_text.h"
#include "base/json_field_reader.h"
#include "base/printable_text.h"
#include "fleet/fleet_numbers.h"

namespace nccltune {
namespace {

using Json = nlohmann::json;

Json number_or_null(const std::optional<double>& value, double (*round)(double)) {
  return value ? Json(round(*value)) : Json(nullptr);
}

Json pair_names(const std::array<std::string, 2>& nodes) {
  return Json::array({nodes[0], nodes[1]});
}

constexpr std::size_t kMaxFleetNodes = 100000;

// Reading: base/json_field_reader.h's field and fail (first error wins), and typed helpers.
struct FleetReader : JsonFieldReader<Json> {
  void text(const Json& object, const std::string& path, const char* key, std::string& out, bool required = true) {
    if (read_text(object, path, key, out, required) && !is_clean_text(out))
      fail(path, key, "not clean text (control characters, or over 4096 bytes)");
  }
  void one_of(const Json& object, const std::string& path, const char* key, std::string& out,
              std::initializer_list<std::string_view> allowed, bool required = true) {
    if (!required && !field(object, path, key, false)) return;  // absent: `out` keeps its default
    text(object, path, key, out);
    if (!error.empty()) return;
    if (std::find(allowed.begin(), allowed.end(), out) == allowed.end())
      fail(path, key, fmt::format("'{}' is not one of {}", printable_excerpt(out, 40), fmt::join(allowed, ", ")));
  }
  // A finite number from `low` up.
  void number(const Json& object, const std::string& path, const char* key, double& out, double low = 0,
              double high = std::numeric_limits<double>::max()) {
    if (read_number(object, path, key, out, true) && !(out >= low && out <= high))
      fail(path, key, fmt::format("{} is out of range", out));
  }
  // A number or null (or absent).
  void optional_number(const Json& object, const std::string& path, const char* key, std::optional<double>& out) {
    if (!field(object, path, key, false)) return;
    double value = 0;
    number(object, path, key, value);
    if (error.empty()) out = value;
  }
  void integer(const Json& object, const std::string& path, const char* key, std::uint64_t& out, bool required,
               std::uint64_t low, std::uint64_t high) {
    const Json* value = field(object, path, key, required);
    if (!value) return;
    if (!value->is_number_unsigned()) return fail(path, key, "not an integer >= 0");
    out = value->get<std::uint64_t>();
    if (out < low || out > high) fail(path, key, fmt::format("{} is not from {} to {}", out, low, high));
  }
  void integer(const Json& object, const std::string& path, const char* key, int& out, bool required, int low,
               int high = std::numeric_limits<int>::max()) {
    std::uint64_t value = static_cast<std::uint64_t>(out);
    integer(object, path, key, value, required, static_cast<std::uint64_t>(low), static_cast<std::uint64_t>(high));
    if (error.empty()) out = static_cast<int>(value);
  }
  const Json* list(const Json& object, const std::string& path, const char* key, std::size_t most) {
    const Json* value = field(object, path, key, true);
    if (!value) return nullptr;
    if (!value->is_array()) {
      fail(path, key, "not a list");
      return nullptr;
    }
    if (value->size() > most) {
      fail(path, key, fmt::format("{} entries, more than {}", value->size(), most));
      return nullptr;
    }
    return value;
  }
  void node_pair(const Json& object, const std::string& path, std::array<std::string, 2>& out) {
    const Json* nodes = list(object, path, "nodes", 2);
    if (!nodes) return;
    if (nodes->size() != 2) return fail(path, "nodes", "not a list of two node names");
    for (std::size_t i = 0; i < 2; ++i) {
      if (!(*nodes)[i].is_string()) return fail(path, "nodes", "not a list of two node names");
      out[i] = (*nodes)[i].get<std::string>();
      if (!is_clean_text(out[i])) return fail(path, "nodes", "a name is not clean text");
    }
  }

  // Each element of `key`'s list, an object, given to `read` with its path ("local[2].").
  template <class T, class Read>
  void each(const Json& document, const char* key, std::size_t most, std::vector<T>& out, Read read) {
    const Json* items = list(document, "", key, most);
    for (std::size_t i = 0; items && i < items->size() && error.empty(); ++i) {
      const std::string path = fmt::format("{}[{}]", key, i);
      if (const Json* item = object_at((*items)[i], path)) out.push_back(read(*item, path + "."));
    }
  }

  LocalResult local(const Json& object, const std::string& path) {
    LocalResult result;
    text(object, path, "node", result.node);
    optional_number(object, path, "busbw_gbps", result.busbw_gbps);
    optional_number(object, path, "small_us", result.small_us);
    optional_number(object, path, "pct_of_peak", result.pct_of_peak);
    one_of(object, path, "verdict", result.verdict, {"pass", "warn", "slow", "failed"});
    text(object, path, "domain", result.domain, false);
    return result;
  }
  PairResult pair(const Json& object, const std::string& path) {
    PairResult result;
    node_pair(object, path, result.nodes);
    integer(object, path, "round", result.round, true, 0);
    optional_number(object, path, "busbw_gbps", result.busbw_gbps);
    one_of(object, path, "verdict", result.verdict, {"pass", "slow", "failed"});
    one_of(object, path, "path", result.path, {"network", "nvlink"}, false);  // surveys before racks: network
    return result;
  }
  SuspectNode suspect(const Json& object, const std::string& path) {
    SuspectNode result;
    text(object, path, "node", result.node);
    one_of(object, path, "path", result.path, {"network", "local", "nvlink"});
    text(object, path, "evidence", result.evidence);
    number(object, path, "busbw_gbps", result.busbw_gbps);
    number(object, path, "median_gbps", result.median_gbps);
    text(object, path, "domain", result.domain, false);
    return result;
  }
  SuspectLink link(const Json& object, const std::string& path) {
    SuspectLink result;
    node_pair(object, path, result.nodes);
    number(object, path, "busbw_gbps", result.busbw_gbps);
    text(object, path, "evidence", result.evidence);
    return result;
  }
  FailedNode failed(const Json& object, const std::string& path) {
    FailedNode result;
    text(object, path, "node", result.node);
    text(object, path, "what", result.what);
    one_of(object, path, "stage", result.stage, {"local", "pairs"});
    text(object, path, "reason", result.reason, false);
    return result;
  }
  FleetVerdict verdict(const Json& object, const std::string& path) {
    FleetVerdict result;
    one_of(object, path, "level", result.level, {"pass", "warn", "fail"});
    text(object, path, "check", result.check, false);
    text(object, path, "message", result.message);
    return result;
  }

  FleetSurvey survey(const Json& document) {
    FleetSurvey s;
    integer(document, "", "nodes", s.nodes, true, 0, static_cast<int>(kMaxFleetNodes));
    integer(document, "", "gpus_per_node", s.gpus_per_node, true, 1);
    text(document, "", "collective", s.collective);
    integer(document, "", "bytes", s.bytes, true, 0, std::numeric_limits<std::uint64_t>::max());
    integer(document, "", "small_bytes", s.small_bytes, false, 0, std::numeric_limits<std::uint64_t>::max());
    if (const Json* peaks = field(document, "", "peak_busbw_gbps", true); object_at_or_fail(peaks, "peak_busbw_gbps")) {
      optional_number(*peaks, "peak_busbw_gbps.", "intra_node", s.peak_intra_gbps);
      optional_number(*peaks, "peak_busbw_gbps.", "inter_node", s.peak_inter_gbps);
    }
    if (const Json* limits = field(document, "", "thresholds", false); object_at_or_fail(limits, "thresholds")) {
      number(*limits, "thresholds.", "min_peak_pct", s.thresholds.min_peak_pct, 0, 100);
      number(*limits, "thresholds.", "outlier", s.thresholds.outlier, 0, 1);
    }
    if (const Json* medians = field(document, "", "median_busbw_gbps", false);
        object_at_or_fail(medians, "median_busbw_gbps")) {
      optional_number(*medians, "median_busbw_gbps.", "local", s.local_median_gbps);
      optional_number(*medians, "median_busbw_gbps.", "pairs", s.pair_median_gbps);
      optional_number(*medians, "median_busbw_gbps.", "nvlink", s.nvlink_median_gbps);
    }
    if (field(document, "", "noise_pct", false)) number(document, "", "noise_pct", s.noise_pct);
    integer(document, "", "rounds", s.rounds, false, 0);
    each(document, "local", kMaxFleetNodes, s.local, [&](const Json& o, const std::string& p) { return local(o, p); });
    each(document, "pairs", std::numeric_limits<std::size_t>::max(), s.pairs,
         [&](const Json& o, const std::string& p) { return pair(o, p); });
    each(document, "suspects", kMaxFleetNodes, s.suspects,
         [&](const Json& o, const std::string& p) { return suspect(o, p); });
    each(document, "links", std::numeric_limits<std::size_t>::max(), s.links,
         [&](const Json& o, const std::string& p) { return link(o, p); });
    each(document, "failed", kMaxFleetNodes, s.failed, [&](const Json& o, const std::string& p) { return failed(o, p); });
    each(document, "verdicts", std::numeric_limits<std::size_t>::max(), s.verdicts,
         [&](const Json& o, const std::string& p) { return verdict(o, p); });
    return s;
  }
  // `value` (from field()) is an object; absent is fine, anything else an error.
  bool object_at_or_fail(const Json* value, const std::string& path) {
    return value && object_at(*value, path);
  }
};

}  // namespace

nlohmann::json fleet_to_json(const FleetSurvey& survey) {
  // "domain" (a node's NVLink domain) is written only where one is known: a fleet without
  // multi-node NVLink reads as it always did, plus each pair's "path".
  Json local = Json::array();
  for (const LocalResult& l : survey.local) {
    Json entry{{"node", l.node},
               {"busbw_gbps", number_or_null(l.busbw_gbps, round_tenth)},
               {"small_us", number_or_null(l.small_us, round_us)},
               {"pct_of_peak", number_or_null(l.pct_of_peak, round_tenth)},
               {"verdict", l.verdict}};
    if (!l.domain.empty()) entry["domain"] = l.domain;
    local.push_back(std::move(entry));
  }
  Json pairs = Json::array();
  for (const PairResult& p : survey.pairs)
    pairs.push_back({{"nodes", pair_names(p.nodes)},
                     {"round", p.round},
                     {"path", p.path},
                     {"busbw_gbps", number_or_null(p.busbw_gbps, round_tenth)},
                     {"verdict", p.verdict}});
  Json suspects = Json::array();
  for (const SuspectNode& s : survey.suspects) {
    Json entry{{"node", s.node},
               {"path", s.path},
               {"evidence", s.evidence},
               {"busbw_gbps", round_tenth(s.busbw_gbps)},
               {"median_gbps", round_tenth(s.median_gbps)}};
    if (!s.domain.empty()) entry["domain"] = s.domain;
    suspects.push_back(std::move(entry));
  }
  Json medians{{"local", number_or_null(survey.local_median_gbps, round_tenth)},
               {"pairs", number_or_null(survey.pair_median_gbps, round_tenth)}};
  if (survey.nvlink_median_gbps) medians["nvlink"] = round_tenth(*survey.nvlink_median_gbps);
  Json links = Json::array();
  for (const SuspectLink& l : survey.links)
    links.push_back({{"nodes", pair_names(l.nodes)}, {"busbw_gbps", round_tenth(l.busbw_gbps)}, {"evidence", l.evidence}});
  Json failed = Json::array();
  for (const FailedNode& f : survey.failed)
    failed.push_back({{"node", f.node}, {"what", f.what}, {"stage", f.stage}, {"reason", f.reason}});
  Json verdicts = Json::array();
  for (const FleetVerdict& v : survey.verdicts)
    verdicts.push_back({{"level", v.level}, {"check", v.check}, {"message", v.message}});
  return Json{{"schema", kFleetSchema},
              {"nodes", survey.nodes},
              {"gpus_per_node", survey.gpus_per_node},
              {"collective", survey.collective},
              {"bytes", survey.bytes},
              {"small_bytes", survey.small_bytes},
              {"peak_busbw_gbps",
               {{"intra_node", number_or_null(survey.peak_intra_gbps, round_tenth)},
                {"inter_node", number_or_null(survey.peak_inter_gbps, round_tenth)}}},
              {"thresholds", {{"min_peak_pct", survey.thresholds.min_peak_pct}, {"outlier", survey.thresholds.outlier}}},
              {"median_busbw_gbps", std::move(medians)},
              {"noise_pct", round_tenth(survey.noise_pct)},
              {"rounds", survey.rounds},
              {"local", std::move(local)},
              {"pairs", std::move(pairs)},
              {"suspects", std::move(suspects)},
              {"links", std::move(links)},
              {"failed", std::move(failed)},
              {"verdicts", std::move(verdicts)}};
}

Result<FleetSurvey> parse_fleet_json(std::string_view text, std::string_view origin) {
  if (text.size() > kMaxFleetJsonBytes)
    return Error{fmt::format("{}: {} bytes, more than the {} MiB allowed", origin, text.size(), kMaxFleetJsonBytes >> 20)};
  const Json document = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (document.is_discarded()) return Error{fmt::format("{}: not valid JSON", origin)};
  if (!document.is_object()) return Error{fmt::format("{}: not a JSON object", origin)};
  const auto schema = document.find("schema");
  if (schema == document.end() || !schema->is_string() || *schema != kFleetSchema)
    return Error{fmt::format("{}: schema: expected \"{}\"", origin, kFleetSchema)};
  FleetReader reader;
  FleetSurvey survey = reader.survey(document);
  if (!reader.error.empty()) return Error{fmt::format("{}: {}", origin, printable_excerpt(reader.error, 300))};
  return survey;
}

Result<FleetSurvey> read_fleet_survey(const std::filesystem::path& file) {
  auto text = read_text_file(file, kMaxFleetJsonBytes);
  if (!text) return Error{text.error()};
  return parse_fleet_json(*text, file.string());
}

}  // namespace nccltune
