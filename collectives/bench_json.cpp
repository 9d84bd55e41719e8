#include "collectives/bench_json.h"

#include <fmt/format.h>

#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include "base/json_field_reader.h"

namespace nccltune {
namespace {

using Json = nlohmann::ordered_json;

template <class T>
Json value_or_null(const std::optional<T>& value) {
  return value ? Json(*value) : Json(nullptr);
}

Json measurement_to_json(const Measurement& m) {
  return Json{
      {"time_us", m.time_us}, {"algbw", m.algbw}, {"busbw", m.busbw}, {"wrong", value_or_null(m.wrong)}};
}

// Reading: base/json_field_reader.h's typed helpers (first error wins); fields are optional
// unless said.
struct Reader : JsonFieldReader<Json> {
  void read(const Json& object, std::string_view path, const char* key, std::string& out,
            bool required = false) {
    read_text(object, path, key, out, required);
  }
  void read(const Json& object, std::string_view path, const char* key, double& out, bool required = false) {
    read_number(object, path, key, out, required);
  }
  template <class T>
  void read_optional(const Json& object, std::string_view path, const char* key, std::optional<T>& out) {
    T value{};
    bool read_one = false;
    if constexpr (std::is_integral_v<T>)
      read_one = read_integer(object, path, key, value, false);
    else if constexpr (std::is_same_v<T, std::string>)
      read_one = read_text(object, path, key, value, false);
    else
      read_one = read_number(object, path, key, value, false);
    if (read_one) out = value;
  }

  Measurement measurement(const Json& object, const std::string& path) {
    Measurement m;
    if (!object.is_object()) {
      error = fmt::format("{}: not an object", path);
      return m;
    }
    const std::string prefix = path + ".";
    read(object, prefix, "time_us", m.time_us, true);
    read(object, prefix, "algbw", m.algbw, true);
    read(object, prefix, "busbw", m.busbw, true);
    read_optional(object, prefix, "wrong", m.wrong);
    return m;
  }

  BenchRow row(const Json& object, const std::string& path) {
    BenchRow row;
    if (!object.is_object()) {
      error = fmt::format("{}: not an object", path);
      return row;
    }
    const std::string prefix = path + ".";
    read_integer(object, prefix, "bytes", row.bytes, true);
    read_integer(object, prefix, "count", row.count, false);
    read(object, prefix, "type", row.type);
    read(object, prefix, "redop", row.redop);
    read_integer(object, prefix, "root", row.root, false);
    if (const Json* out = field(object, prefix, "out_of_place", true))
      row.out_of_place = measurement(*out, prefix + "out_of_place");
    if (const Json* in = field(object, prefix, "in_place", false))
      row.in_place = measurement(*in, prefix + "in_place");
    return row;
  }

  BenchContext context(const Json& object) {
    BenchContext context;
    if (!object.is_object()) {
      error = "context: not an object";
      return context;
    }
    read_strings(object, "context.", "hosts", context.hosts, false);
    read_optional(object, "context.", "nccl_version", context.nccl_version);
    read_optional(object, "context.", "cuda_driver", context.cuda_driver);
    read_strings(object, "context.", "argv", context.argv, false);
    if (const Json* env = field(object, "context.", "env", false)) {
      if (!env->is_object()) {
        fail("context.", "env", "not an object");
        return context;
      }
      for (const auto& [name, value] : env->items()) {
        if (!value.is_string()) {
          error = fmt::format("context.env.{}: not a string", name);
          return context;
        }
        context.env[name] = value.get<std::string>();
      }
    }
    return context;
  }
};

}  // namespace

nlohmann::ordered_json bench_result_to_json(const BenchResult& result) {
  Json rows = Json::array();
  for (const BenchRow& row : result.rows) {
    rows.push_back(Json{{"bytes", row.bytes},
                        {"count", row.count},
                        {"type", row.type},
                        {"redop", row.redop},
                        {"root", row.root},
                        {"out_of_place", measurement_to_json(row.out_of_place)},
                        {"in_place", row.in_place ? measurement_to_json(*row.in_place) : Json(nullptr)}});
  }
  const BenchContext& context = result.context;
  Json env = Json::object();
  for (const auto& [name, value] : context.env) env[name] = value;
  return Json{{"schema", kBenchSchema},
              {"op", result.op},
              {"ranks", value_or_null(result.ranks)},
              {"nodes", value_or_null(result.nodes)},
              {"dtype", result.dtype},
              {"time_rule", result.time_rule},
              {"rows", std::move(rows)},
              {"avg_busbw", value_or_null(result.avg_busbw)},
              {"peak_busbw_gbps", result.peak ? value_or_null(result.peak->gbps) : Json(nullptr)},
              {"peak_bottleneck", result.peak ? Json(result.peak->what) : Json(nullptr)},
              {"context", Json{{"hosts", context.hosts},
                               {"nccl_version", value_or_null(context.nccl_version)},
                               {"cuda_driver", value_or_null(context.cuda_driver)},
                               {"argv", context.argv},
                               {"env", std::move(env)}}}};
}

Result<BenchResult> bench_result_from_json(const nlohmann::ordered_json& document, std::string_view origin) {
  if (!document.is_object()) return Error{fmt::format("{}: not a JSON object", origin)};
  const auto schema = document.find("schema");
  if (schema == document.end() || !schema->is_string() || *schema != kBenchSchema)
    return Error{fmt::format("{}: schema: expected \"{}\"", origin, kBenchSchema)};

  BenchResult result;
  Reader reader;
  reader.read(document, "", "op", result.op, true);
  reader.read_optional(document, "", "ranks", result.ranks);
  reader.read_optional(document, "", "nodes", result.nodes);
  reader.read(document, "", "dtype", result.dtype);
  reader.read(document, "", "time_rule", result.time_rule);
  reader.read_optional(document, "", "avg_busbw", result.avg_busbw);
  std::optional<std::string> peak_bottleneck;
  reader.read_optional(document, "", "peak_bottleneck", peak_bottleneck);
  if (peak_bottleneck) {
    result.peak = BenchPeak{{}, *peak_bottleneck};
    reader.read_optional(document, "", "peak_busbw_gbps", result.peak->gbps);
  }
  if (const Json* rows = reader.field(document, "", "rows", true)) {
    if (!rows->is_array()) reader.fail("", "rows", "not a list");
    for (size_t i = 0; reader.error.empty() && rows->is_array() && i < rows->size(); ++i)
      result.rows.push_back(reader.row((*rows)[i], fmt::format("rows[{}]", i)));
  }
  if (const Json* context = reader.field(document, "", "context", false))
    result.context = reader.context(*context);
  if (!reader.error.empty()) return Error{fmt::format("{}: {}", origin, reader.error)};
  return result;
}

Result<BenchResult> parse_bench_json(std::string_view text, std::string_view origin) {
  const Json document = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (document.is_discarded()) return Error{fmt::format("{}: not valid JSON", origin)};
  return bench_result_from_json(document, origin);
}

}  // namespace nccltune
