#include "topology/check_render.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace nccltune {

namespace {

// "1 warning", "2 warnings", "0 failures".
std::string counted(std::size_t n, const char* word) {
  return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s");
}

// "PASS", "WARN", "FAIL": check's text and JSON spell verdicts in capitals.
std::string verdict_label(Verdict verdict) {
  std::string label(to_string(verdict));
  for (char& c : label) c = static_cast<char>(c - 'a' + 'A');
  return label;
}

std::string finding_line(const Finding& f) {
  return fmt::format("{}  {:<17} {:<20} {}\n", verdict_label(f.verdict), f.check, f.subject, f.message);
}

std::string recommendations_text(const CheckReport& report) {
  std::string out;
  if (!report.recommendations.empty()) out += "\nRecommended:\n";
  for (const auto& r : report.recommendations)
    out += fmt::format("  export {}='{}'   # {}\n", r.name, r.value, r.reason);
  return out;
}

// `check --verbose`: every check, as check printed them before it printed problems only.
std::string render_every_check(const NodeTopology& topology, const CheckReport& report) {
  std::string out =
      fmt::format("{}: {} GPUs, {} NICs\n", topology.host, topology.gpus.size(), topology.nics.size());
  if (topology.gpus.empty()) out += "No NVIDIA GPU found on this node: GPU checks skipped.\n";
  for (const auto& f : report.findings) out += finding_line(f);
  if (report.gdr)
    out += report.gdr->ready ? "\nGPUDirect RDMA: ready\n"
                             : fmt::format("\nGPUDirect RDMA: blocked by {} (above)\n",
                                           fmt::join(report.gdr->blocked_by, ", "));
  out += recommendations_text(report);
  for (const auto& note : topology.notes) out += "Note: " + note + "\n";
  out += fmt::format("\n{}: {} passed, {}, {}\n", verdict_label(report.overall()),
                     report.count(Verdict::pass), counted(report.count(Verdict::warn), "warning"),
                     counted(report.count(Verdict::fail), "failure"));
  return out;
}

}  // namespace

std::string render_check_text(const NodeTopology& topology, const CheckReport& report, CheckDetail detail) {
  if (detail == CheckDetail::every_check) return render_every_check(topology, report);
  // Problems only, as NHC prints them: a healthy node's log gets its verdict and exports.
  std::string out;
  for (const auto& f : report.findings)
    if (f.verdict != Verdict::pass) out += finding_line(f);
  for (const auto& note : topology.notes) out += "Note: " + note + "\n";
  out += fmt::format(
      "{}: {}, {}, {}\n", verdict_label(report.overall()), counted(report.findings.size(), "check"),
      counted(report.count(Verdict::warn), "warning"), counted(report.count(Verdict::fail), "failure"));
  out += recommendations_text(report);
  return out;
}

nlohmann::ordered_json check_to_json(const NodeTopology& topology, const CheckReport& report) {
  nlohmann::ordered_json doc;
  doc["schema"] = "nccltune/check/v1";
  doc["host"] = topology.host;
  doc["verdict"] = verdict_label(report.overall());
  doc["exit_code"] = report.exit_code();
  doc["counts"] = {{"pass", report.count(Verdict::pass)},
                   {"warn", report.count(Verdict::warn)},
                   {"fail", report.count(Verdict::fail)}};
  nlohmann::ordered_json findings = nlohmann::ordered_json::array();
  for (const auto& f : report.findings)
    findings.push_back({{"check", f.check},
                        {"subject", f.subject},
                        {"verdict", verdict_label(f.verdict)},
                        {"message", f.message}});
  doc["findings"] = findings;
  nlohmann::ordered_json recommendations = nlohmann::ordered_json::object();
  for (const auto& r : report.recommendations)
    recommendations[r.name] = {{"value", r.value}, {"reason", r.reason}};
  doc["recommendations"] = recommendations;
  doc["gpudirect_rdma"] = report.gdr ? nlohmann::ordered_json{{"ready", report.gdr->ready},
                                                              {"blocked_by", report.gdr->blocked_by}}
                                     : nlohmann::ordered_json(nullptr);
  doc["notes"] = topology.notes;
  return doc;
}

}  // namespace nccltune
