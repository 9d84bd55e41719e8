#include "collectives/nccl_tests_json.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/json_field_reader.h"
#include "base/printable_text.h"
#include "base/text_words.h"

namespace nccltune {
namespace {

using TestsJson = nlohmann::json;

// The newest format version this reader knows (nccl-tests 2.19.6, src/util.cu JSON_FILE_VERSION).
constexpr int64_t kNewestTestsJsonVersion = 3;

// How many ranks one config.devices entry stands for at most (nthreads x ngpus of one process).
constexpr int64_t kMostRanksPerProcess = 1024;

// A NaN as nccl-tests writes it ("nan"), or a number.
enum class TestsNumber { number, nan, wrong };

// The reader of one file: base/json_field_reader.h's field and fail (first error wins), with the
// typed helpers nccl-tests' writer calls for.
struct TestsJsonReader : JsonFieldReader<TestsJson> {
  std::vector<std::string> notes;
  bool cpu_time = false;
  bool per_iteration = false;

  std::optional<int64_t> integer(const TestsJson& object, std::string_view path, const char* key,
                                 bool required) {
    int64_t out = 0;
    if (!read_integer(object, path, key, out, required)) return std::nullopt;
    return out;
  }

  // jsonDouble: "%lf", or the string "nan". A number beyond a double (1e999) is refused, as
  // everywhere: nccl-tests never writes one.
  TestsNumber number(const TestsJson& object, std::string_view path, const char* key, double& out) {
    const TestsJson* value = field(object, path, key, true);
    if (!value) return TestsNumber::wrong;
    if (value->is_string() && value->get<std::string>() == "nan") return TestsNumber::nan;
    return read_number(object, path, key, out, true) ? TestsNumber::number : TestsNumber::wrong;
  }

  std::optional<std::string> string(const TestsJson& object, std::string_view path, const char* key,
                                    bool required) {
    std::string out;
    if (!read_text(object, path, key, out, required)) return std::nullopt;
    return out;
  }

  std::vector<std::string> strings(const TestsJson& object, std::string_view path, const char* key) {
    std::vector<std::string> out;
    read_strings(object, path, key, out, false);
    return out;
  }

  // out_of_place / in_place: {time or cpu_time, alg_bw, bus_bw, nwrong}. nullopt with an error, or
  // with `nan_field` set to the field that is "nan".
  std::optional<Measurement> measurement(const TestsJson& object, const std::string& path,
                                         std::string& nan_field) {
    if (!object.is_object()) {
      error = fmt::format("{}: not an object", path);
      return std::nullopt;
    }
    const std::string prefix = path + ".";
    const bool cpu = object.contains("cpu_time");
    cpu_time = cpu_time || cpu;
    Measurement m;
    const std::pair<const char*, double*> values[] = {
        {cpu ? "cpu_time" : "time", &m.time_us}, {"alg_bw", &m.algbw}, {"bus_bw", &m.busbw}};
    for (const auto& [key, out] : values) {
      const TestsNumber read = number(object, prefix, key, *out);
      if (read == TestsNumber::wrong) return std::nullopt;
      if (read == TestsNumber::nan && nan_field.empty()) nan_field = prefix + key;
    }
    if (field(object, prefix, "nwrong", false)) {  // null: not checked ("N/A")
      double count = 0;
      const TestsNumber read = number(object, prefix, "nwrong", count);
      if (read == TestsNumber::wrong) return std::nullopt;
      if (read == TestsNumber::nan || count < 0 || count > 9e18) {
        if (nan_field.empty()) nan_field = prefix + "nwrong";
      } else {
        m.wrong = static_cast<int64_t>(std::llround(count));
      }
    }
    if (!nan_field.empty()) return std::nullopt;
    return m;
  }

