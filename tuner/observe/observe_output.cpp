#include "observe/observe_output.h"

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "base/byte_size.h"
#include "base/printable_text.h"

namespace nccltune {

namespace {

using ObserveJson = nlohmann::ordered_json;

ObserveJson optional_number(const std::optional<double>& value) {
  return value && std::isfinite(*value) ? ObserveJson(*value) : ObserveJson(nullptr);
}
ObserveJson optional_text(const std::optional<std::string>& value) {
  return value ? ObserveJson(*value) : ObserveJson(nullptr);
}

std::string number_or_dash(const std::optional<double>& value, const char* format) {
  if (!value) return "-";
  char text[32];
  std::snprintf(text, sizeof text, format, *value);
  return text;
}

std::string size_words(std::uint64_t bytes) {
  return format_byte_size(bytes);
}

}  // namespace

std::string render_observe_json(const ObserveReport& report) {
  ObserveJson json;
  json["schema"] = std::string(kObserveSchema);
  const ObserveContext& context = report.context;
  json["context"] = {
      {"dirs", context.dirs},
      {"records", context.records},
      {"ranks", context.ranks},
      {"hosts", context.hosts},
      {"inspector_versions", context.inspector_versions},
      {"profile", context.profile.empty() ? ObserveJson(nullptr) : ObserveJson(context.profile)},
      {"tolerance", context.tolerance}};
  ObserveJson communicators = ObserveJson::array();
  for (const ObserveCommunicatorReport& communicator : report.communicators) {
    ObserveJson rows = ObserveJson::array();
    for (const ObserveRow& row : communicator.rows)
      rows.push_back(
          {{"collective", row.collective},
           {"min_bytes", row.min_bytes},
           {"max_bytes", row.max_bytes},
           {"ops", row.ops ? ObserveJson(*row.ops) : ObserveJson(nullptr)},
           {"time_share", row.time_share},
           {"busbw_median", optional_number(row.busbw_median)},
           {"busbw_p10", optional_number(row.busbw_p10)},
           {"tuned_busbw", optional_number(row.tuned_busbw)},
           {"tuned_source", row.tuned_source.empty() ? ObserveJson(nullptr) : ObserveJson(row.tuned_source)},
           {"ratio", optional_number(row.ratio)},
           {"ran", optional_text(row.ran)},
           {"tuned", optional_text(row.tuned)},
           {"verdict", std::string(to_string(row.verdict))},
           {"tune", row.tune.empty() ? ObserveJson(nullptr) : ObserveJson(row.tune)}});
    communicators.push_back({{"id", communicator.id},
                             {"name", communicator.name},
                             {"n_ranks", communicator.n_ranks},
                             {"nnodes", communicator.nnodes},
                             {"hosts", communicator.hosts},
                             {"shape", communicator.shape},
                             {"source", communicator.source},
                             {"section", optional_text(communicator.section)},
                             {"matched", communicator.matched},
                             {"unmatched", communicator.unmatched},
                             {"rows", rows}});
  }
  json["communicators"] = communicators;
  ObserveJson stragglers = ObserveJson::array();
  for (const ObserveStraggler& straggler : report.stragglers)
    stragglers.push_back({{"rank", straggler.rank},
                          {"host", straggler.host},
                          {"gpu", optional_text(straggler.gpu)},
                          {"file", straggler.file},
                          {"communicator", straggler.communicator},
                          {"communicator_name", straggler.communicator_name},
                          {"last", straggler.last},
                          {"last_share", straggler.last_share},
                          {"cost_us", straggler.cost_us}});
  json["stragglers"] = stragglers;
  ObserveJson suspects = ObserveJson::array();
  for (const ObserveSuspect& suspect : report.suspects)
    suspects.push_back({{"host", suspect.host}, {"why", suspect.why}});
  json["suspects"] = suspects;
  // Replace: the names come from files nccltune did not write.
  return json.dump(2, ' ', false, ObserveJson::error_handler_t::replace) + "\n";
}

std::string render_observe_text(const ObserveReport& report) {
  std::string out;
  char line[512];
  const ObserveContext& context = report.context;
  std::snprintf(line, sizeof line, "%llu records of %d ranks on %zu hosts; profile: %s\n",
                static_cast<unsigned long long>(context.records), context.ranks, context.hosts.size(),
                context.profile.empty() ? "none" : printable_excerpt(context.profile, 200).c_str());
  out += line;
  for (const ObserveCommunicatorReport& communicator : report.communicators) {
    std::snprintf(line, sizeof line, "\ncommunicator %s %s: %d ranks, %d node%s, %s; profile section: %s\n",
                  printable_excerpt(communicator.id, 40).c_str(),
                  printable_excerpt(communicator.name.empty() ? "(no name)" : communicator.name, 60).c_str(),
                  communicator.n_ranks, communicator.nnodes, communicator.nnodes == 1 ? "" : "s",
                  communicator.shape.c_str(), communicator.section ? communicator.section->c_str() : "none");
    out += line;
    std::snprintf(line, sizeof line, "  %-15s %-21s %9s %6s %9s %9s %9s %6s %-12s %s\n", "collective", "size",
                  "ops", "time%", "busbw p50", "busbw p10", "tuned", "ratio", "tuned algo", "verdict");
    out += line;
    for (const ObserveRow& row : communicator.rows) {
      // [min, max + 1): the bucket's powers of two read better than its last byte.
      const std::string range =
          "[" + size_words(row.min_bytes) + "," +
          (row.max_bytes == ~std::uint64_t(0) ? std::string("inf") : size_words(row.max_bytes + 1)) + ")";
      std::snprintf(
          line, sizeof line, "  %-15s %-21s %9s %5.1f%% %9s %9s %9s %6s %-12s %s\n",
          printable_excerpt(row.collective, 15).c_str(), range.c_str(),
          row.ops ? std::to_string(*row.ops).c_str() : "-", 100 * row.time_share,
          number_or_dash(row.busbw_median, "%.2f").c_str(), number_or_dash(row.busbw_p10, "%.2f").c_str(),
          number_or_dash(row.tuned_busbw, "%.2f").c_str(), number_or_dash(row.ratio, "%.2f").c_str(),
          row.tuned ? row.tuned->c_str() : "-", std::string(to_string(row.verdict)).c_str());
      out += line;
      if (row.ran) out += "      NCCL ran: " + printable_excerpt(*row.ran, 200) + "\n";
      if (!row.tune.empty()) out += "      measure it: " + row.tune + "\n";
    }
    if (communicator.unmatched > 0) {
      std::snprintf(line, sizeof line,
                    "  %llu collectives matched across ranks, %llu not (a rank's record missing "
                    "or past the window)\n",
                    static_cast<unsigned long long>(communicator.matched),
                    static_cast<unsigned long long>(communicator.unmatched));
      out += line;
    }
  }
  out += report.stragglers.empty() ? "\nno straggler\n" : "\nstragglers:\n";
  for (const ObserveStraggler& straggler : report.stragglers) {
    std::snprintf(
        line, sizeof line,
        "  rank %d on %s (%s%s): last in %.0f%% of its collectives, the others waited %.0f us for it "
        "(most in communicator %s)\n",
        straggler.rank, printable_excerpt(straggler.host.empty() ? "?" : straggler.host, 80).c_str(),
        straggler.gpu ? (printable_excerpt(*straggler.gpu, 40) + ", ").c_str() : "",
        printable_excerpt(straggler.file, 200).c_str(), 100 * straggler.last_share, straggler.cost_us,
        printable_excerpt(
            straggler.communicator_name.empty() ? straggler.communicator : straggler.communicator_name, 60)
            .c_str());
    out += line;
  }
  if (!report.suspects.empty()) out += "\nsuspects:\n";
  for (const ObserveSuspect& suspect : report.suspects)
    out += "  " + printable_excerpt(suspect.host, 80) + ": " + printable_excerpt(suspect.why, 400) + "\n";
  return out;
}

}  // namespace nccltune
