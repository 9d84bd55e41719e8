// The survey as Slurm drain lines (fleet_output.h): printed, never run.
#include "fleet/fleet_output.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "base/clean_text.h"
#include "base/printable_text.h"

namespace nccltune {
namespace {

// Slurm host names (hostlist syntax aside): a letter or digit, then letters, digits, '.', '_',
// '-'; at most 255 bytes. Anything else is not put on a command line.
bool is_slurm_host_name(std::string_view name) {
  const auto allowed = [](char c, bool first) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           (!first && (c == '.' || c == '_' || c == '-'));
  };
  if (name.empty() || name.size() > 255) return false;
  for (std::size_t i = 0; i < name.size(); ++i)
    if (!allowed(name[i], i == 0)) return false;
  return true;
}

// The drain reason: letters, digits and " ._,:%()/+-" only (nothing a shell expands or ends
// inside double quotes: no $ ` \ " !); any other byte becomes a space, runs of spaces one, at
// most 200 bytes.
std::string drain_reason(std::string_view text) {
  constexpr std::string_view kKept = " ._,:%()/+-";
  std::string reason;
  for (char c : text) {
    const bool kept = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      kKept.find(c) != std::string_view::npos;
    const char out = kept ? c : ' ';
    if (out == ' ' && (reason.empty() || reason.back() == ' ')) continue;
    reason += out;
  }
  if (reason.size() > 200) reason.resize(200);
  while (!reason.empty() && reason.back() == ' ') reason.pop_back();
  return reason;
}

// A comment line's text: printable ASCII, so that nothing ends the comment early.
std::string comment(std::string_view text) {
  return "# " + printable_excerpt(text, 500) + "\n";
}

std::string drain_line(const std::string& node, const std::string& evidence) {
  const std::string reason = drain_reason("nccltune fleet: " + evidence);
  if (!is_slurm_host_name(node))
    return comment(fmt::format("skipped '{}': not a Slurm host name ({})", node, reason));
  return fmt::format("scontrol update NodeName={} State=DRAIN Reason=\"{}\"\n", node, reason);
}

}  // namespace

std::string render_slurm_drain(const FleetSurvey& survey) {
  std::string out;
  std::vector<std::string> drained;  // one line per node, the first reason
  const auto drain = [&](const std::string& node, const std::string& evidence) {
    if (std::find(drained.begin(), drained.end(), node) != drained.end()) return;
    drained.push_back(node);
    out += drain_line(node, evidence);
  };
  for (const FailedNode& f : survey.failed)
    drain(f.node, fmt::format("{} in the {} stage{}", f.what, f.stage, f.reason.empty() ? "" : ": " + f.reason));
  for (const SuspectNode& s : survey.suspects) drain(s.node, s.evidence);
  // A link is two nodes' cable or switch port, not a node: the operator decides.
  for (const SuspectLink& link : survey.links)
    out += comment(fmt::format("link {} - {} (not drained, a link is not a node): {}", link.nodes[0], link.nodes[1],
                               link.evidence));
  if (out.empty()) out = comment("nccltune fleet: no node to drain");
  return out;
}

}  // namespace nccltune
