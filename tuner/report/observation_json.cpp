#include "report/observation_json.h"

#include <fmt/format.h>

#include <array>
#include <nlohmann/json.hpp>

#include "base/atomic_file.h"
#include "base/json_field_reader.h"
#include "base/printable_text.h"

namespace nccltune {

namespace {

using ObservationJson = nlohmann::json;

constexpr std::array<std::string_view, 4> kVerdicts = {"as_tuned", "below_tuned", "not_served", "unmeasured"};
constexpr std::array<std::string_view, 4> kShapes = {"world", "rail", "node", "other"};

struct ObservationReader : JsonFieldReader<ObservationJson> {
  // A number that may be null or absent (observe writes null for "no value").
  void optional_number(const ObservationJson& object, std::string_view path, const char* key,
                       std::optional<double>& out) {
    double value = 0;
    if (read_number(object, path, key, value, false)) out = value;
  }
  void optional_text(const ObservationJson& object, std::string_view path, const char* key,
                     std::optional<std::string>& out) {
    std::string value;
    if (read_text(object, path, key, value, false)) out = std::move(value);
  }
  // A share of a whole: 0..1.
  void share(const ObservationJson& object, std::string_view path, const char* key, double& out) {
    if (read_number(object, path, key, out, true) && !(out >= 0 && out <= 1))
      fail(path, key, "not between 0 and 1");
  }
  // A list of objects, each read by `read` with its path ("communicators[2]").
  template <class Read>
  void each(const ObservationJson& object, std::string_view path, const char* key, bool required, Read read) {
    const ObservationJson* list = field(object, path, key, required);
    if (!list) return;
    if (!list->is_array()) {
      fail(path, key, "not a list");
      return;
    }
    for (std::size_t i = 0; error.empty() && i < list->size(); ++i) {
      const std::string at = fmt::format("{}{}[{}]", path, key, i);
      if (object_at((*list)[i], at)) read((*list)[i], at + ".");
    }
  }

  ObservationRow row(const ObservationJson& object, const std::string& path) {
    ObservationRow row;
    read_text(object, path, "collective", row.collective, true);
    read_integer(object, path, "min_bytes", row.min_bytes, true);
    read_integer(object, path, "max_bytes", row.max_bytes, true);
    if (error.empty() && row.max_bytes < row.min_bytes) fail(path, "max_bytes", "below min_bytes");
    read_integer(object, path, "ops", row.ops, true);
    share(object, path, "time_share", row.time_share);
    // Present, even when null: observe writes each of them.
    for (const char* key : {"busbw_median", "busbw_p10", "tuned_busbw", "ratio"})
      if (error.empty() && object.find(key) == object.end()) fail(path, key, "missing");
    optional_number(object, path, "busbw_median", row.busbw_median);
    optional_number(object, path, "busbw_p10", row.busbw_p10);
    optional_number(object, path, "tuned_busbw", row.tuned_busbw);
    optional_number(object, path, "ratio", row.ratio);
    optional_text(object, path, "ran", row.ran);
    optional_text(object, path, "tuned", row.tuned);
    if (read_text(object, path, "verdict", row.verdict, true) && !is_observation_verdict(row.verdict))
      fail(path, "verdict", "not as_tuned, below_tuned, not_served or unmeasured");
    read_text(object, path, "tune", row.tune, false);
    return row;
  }

  ObservationCommunicator communicator(const ObservationJson& object, const std::string& path) {
    ObservationCommunicator c;
    read_text(object, path, "id", c.id, true);
    read_text(object, path, "name", c.name, true);
    read_integer(object, path, "n_ranks", c.n_ranks, true);
    read_integer(object, path, "nnodes", c.nnodes, true);
    read_strings(object, path, "hosts", c.hosts, true);
    if (read_text(object, path, "shape", c.shape, true) && !is_observation_shape(c.shape))
      fail(path, "shape", "not world, rail, node or other");
    if (error.empty() && object.find("section") == object.end()) fail(path, "section", "missing");
    optional_text(object, path, "section", c.section);
    read_integer(object, path, "matched", c.matched, false);
    each(object, path, "rows", true, [this, &c](const ObservationJson& row_object, const std::string& at) {
      c.rows.push_back(row(row_object, at));
    });
    return c;
  }

