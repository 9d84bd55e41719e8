#include "upgrade/upgrade_json.h"

#include <fmt/format.h>

#include <cmath>

#include "base/atomic_file.h"
#include "base/json_field_reader.h"

namespace nccltune {
namespace {

using UpgradeJson = nlohmann::ordered_json;

UpgradeJson optional_number(const std::optional<double>& value) {
  return value ? UpgradeJson(*value) : UpgradeJson(nullptr);
}

struct UpgradeReader : JsonFieldReader<UpgradeJson> {
  void text(const UpgradeJson& object, std::string_view path, const char* key, std::string& out,
            bool required = true) {
    read_text(object, path, key, out, required);
  }
  void number(const UpgradeJson& object, std::string_view path, const char* key, double& out) {
    read_number(object, path, key, out, true);
  }
  void optional_busbw(const UpgradeJson& object, std::string_view path, const char* key,
                      std::optional<double>& out) {
    if (!field(object, path, key, false)) return;
    double value = 0;
    number(object, path, key, value);
    if (error.empty()) out = value;
  }
  UpgradeLibrary library(const UpgradeJson& document, const char* key) {
    UpgradeLibrary library;
    const UpgradeJson* object = field(document, "", key, true);
    if (!object) return library;
    if (!object->is_object()) {
      fail("", key, "not an object");
      return library;
    }
    const std::string path = std::string(key) + ".";
    text(*object, path, "library", library.library);
    text(*object, path, "nccl_version", library.version);
    return library;
  }
  UpgradeRow row(const UpgradeJson& object, const std::string& path) {
    UpgradeRow row;
    if (!object.is_object()) {
      if (error.empty()) error = path + ": not an object";
      return row;
    }
    const std::string prefix = path + ".";
    text(object, prefix, "op", row.op);
    if (const UpgradeJson* bytes = field(object, prefix, "bytes", true)) {
      if (bytes->is_number_unsigned())
        row.bytes = bytes->get<std::uint64_t>();
      else
        fail(prefix, "bytes", "not a size in bytes");
    }
    number(object, prefix, "old_busbw", row.old_busbw);
    number(object, prefix, "new_busbw", row.new_busbw);
    number(object, prefix, "ratio", row.ratio);
    number(object, prefix, "noise", row.noise);
    std::string verdict;
    text(object, prefix, "verdict", verdict);
    if (error.empty()) {
      if (auto parsed = parse_upgrade_verdict(verdict))
        row.verdict = *parsed;
      else
        fail(prefix, "verdict", "not regression, improvement or same within noise");
    }
    if (const UpgradeJson* beyond = field(object, prefix, "beyond_limit", true)) {
      if (beyond->is_boolean())
        row.beyond_limit = beyond->get<bool>();
      else
        fail(prefix, "beyond_limit", "not true or false");
    }
    optional_busbw(object, prefix, "old_profile_busbw", row.old_profile_busbw);
    optional_busbw(object, prefix, "new_profile_busbw", row.new_profile_busbw);
    return row;
  }
  ProfileOnUpgrade profile(const UpgradeJson& object) {
    ProfileOnUpgrade p;
    if (!object.is_object()) {
      fail("", "profile", "not an object");
      return p;
    }
    text(object, "profile.", "path", p.path);
    text(object, "profile.", "nccl", p.nccl);
    number(object, "profile.", "old_gain", p.old_gain);
    number(object, "profile.", "new_gain", p.new_gain);
    text(object, "profile.", "recommendation", p.recommendation);
    if (const UpgradeJson* helps = field(object, "profile.", "helps_on_new", true)) {
      if (helps->is_boolean())
        p.helps_on_new = helps->get<bool>();
      else
        fail("profile.", "helps_on_new", "not true or false");
    }
    return p;
  }
};

}  // namespace

nlohmann::ordered_json upgrade_to_json(const UpgradeComparison& c) {
  UpgradeJson rows = UpgradeJson::array();
  for (const UpgradeRow& row : c.rows)
    rows.push_back(UpgradeJson{{"op", row.op},
                               {"bytes", row.bytes},
                               {"old_busbw", row.old_busbw},
                               {"new_busbw", row.new_busbw},
                               {"ratio", row.ratio},
                               {"noise", row.noise},
                               {"verdict", to_string(row.verdict)},
                               {"beyond_limit", row.beyond_limit},
                               {"old_profile_busbw", optional_number(row.old_profile_busbw)},
                               {"new_profile_busbw", optional_number(row.new_profile_busbw)}});
  UpgradeJson ops = UpgradeJson::array();
  for (const UpgradeOpSummary& op : c.ops)
    ops.push_back(UpgradeJson{
        {"op", op.op}, {"geomean", op.geomean}, {"worst_bytes", op.worst_bytes}, {"worst_ratio", op.worst_ratio}});
  UpgradeJson profile = nullptr;
  if (c.profile)
    profile = UpgradeJson{{"path", c.profile->path},
                          {"nccl", c.profile->nccl},
                          {"old_gain", c.profile->old_gain},
                          {"new_gain", c.profile->new_gain},
                          {"helps_on_new", c.profile->helps_on_new},
                          {"recommendation", c.profile->recommendation}};
  return UpgradeJson{{"schema", kBenchUpgradeSchema},
                     {"old", {{"library", c.old_nccl.library}, {"nccl_version", c.old_nccl.version}}},
                     {"new", {{"library", c.new_nccl.library}, {"nccl_version", c.new_nccl.version}}},
                     {"rounds", c.rounds},
                     {"max_regression_pct", c.max_regression_percent},
                     {"noise", c.noise},
                     {"regressed", c.regressed()},
                     {"rows", std::move(rows)},
                     {"ops", std::move(ops)},
                     {"profile", std::move(profile)}};
}

Result<UpgradeComparison> parse_upgrade_json(std::string_view text, std::string_view origin) {
  const UpgradeJson document = UpgradeJson::parse(text, nullptr, /*allow_exceptions=*/false);
  if (document.is_discarded()) return Error{fmt::format("{}: not valid JSON", origin)};
  if (!document.is_object()) return Error{fmt::format("{}: not a JSON object", origin)};
  const auto schema = document.find("schema");
  if (schema == document.end() || !schema->is_string() || *schema != kBenchUpgradeSchema)
    return Error{fmt::format("{}: schema: expected \"{}\"", origin, kBenchUpgradeSchema)};
  UpgradeComparison c;
  UpgradeReader reader;
  c.old_nccl = reader.library(document, "old");
  c.new_nccl = reader.library(document, "new");
  if (const UpgradeJson* rounds = reader.field(document, "", "rounds", true)) {
    if (rounds->is_number_unsigned() && rounds->get<std::uint64_t>() < 1000000)
      c.rounds = rounds->get<int>();
    else
      reader.fail("", "rounds", "not a count of rounds");
  }
  reader.number(document, "", "max_regression_pct", c.max_regression_percent);
  reader.number(document, "", "noise", c.noise);
  if (const UpgradeJson* rows = reader.field(document, "", "rows", true)) {
    if (!rows->is_array()) reader.fail("", "rows", "not a list");
    for (std::size_t i = 0; reader.error.empty() && rows->is_array() && i < rows->size(); ++i)
      c.rows.push_back(reader.row((*rows)[i], fmt::format("rows[{}]", i)));
  }
  if (const UpgradeJson* profile = reader.field(document, "", "profile", false)) c.profile = reader.profile(*profile);
  if (!reader.error.empty()) return Error{fmt::format("{}: {}", origin, reader.error)};
  c.ops = summarize_upgrade(c.rows);
  return c;
}

Result<UpgradeComparison> read_upgrade_json(const std::filesystem::path& path) {
  auto text = read_text_file(path, kMaxUpgradeJsonBytes);
  if (!text) return Error{text.error()};
  return parse_upgrade_json(*text, path.string());
}

}  // namespace nccltune