  // One element of results; nullopt with an error, or with `dropped` saying why it is left out.
  std::optional<BenchRow> row(const TestsJson& object, const std::string& path, std::string& dropped) {
    if (!object.is_object()) {
      error = fmt::format("{}: not an object", path);
      return std::nullopt;
    }
    const std::string prefix = path + ".";
    BenchRow row;
    const auto bytes = integer(object, prefix, "size", true);
    const auto count = integer(object, prefix, "count", true);
    const auto type = string(object, prefix, "type", true);
    const auto redop = string(object, prefix, "redop", true);
    std::optional<int64_t> root;
    if (const TestsJson* value = field(object, prefix, "root", false)) {
      root = value->is_string() ? to_int(trimmed(value->get<std::string>()))  // "%6i": "    -1"
                                : integer(object, prefix, "root", false);
      if (error.empty() && (!root || *root < -1 || *root > INT32_MAX)) fail(prefix, "root", "not a rank");
    }
    if (!error.empty()) return std::nullopt;
    if (*bytes > kNcclTestsMaxRowBytes) {
      dropped = fmt::format("{}: size {} is beyond 1 PiB", path, *bytes);
      return std::nullopt;
    }
    if (*count < 0 || *count > *bytes) {
      dropped = fmt::format("{}: count {} is not a whole number from 0 to the size", path, *count);
      return std::nullopt;
    }
    row.bytes = *bytes;
    row.count = *count;
    row.type = *type;
    row.redop = *redop;
    row.root = static_cast<int>(root.value_or(-1));
    per_iteration = per_iteration || object.contains("out_of_place_per_iter") ||
                    object.contains("in_place_per_iter");
    const TestsJson* out = field(object, prefix, "out_of_place", true);
    if (!out) return std::nullopt;
    if (out->is_null()) {  // writeBenchMarkLineNullBody: no out-of-place run
      dropped = fmt::format("{}: no out-of-place measurement", path);
      return std::nullopt;
    }
    std::string nan_field;
    const auto out_of_place = measurement(*out, prefix + "out_of_place", nan_field);
    if (!out_of_place) {
      if (!nan_field.empty()) dropped = fmt::format("{}: nan", nan_field);
      return std::nullopt;
    }
    row.out_of_place = *out_of_place;
    if (const TestsJson* in = field(object, prefix, "in_place", false)) {
      row.in_place = measurement(*in, prefix + "in_place", nan_field);
      if (!row.in_place) {
        if (!nan_field.empty()) dropped = fmt::format("{}: nan", nan_field);
        return std::nullopt;
      }
    }
    return row;
  }