  ObservationStraggler straggler(const ObservationJson& object, const std::string& path) {
    ObservationStraggler s;
    read_integer(object, path, "rank", s.rank, true);
    if (error.empty() && s.rank < 0) fail(path, "rank", "negative");
    read_text(object, path, "host", s.host, true);
    if (error.empty() && object.find("gpu") == object.end()) fail(path, "gpu", "missing");
    optional_text(object, path, "gpu", s.gpu);
    read_text(object, path, "communicator", s.communicator, true);
    read_text(object, path, "communicator_name", s.communicator_name, false);
    share(object, path, "last_share", s.last_share);
    optional_number(object, path, "last", s.last);
    if (error.empty() && s.last && !(*s.last >= 0)) fail(path, "last", "negative");
    if (read_number(object, path, "cost_us", s.cost_us, true) && s.cost_us < 0)
      fail(path, "cost_us", "negative");
    return s;
  }

  void context(const ObservationJson& document, Observation& o) {
    const ObservationJson* context = field(document, "", "context", true);
    if (!context || !object_at(*context, "context")) return;
    const std::string path = "context.";
    read_strings(*context, path, "dirs", o.dirs, true);
    read_integer(*context, path, "records", o.records, true);
    read_integer(*context, path, "ranks", o.ranks, true);
    read_strings(*context, path, "hosts", o.hosts, true);
    read_strings(*context, path, "inspector_versions", o.inspector_versions, true);
    if (error.empty() && context->find("profile") == context->end()) fail(path, "profile", "missing");
    optional_text(*context, path, "profile", o.profile);
    double tolerance = 0;
    if (read_number(*context, path, "tolerance", tolerance, false)) {
      if (!(tolerance >= 0 && tolerance < 1)) fail(path, "tolerance", "not between 0 and 1");
      o.tolerance = tolerance;
      o.tolerance_given = true;
    }
  }
};

}  // namespace

bool is_observation_verdict(std::string_view verdict) {
  for (std::string_view known : kVerdicts)
    if (verdict == known) return true;
  return false;
}

bool is_observation_shape(std::string_view shape) {
  for (std::string_view known : kShapes)
    if (shape == known) return true;
  return false;
}

Result<Observation> parse_observation_json(std::string_view text, std::string_view origin) {
  if (text.size() > kMaxObservationJsonBytes)
    return Error{fmt::format("{}: {} bytes, more than the {} MiB allowed", origin, text.size(),
                             kMaxObservationJsonBytes >> 20)};
  const ObservationJson document = ObservationJson::parse(text, nullptr, /*allow_exceptions=*/false);
  if (document.is_discarded()) return Error{fmt::format("{}: not valid JSON", origin)};
  if (!document.is_object()) return Error{fmt::format("{}: not a JSON object", origin)};
  const auto schema = document.find("schema");
  if (schema == document.end() || !schema->is_string() || *schema != kObservationSchema)
    return Error{fmt::format("{}: schema: expected \"{}\" (what `nccltune observe --format json` writes)",
                             origin, kObservationSchema)};
  Observation o;
  ObservationReader reader;
  reader.context(document, o);
  reader.each(document, "", "communicators", true,
              [&reader, &o](const ObservationJson& object, const std::string& at) {
                o.communicators.push_back(reader.communicator(object, at));
              });
  reader.each(document, "", "stragglers", true,
              [&reader, &o](const ObservationJson& object, const std::string& at) {
                o.stragglers.push_back(reader.straggler(object, at));
              });
  reader.each(document, "", "suspects", false,
              [&reader, &o](const ObservationJson& object, const std::string& at) {
                ObservationSuspect suspect;
                reader.read_text(object, at, "host", suspect.host, true);
                reader.read_text(object, at, "why", suspect.why, true);
                o.suspects.push_back(std::move(suspect));
              });
  if (!reader.error.empty())
    return Error{fmt::format("{}: {}", origin, printable_excerpt(reader.error, 300))};
  return o;
}

Result<Observation> read_observation_json(const std::filesystem::path& path) {
  auto text = read_text_file(path, kMaxObservationJsonBytes);
  if (!text) return Error{text.error()};
  return parse_observation_json(*text, path.string());
}

}  // namespace nccltune
