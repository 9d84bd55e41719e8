// `nccltune report PROFILE -o FILE.html [--journal FILE] [--topology SRC] [--fleet FILE]`: one
// self-contained HTML page for a profile. `nccltune report --fleet FILE -o FILE.html`: a page of a
// fleet survey alone (`nccltune fleet --out FILE`), which an operator makes before any tune; with a
// PROFILE too, the survey is a section of the profile's page.
// `nccltune report --upgrade FILE.json -o FILE.html`: a page of an NCCL upgrade check (the -J of
// `bench --baseline-nccl-lib`, report/upgrade_report.h).
// `nccltune report [PROFILE] --observed FILE.json -o FILE.html`: a production job as `nccltune
// observe --format json` saw it (report/observed_section.h); with a PROFILE a section of its page,
// alone a page of its own.
// The best other candidates' curves come from the tune journal: --journal, else journal.jsonl next
// to the profile, else in the store root above it (where `tune --out DIR` writes it by default).
// The node diagram comes from --topology SRC (a snapshot directory from `topo --capture`,
// nvidia-smi:FILE, nvidia-smi-q:FILE or hwloc:FILE), because the report is usually made away from
// the tuned nodes; without it the report says how to add one.
// Exit 0 when written; 2 when the profile, an explicit journal, the topology, the survey or the
// observed job cannot be read, or the file cannot be written.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "base/atomic_file.h"
#include "base/printable_text.h"
#include "cli/commands.h"
#include "fleet/fleet_output.h"
#include "profile/profile_store.h"
#include "report/at_a_glance.h"
#include "report/candidate_curves.h"
#include "report/fleet_section.h"
#include "report/observation_json.h"
#include "report/observed_section.h"
#include "report/report_html.h"
#include "report/upgrade_report.h"
#include "search/journal.h"
#include "topology/sources/topology_reader.h"
#include "upgrade/upgrade_json.h"