  // config.devices, one entry per process (its first rank line), each standing for nthreads x
  // ngpus consecutive ranks on its host.
  std::vector<NcclTestsRank> ranks(const TestsJson& config) {
    std::vector<NcclTestsRank> ranks;
    if (!config.is_object()) {
      fail("", "config", "not an object");
      return ranks;
    }
    const int64_t threads = integer(config, "config.", "nthreads", false).value_or(1);
    const int64_t gpus = integer(config, "config.", "ngpus", false).value_or(1);
    const TestsJson* devices = field(config, "config.", "devices", false);
    if (!error.empty() || !devices) return ranks;
    if (!devices->is_array()) {
      fail("config.", "devices", "not a list");
      return ranks;
    }
    if (threads < 1 || gpus < 1 || threads * gpus > kMostRanksPerProcess) {
      notes.push_back(fmt::format("config.nthreads {} x ngpus {} is not a rank count of one process", threads,
                                  gpus));
      return {};
    }
    for (std::size_t i = 0; i < devices->size() && error.empty(); ++i) {
      const TestsJson& device = (*devices)[i];
      const std::string path = fmt::format("config.devices[{}]", i);
      if (!device.is_object()) {
        error = path + ": not an object";
        break;
      }
      const auto rank = integer(device, path + ".", "rank", true);
      const auto group = integer(device, path + ".", "group", false);
      const auto host = string(device, path + ".", "hostname", true);
      if (!error.empty()) break;
      if (*rank < 0 || *rank > INT32_MAX - threads * gpus) {
        fail(path + ".", "rank", "not a rank");
        break;
      }
      for (int64_t k = 0; k < threads * gpus; ++k)
        ranks.push_back(NcclTestsRank{static_cast<int>(*rank + k), static_cast<int>(group.value_or(0)), *host});
    }
    return ranks;
  }
};

// nccl_version: NCCL_VERSION_CODE, 2.9 on major*10000 + minor*100 + patch, before that *1000.
std::string nccl_version_of_code(int64_t code) {
  if (code >= 20900) return fmt::format("{}.{}.{}", code / 10000, code % 10000 / 100, code % 100);
  return fmt::format("{}.{}.{}", code / 1000, code % 1000 / 100, code % 100);
}

// The op, from args[0]'s program; as the text reader guesses it when no program is named.
void read_op(const std::vector<std::string>& args, NcclTestsLog& log) {
  BenchResult& bench = log.bench;
  const std::string program = args.empty() ? std::string() : nccl_tests_collective(args.front());
  if (!program.empty()) {
    bench.op = program;
    return;
  }
  log.op_assumed = true;
  const std::string& redop = bench.rows.front().redop;
  const bool reduces = redop == "sum" || redop == "prod" || redop == "max" || redop == "min" ||
                       redop == "avg" || redop == "mulsum" || redop == "premulsum";
  bench.op = reduces ? "all_reduce" : "unknown";
  log.notes.push_back(reduces ? fmt::format("args[0] names no *_perf program: op all_reduce assumed from redop "
                                            "'{}' (reduce_scatter and reduce write the same fields)",
                                            redop)
                              : fmt::format("args[0] names no *_perf program and redop '{}' is not a "
                                            "reduction: op unknown",
                                            redop));
}

std::string parse_error_text(const TestsJson::exception& error) {
  const std::string_view what = error.what();  // "[json.exception.parse_error.101] parse error at ..."
  const std::size_t start = what.find("] ");
  return printable_excerpt(start == std::string_view::npos ? what : what.substr(start + 2), 200);
}

}  // namespace

bool is_nccl_tests_json(std::string_view text) {
  const std::size_t first = text.find_first_not_of(" \t\r\n");
  return first != std::string_view::npos && text[first] == '{';
}

Result<NcclTestsLog> read_nccl_tests_json(std::string_view text, std::string_view origin) {
  TestsJson document;
  try {
    document = TestsJson::parse(text);
  } catch (const TestsJson::parse_error& error) {
    return Error{fmt::format("{}: not valid JSON: {}", origin, parse_error_text(error))};
  } catch (const TestsJson::out_of_range& error) {
    // A number beyond a double (1e999): "number overflow parsing '1e999'", not a crash.
    return Error{fmt::format("{}: not valid JSON: {}", origin, parse_error_text(error))};
  }
  if (!document.is_object())
    return Error{fmt::format("{}: not a JSON object (nccl-tests -J writes one)", origin)};

  TestsJsonReader reader;
  NcclTestsLog log;
  log.format = "nccl-tests-json";
  log.time_step_us = 1e-6;  // "%lf"
  BenchResult& bench = log.bench;
  const auto version = reader.integer(document, "", "version", true);
  const std::vector<std::string> args = reader.strings(document, "", "args");
  const std::vector<std::string> env = reader.strings(document, "", "env");
  const auto nccl_version = reader.integer(document, "", "nccl_version", false);
  std::vector<NcclTestsRank> ranks;
  if (const TestsJson* config = reader.field(document, "", "config", false)) ranks = reader.ranks(*config);
  std::vector<std::string> dropped;
  if (const TestsJson* results = reader.field(document, "", "results", true)) {
    if (!results->is_array()) reader.fail("", "results", "not a list");
    for (std::size_t i = 0; reader.error.empty() && results->is_array() && i < results->size(); ++i) {
      std::string why;
      if (auto row = reader.row((*results)[i], fmt::format("results[{}]", i), why))
        bench.rows.push_back(std::move(*row));
      else if (!why.empty())
        dropped.push_back(std::move(why));
    }
  }
  // Versions before 2.18.0 misspell the average's keys.
  const bool misspelled = !document.contains("average_bus_bandwidth") && document.contains("average_bus_bandwidith");
  const char* average_key = misspelled ? "average_bus_bandwidith" : "average_bus_bandwidth";
  if (const TestsJson* average = reader.field(document, "", average_key, false)) {
    if (!average->is_object()) reader.fail("", average_key, "not an object");
    double value = 0;
    if (reader.error.empty() &&
        reader.number(*average, std::string(average_key) + ".", misspelled ? "bandwidith" : "bandwidth",
                      value) == TestsNumber::number)
      bench.avg_busbw = value;
  }
  std::optional<int64_t> out_of_bounds;
  if (const TestsJson* bounds = reader.field(document, "", "out_of_bounds", false)) {
    if (!bounds->is_object()) reader.fail("", "out_of_bounds", "not an object");
    if (reader.error.empty()) out_of_bounds = reader.integer(*bounds, "out_of_bounds.", "count", false);
  }
  const std::vector<std::string> errors = reader.strings(document, "", "errors");
  if (!reader.error.empty()) return Error{fmt::format("{}: {}", origin, reader.error)};
  if (bench.rows.empty())
    return Error{fmt::format("{}: results: no rows{}", origin, dropped.empty() ? "" : " (dropped " + dropped[0] + ")")};

  // What ran, where, and how times were combined: as the console output of the same run says it.
  bench.dtype = bench.rows.front().type;
  bench.context.argv = args;
  for (const std::string& entry : env) {  // NCCL_* only: the rest of a job's environment stays out
    const std::size_t equals = entry.find('=');
    if (entry.starts_with("NCCL_") && equals != std::string::npos)
      bench.context.env[entry.substr(0, equals)] = entry.substr(equals + 1);
  }
  if (nccl_version && *nccl_version > 0) bench.context.nccl_version = nccl_version_of_code(*nccl_version);
  read_op(args, log);
  NcclTestsRankCount count = count_nccl_tests_ranks(ranks);
  bench.ranks = count.ranks;
  bench.nodes = count.nodes;
  bench.context.hosts = std::move(count.hosts);
  for (std::string& note : count.notes) log.notes.push_back(std::move(note));
  if (!bench.ranks)
    log.notes.push_back(ranks.empty() ? "rank count unknown: no config.devices; ranks left null"
                                      : "rank count unknown: config.devices does not list ranks 0..n-1 once "
                                        "each; ranks left null");
  bench.time_rule = nccl_tests_time_rule(args, 1, log.notes);

  // Anything else the reader should know.
  if (*version > kNewestTestsJsonVersion)
    log.notes.push_back(fmt::format("JSON version {} is newer than {} (nccl-tests 2.19.6): read as {}", *version,
                                    kNewestTestsJsonVersion, kNewestTestsJsonVersion));
  if (reader.cpu_time) log.notes.push_back("times are CPU times (nccl-tests -C 1), not GPU times");
  if (reader.per_iteration)
    log.notes.push_back(
        "per-iteration statistics (-I 1: *_per_iter) not imported: nccltune/bench/v1 has no field for them");
  if (out_of_bounds && *out_of_bounds > 0)
    log.notes.push_back(fmt::format("nccl-tests reported {} out-of-bounds values", *out_of_bounds));
  for (const std::string& error : errors)
    if (!error.empty()) log.notes.push_back("nccl-tests reported an error: " + printable_excerpt(error, 200));
  constexpr std::size_t kDroppedRowsNamed = 20;
  for (std::size_t i = 0; i < dropped.size() && i < kDroppedRowsNamed; ++i)
    log.notes.push_back("dropped the row " + dropped[i]);
  if (dropped.size() > kDroppedRowsNamed)
    log.notes.push_back(fmt::format("dropped {} more rows", dropped.size() - kDroppedRowsNamed));
  if (std::any_of(bench.rows.begin(), bench.rows.end(),
                  [&](const BenchRow& row) { return row.type != bench.dtype; }))
    log.notes.push_back("rows use more than one data type; dtype is the first row's");
  if (!bench.avg_busbw)
    log.notes.push_back(fmt::format("{}.{} missing or nan: avg_busbw left null", average_key,
                                    misspelled ? "bandwidith" : "bandwidth"));
  return log;
}

Result<NcclTestsLog> read_nccl_tests_output(std::string_view text, std::string_view origin) {
  return is_nccl_tests_json(text) ? read_nccl_tests_json(text, origin) : read_nccl_tests_log(text, origin);
}

}  // namespace nccltune
