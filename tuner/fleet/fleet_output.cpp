// The survey as a person reads it: a table of the nodes, worst first, with the evidence
// (fleet_output.h). Its JSON is fleet_json.cpp and its Slurm drain lines fleet_drain.cpp.
#include "fleet/fleet_output.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>
#include <utility>

#include "base/byte_size.h"
#include "base/clean_text.h"
#include "base/printable_text.h"
#include "base/text_words.h"
#include "fleet/fleet_numbers.h"

namespace nccltune {
namespace {

// A cell of the table: printable ASCII (other bytes as \xNN), so that the columns line up.
std::string cell(std::string_view text) {
  return printable_excerpt(text, 300);
}

std::string number_cell(const std::optional<double>& value) {
  return value ? fmt::format("{:.1f}", *value) : "-";
}

// Columns padded to their widest cell, two spaces apart; the last column is not padded.
std::string aligned_rows(const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> widths;
  for (const auto& row : rows)
    for (std::size_t i = 0; i < row.size(); ++i) {
      if (widths.size() <= i) widths.push_back(0);
      widths[i] = std::max(widths[i], row[i].size());
    }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line += std::string(widths[i] - row[i].size() + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

// What the table says of one node, gathered from the survey's lists.
struct NodeFacts {
  std::size_t order = 0;  // first mention
  const LocalResult* local = nullptr;
  const FailedNode* failed = nullptr;
  const SuspectNode* suspect = nullptr;
  // The lowest and highest busbw of its pairs over the network [0] and over NVLink [1].
  std::array<std::optional<double>, 2> pairs_low, pairs_high;
  std::vector<std::string> links;  // the other ends
};

std::string range_cell(const std::optional<double>& low, const std::optional<double>& high) {
  if (!low) return "-";
  return *low == *high ? number_cell(low) : number_cell(low) + "-" + number_cell(high);
}

// One row of the nodes' table, and how bad it is (for the order).
struct NodeRow {
  int rank = 0;  // 0 failed, 1 slow, 2 warn (or another local verdict), 3 pass
  std::size_t order = 0;
  std::optional<double> local_busbw;
  std::vector<std::string> cells;
};

// With NVLink domains known, a node's domain and its pairs per path have columns of their own.
NodeRow node_row(const FleetSurvey& survey, const std::string& node, const NodeFacts& facts, bool domains) {
  NodeRow row;
  row.order = facts.order;
  std::string verdict = "pass", evidence;
  row.rank = 3;
  if (const FailedNode* f = facts.failed) {
    verdict = "failed";
    row.rank = 0;
    evidence = fmt::format("{} in the {} stage{}", f->what, f->stage, f->reason.empty() ? "" : ": " + f->reason);
  } else if (const SuspectNode* s = facts.suspect) {
    verdict = "slow";
    row.rank = 1;
    evidence = s->path + ": " + s->evidence;
  } else if (facts.local && facts.local->verdict != "pass") {
    verdict = facts.local->verdict;
    row.rank = 2;
    if (verdict == "warn") evidence = fmt::format("below {}% of the peak model", survey.thresholds.min_peak_pct);
  }
  for (const std::string& other : facts.links) evidence += (evidence.empty() ? "link with " : "; link with ") + other;
  const LocalResult* local = facts.local;
  row.local_busbw = local ? local->busbw_gbps : std::nullopt;
  const std::string network_pairs = range_cell(facts.pairs_low[0], facts.pairs_high[0]);
  if (!domains) {
    row.cells = {cell(node), number_cell(row.local_busbw), number_cell(local ? local->pct_of_peak : std::nullopt),
                 network_pairs, cell(verdict), cell(evidence)};
    return row;
  }
  std::string domain = local ? local->domain : "";
  if (domain.empty() && facts.suspect) domain = facts.suspect->domain;
  row.cells = {cell(node),
               domain.empty() ? "-" : cell(domain),
               number_cell(row.local_busbw),
               number_cell(local ? local->pct_of_peak : std::nullopt),
               range_cell(facts.pairs_low[1], facts.pairs_high[1]),
               network_pairs,
               cell(verdict),
               cell(evidence)};
  return row;
}

// Every node the survey names, worst first: failed, slow (in the survey's order), warned, then
// the rest by local busbw, lowest first.
std::string nodes_table(const FleetSurvey& survey) {
  std::map<std::string, NodeFacts> nodes;
  const auto facts = [&](const std::string& name) -> NodeFacts& {
    const auto [it, added] = nodes.try_emplace(name);
    if (added) it->second.order = nodes.size();
    return it->second;
  };
  for (const FailedNode& f : survey.failed)
    if (!facts(f.node).failed) facts(f.node).failed = &f;
  for (const SuspectNode& s : survey.suspects)
    if (!facts(s.node).suspect) facts(s.node).suspect = &s;
  for (const LocalResult& l : survey.local)
    if (!facts(l.node).local) facts(l.node).local = &l;
  for (const PairResult& p : survey.pairs)
    for (const std::string& name : p.nodes) {
      NodeFacts& node = facts(name);
      if (!p.busbw_gbps) continue;
      const std::size_t on = p.path == "nvlink" ? 1 : 0;
      node.pairs_low[on] = std::min(node.pairs_low[on].value_or(*p.busbw_gbps), *p.busbw_gbps);
      node.pairs_high[on] = std::max(node.pairs_high[on].value_or(*p.busbw_gbps), *p.busbw_gbps);
    }
  for (const SuspectLink& link : survey.links) {
    facts(link.nodes[0]).links.push_back(link.nodes[1]);
    facts(link.nodes[1]).links.push_back(link.nodes[0]);
  }
  const bool domains = std::any_of(survey.local.begin(), survey.local.end(),
                                   [](const LocalResult& l) { return !l.domain.empty(); }) ||
                       std::any_of(survey.pairs.begin(), survey.pairs.end(),
                                   [](const PairResult& p) { return p.path == "nvlink"; });
  std::vector<NodeRow> rows;
  for (const auto& [name, node] : nodes) rows.push_back(node_row(survey, name, node, domains));
  std::sort(rows.begin(), rows.end(), [](const NodeRow& x, const NodeRow& y) {
    if (x.rank != y.rank) return x.rank < y.rank;
    const double inf = std::numeric_limits<double>::infinity();
    if (x.rank > 1 && x.local_busbw.value_or(inf) != y.local_busbw.value_or(inf))
      return x.local_busbw.value_or(inf) < y.local_busbw.value_or(inf);
    return x.order < y.order;  // failed and slow as the survey lists them (worst first)
  });
  std::vector<std::vector<std::string>> table;
  if (domains)
    table.push_back(
        {"node", "domain", "local busbw", "% of peak", "nvlink busbw", "network busbw", "verdict", "evidence"});
  else
    table.push_back({"node", "local busbw", "% of peak", "pairs busbw", "verdict", "evidence"});
  for (NodeRow& row : rows) table.push_back(std::move(row.cells));
  return aligned_rows(table);
}

std::string peak_text(const std::optional<double>& peak) {
  return peak ? fmt::format("{:.1f} GB/s", *peak) : "unknown";
}

}  // namespace

std::string render_fleet_text(const FleetSurvey& survey) {
  std::string out = fmt::format(
      "nccltune fleet: {} node(s) x {} GPU(s), {} at {} (busbw) and {} (latency), {} round(s) of pairs, noise {:.1f}%\n",
      survey.nodes, survey.gpus_per_node, cell(survey.collective), format_byte_size(survey.bytes),
      format_byte_size(survey.small_bytes), survey.rounds, survey.noise_pct);
  out += fmt::format("peak model: {} in a node, {} between two nodes; slow: below {}x the median; warn: below {}% "
                     "of the peak\n",
                     peak_text(survey.peak_intra_gbps), peak_text(survey.peak_inter_gbps), survey.thresholds.outlier,
                     survey.thresholds.min_peak_pct);
  if (survey.nvlink_median_gbps)  // a rack: each path against its own median
    out += fmt::format("NVLink domains: pairs inside one ran over NVLink (median {:.1f} GB/s), pairs across "
                       "domains over the network (median {})\n",
                       *survey.nvlink_median_gbps,
                       survey.pair_median_gbps ? fmt::format("{:.1f} GB/s", *survey.pair_median_gbps) : "-");
  out += "\n" + nodes_table(survey);
  if (!survey.links.empty()) {
    std::vector<std::vector<std::string>> table{{"link", "busbw", "evidence"}};
    for (const SuspectLink& link : survey.links)
      table.push_back({cell(link.nodes[0] + " - " + link.nodes[1]), number_cell(link.busbw_gbps), cell(link.evidence)});
    out += "\n" + aligned_rows(table);
  }
  if (!survey.failed.empty()) {
    std::vector<std::vector<std::string>> table{{"failed", "what", "stage", "reason"}};
    for (const FailedNode& f : survey.failed) table.push_back({cell(f.node), cell(f.what), cell(f.stage), cell(f.reason)});
    out += "\n" + aligned_rows(table);
  }
  out += "\n";
  for (const FleetVerdict& v : survey.verdicts) out += fmt::format("{:<4}  {}\n", cell(upper_ascii(v.level)), cell(v.message));
  return out;
}

}  // namespace nccltune