namespace nccltune::cli {

namespace {

constexpr int kReportFailed = 2;

struct ReportOptions {
  std::string profile;
  std::string output;
  std::string journal;
  std::string topology;
  std::string fleet;
  std::string title;
  std::size_t candidates = 3;
  std::string upgrade;  // --upgrade FILE.json: a page of an NCCL upgrade check alone
  bool summary = false;     // print what the tune found (report/at_a_glance.h) instead of "wrote"
  std::string fleet_page;   // the fleet's own page, named by --summary
  std::string observed;     // --observed FILE.json: what `nccltune observe --format json` wrote
};

// The journal's entries, or none with the reason in `note`. Only an explicit --journal that
// cannot be read is an error.
Result<std::vector<JournalEntry>> load_journal(const ReportOptions& options, std::string& note) {
  std::filesystem::path path = options.journal;
  if (path.empty()) {
    const std::filesystem::path dir = std::filesystem::path(options.profile).parent_path();
    for (const std::filesystem::path& candidate :
         {dir / "journal.jsonl", dir.parent_path() / "journal.jsonl"}) {
      std::error_code error;
      if (std::filesystem::is_regular_file(candidate, error)) {
        path = candidate;
        break;
      }
    }
    if (path.empty()) {
      note = "No tune journal found next to the profile (--journal FILE adds the other candidates' curves).";
      return std::vector<JournalEntry>{};
    }
  }
  auto entries = Journal::read(path);
  if (!entries) {
    if (!options.journal.empty()) return Error{entries.error()};
    std::fprintf(stderr, "nccltune report: warning: %s; drawing no candidates\n", entries.error().c_str());
    note = "The journal " + path.string() + " could not be read: " + entries.error();
    return std::vector<JournalEntry>{};
  }
  note = "Other candidates from the journal " + path.string() +
         ": the best measured on the profile's own sizes, " + "scored by the profile's objective.";
  return entries;
}

// `quiet`: no "wrote" line (--summary names the file instead).
// Why -o cannot be written where it names, as the user would look for it: its directory missing
// or not a directory. "" when the directory is there (the write itself says what else fails).
std::string output_directory_problem(const std::string& output) {
  std::filesystem::path directory = std::filesystem::path(output).parent_path();
  if (directory.empty()) return "";  // the current directory
  std::error_code error;
  const std::filesystem::file_status status = std::filesystem::status(directory, error);
  const std::string where = "-o " + printable_excerpt(output, 200) + ": the directory " +
                            printable_excerpt(directory.string(), 200);
  if (status.type() == std::filesystem::file_type::not_found)
    return where + " does not exist (create it first)";
  if (!error && !std::filesystem::is_directory(status)) return where + " is not a directory";
  return "";
}

int write_report(const std::string& output, const std::string& html, bool quiet = false) {
  if (const std::string problem = output_directory_problem(output); !problem.empty()) {
    print_error_line("nccltune report", problem);
    return kReportFailed;
  }
  auto written = write_file_atomically(output, html);
  if (!written) {
    print_error_line("nccltune report", written.error());
    return kReportFailed;
  }
  if (!quiet) std::printf("nccltune report: wrote %s\n", output.c_str());
  return 0;
}

std::string absolute_path(const std::string& path) {
  std::error_code error;
  const std::filesystem::path absolute = std::filesystem::absolute(path, error);
  return error ? path : absolute.lexically_normal().string();
}

int run_report(const ReportOptions& options) {
  auto fail = [](const std::string& message) {
    print_error_line("nccltune report", message);
    return kReportFailed;
  };
  if (!options.upgrade.empty()) {
    if (!options.profile.empty() || !options.fleet.empty() || !options.journal.empty() ||
        !options.topology.empty() || !options.observed.empty())
      return fail(
          "--upgrade draws a page of its own: give no PROFILE, --fleet, --observed, --journal or --topology "
          "with it");
    auto upgrade = read_upgrade_json(options.upgrade);
    if (!upgrade) return fail("--upgrade: " + upgrade.error());
    return write_report(options.output, render_upgrade_report_html(*upgrade, options.upgrade, options.title,
                                                                   std::string("nccltune ") + NCCLTUNE_VERSION));
  }
  std::optional<FleetSurvey> fleet;
  if (!options.fleet.empty()) {
    auto survey = read_fleet_survey(options.fleet);
    if (!survey) return fail("--fleet: " + survey.error());
    fleet = std::move(survey.value());
  }
  std::optional<Observation> observed;
  if (!options.observed.empty()) {
    auto observation = read_observation_json(options.observed);
    if (!observation) return fail("--observed: " + observation.error());
    observed = std::move(observation.value());
  }
  if (!options.fleet_page.empty() && !options.summary)
    return fail("--fleet-page names a page in --summary's lines: add --summary");
  if (options.profile.empty() && observed) {
    if (fleet || !options.journal.empty() || !options.topology.empty() || options.summary)
      return fail(
          "--observed without a PROFILE draws the observed job alone: give no --fleet, --journal, "
          "--topology or --summary with it");
    return write_report(options.output,
                        render_observed_report_html(*observed, options.observed, options.title,
                                                    std::string("nccltune ") + NCCLTUNE_VERSION));
  }
  if (options.profile.empty()) {
    if (!fleet) return fail("give a PROFILE, --fleet FILE, --observed FILE, or a PROFILE with either");
    if (!options.journal.empty() || !options.topology.empty() || options.summary)
      return fail("--journal, --topology and --summary are about a profile: give its PROFILE too");
    return write_report(options.output,
                        render_fleet_report_html(*fleet, options.fleet, options.title,
                                                 std::string("nccltune ") + NCCLTUNE_VERSION));
  }
  auto profile = read_profile(options.profile);
  if (!profile) return fail(profile.error());

  ReportInput input;
  input.profile = std::move(profile.value());
  input.profile_source = options.profile;
  input.title = options.title;
  input.generated_by = std::string("nccltune ") + NCCLTUNE_VERSION;

  auto journal = load_journal(options, input.journal_note);
  if (!journal) return fail("--journal: " + journal.error());
  bool any_candidate = false;
  for (const auto& [op, collective] : input.profile.collectives) {
    input.candidates[op] = best_candidates(input.profile, *journal, options.candidates, op);
    any_candidate |= !input.candidates[op].empty();
  }
  if (!journal->empty() && !any_candidate)
    input.journal_note =
        "The journal holds no other successful configuration measured on the profile's sizes.";

  // The other node counts of this node type beside it in the store: their curves and what a job
  // of each size gets. One that cannot be read is left out with a warning.
  const std::filesystem::path directory = std::filesystem::path(options.profile).parent_path();
  // Only its own layout's: an MNNVL profile's counts are NVLink domains of as many hosts each.
  const StoreLayout layout = layout_of(input.profile.shape);
  for (const int nodes : stored_node_counts(directory.empty() ? "." : directory, layout)) {
    if (nodes == input.profile.shape.nodes) {
      input.node_counts[nodes] = input.profile;
      continue;
    }
    auto sibling = read_profile(directory / profile_file_name(nodes, layout));
    if (sibling && sibling->shape.node_type_key == input.profile.shape.node_type_key)
      input.node_counts[nodes] = std::move(*sibling);
    else if (!sibling)
      std::fprintf(stderr, "nccltune report: warning: %s; left out\n", sibling.error().c_str());
  }

  if (!options.topology.empty()) {
    auto source = parse_topology_source(options.topology);
    if (!source) return fail("--topology: " + source.error());
    auto topology = read_node_topology(*source, ReadOptions{});
    if (!topology) return fail("--topology " + options.topology + ": " + topology.error());
    input.topology = std::move(topology.value());
    input.topology_source = options.topology;
  }

  input.fleet = std::move(fleet);
  input.fleet_source = options.fleet;
  input.observed = std::move(observed);
  input.observed_source = options.observed;
  if (const int status = write_report(options.output, render_report_html(input), options.summary); status != 0)
    return status;
  if (options.summary) {
    std::vector<GlancePage> pages{{"report", absolute_path(options.output)}};
    if (!options.fleet_page.empty()) pages.push_back({"fleet", absolute_path(options.fleet_page)});
    std::fputs(render_at_a_glance(input.profile, input.fleet ? &*input.fleet : nullptr, pages).c_str(), stdout);
  }
  return 0;
}

}  // namespace

void add_report_command(CLI::App& app, Command& command) {
  auto options = std::make_shared<ReportOptions>();
  auto* sub = app.add_subcommand(
      "report",
      "Write a self-contained HTML report of a profile, a fleet survey, an observed job, or a profile "
      "with either (exit 0 written, 2 on bad input)");
  sub->add_option("PROFILE", options->profile, "Profile YAML written by `nccltune tune`");
  sub->add_option("-o,--output", options->output, "HTML file to write (replaced atomically)")->required();
  sub->add_option(
      "--journal", options->journal,
      "Tune journal for the other candidates' curves (default: journal.jsonl next to the profile or in "
      "the store root above it)");
  sub->add_option(
      "--topology", options->topology,
      "Node to draw: a snapshot DIR (`nccltune topo --capture`), nvidia-smi:FILE, nvidia-smi-q:FILE or "
      "hwloc:FILE");
  sub->add_option(
      "--fleet", options->fleet,
      "Fleet survey JSON (`nccltune fleet --out FILE`): a heat map of the node pairs, the suspects "
      "and failed nodes; alone, or a section of PROFILE's report");
  sub->add_option(
         "--observed", options->observed,
         "What `nccltune observe --format json` wrote of a job: time per communicator shape, observed / "
         "tuned busbw per size, the verdicts, stragglers and suspects; alone, or a section of PROFILE's "
         "report")
      ->type_name("FILE.json");
  sub->add_option("--candidates", options->candidates, "How many other candidates to draw")
      ->check(CLI::Range(0, 5))
      ->capture_default_str();
  sub->add_option("--upgrade", options->upgrade,
                  "The JSON of an NCCL upgrade check (`bench --baseline-nccl-lib OLD -J FILE`): a page of its "
                  "own, the ratio NEW/OLD per size per collective with the regressions marked")
      ->type_name("FILE.json");
  sub->add_option("--title", options->title, "A line shown at the top of the report, e.g. what was measured");
  sub->add_flag("--summary", options->summary,
                "Print what the tune found instead of the 'wrote' line: the --fleet survey's suspects, what "
                "ships, the gain with and without the tuner plugin per collective, and the pages (at most "
                "10 lines for up to 5 collectives)");
  sub->add_option("--fleet-page", options->fleet_page,
                  "The fleet survey's own page (`report --fleet FILE -o PAGE`), named by --summary");
  sub->callback([options, &command] { command.run = [options] { return run_report(*options); }; });
}

}  // namespace nccltune::cli
