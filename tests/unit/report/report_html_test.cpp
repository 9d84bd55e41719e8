// The HTML report: self-contained (no script, no external resource), every section present, the
// curves of the defaults, the tuned profile and the best journal candidates, hostile text escaped;
// and how the candidates are picked from a journal.
#include "report/report_html.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <regex>
#include <string>

#include "base/byte_size.h"
#include "report/candidate_curves.h"
#include "report_fixtures.h"
#include "search/journal.h"
#include "test_files.h"
#include "topology/sources/topology_reader.h"

using namespace nccltune;
using nccltune::test_support::fixture;
using nccltune::test_support::occurrences;
using nccltune::test_support::read_node_snapshot;

namespace {

const std::string kDemoProfile = "report/store/h100-80gb-hbm3.2gpu.nics-unknown.nccl2.28/2n.yaml";

// tests/fixtures/<relative>.
Profile read_fixture_profile(const std::string& relative) {
  auto profile = read_profile(fixture(relative));
  EXPECT_TRUE(profile) << profile.error();
  return profile ? *profile : Profile{};
}

std::vector<JournalEntry> read_fixture_journal() {
  auto entries = Journal::read(fixture("report/store/journal.jsonl"));
  EXPECT_TRUE(entries) << entries.error();
  return entries ? *entries : std::vector<JournalEntry>{};
}

ReportInput demo_input() {
  ReportInput in;
  in.profile = read_fixture_profile(kDemoProfile);
  in.profile_source = "out/h100/2n.yaml";
  in.candidates[kAllReduce] = best_candidates(in.profile, read_fixture_journal(), 3);
  in.journal_note = "candidates from out/journal.jsonl";
  in.topology = read_node_snapshot("dgx-h100");
  in.topology_source = "tests/fixtures/nodes/dgx-h100";
  in.generated_by = "nccltune test";
  return in;
}

JournalEntry entry(std::map<std::string, std::string> env, int iterations, std::vector<double> busbw) {
  JournalEntry e;
  e.node_type_key = "k";
  e.nccl_version = "2.28.9";
  e.env = std::move(env);
  e.phase = iterations > 5 ? TrialPhase::halving : TrialPhase::screen;
  e.iterations = iterations;
  e.sizes = {8, 1024};
  e.outcome = TrialOutcome::ok;
  e.busbw = std::move(busbw);
  return e;
}

Profile small_profile() {
  Profile p;
  p.shape.node_type_key = "k";
  p.shape.nccl_version = "2.28.9";
  p.env = {{"NCCL_ALGO", "Ring"}};
  p.collectives["all_reduce"].results.sizes = {8, 1024};
  p.collectives["all_reduce"].results.baseline = {1, 10};
  p.collectives["all_reduce"].results.tuned = {1, 20};
  return p;
}

}  // namespace

TEST(ReportHtml, IsSelfContained) {
  const std::string html = render_report_html(demo_input());
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(html.find("</html>"), std::string::npos);
  for (const char* banned : {"<script", "<link", "<iframe", "<img", "@import", "url(", "src=", "href="})
    EXPECT_EQ(html.find(banned), std::string::npos) << banned;
  // The only URL is the SVG namespace name, which browsers never fetch.
  const std::regex url("https?://[^\"]*");
  for (auto it = std::sregex_iterator(html.begin(), html.end(), url); it != std::sregex_iterator(); ++it)
    EXPECT_EQ(it->str(), "http://www.w3.org/2000/svg");
}

TEST(ReportHtml, HasEverySection) {
  const std::string html = render_report_html(demo_input());
  for (const char* id : {"busbw", "speedup", "settings", "why", "node", "failed"})
    EXPECT_NE(html.find(std::string("<section id=\"") + id + "\">"), std::string::npos) << id;
  EXPECT_EQ(occurrences(html, "<svg"), 3u);  // curves, speedup, node
  EXPECT_NE(html.find("<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"node-diagram\""), std::string::npos);
  // Why: objective, noise floor and the confirmation from the profile.
  EXPECT_NE(html.find("<strong>balanced</strong>"), std::string::npos);
  EXPECT_NE(html.find("<dd>0.5% (spread"), std::string::npos);
  EXPECT_NE(html.find("+6.9% (worst size +0.0%, noise 0.5%): confirmed"), std::string::npos);
  // Settings: every env variable and each per-size range.
  EXPECT_NE(html.find("<code>NCCL_MIN_NCHANNELS</code></td><td><code>32</code>"), std::string::npos);
  EXPECT_NE(html.find(">512K .. &lt;8M</td><td>Ring/LL128<"), std::string::npos);
  // Failed trials with their reasons.
  EXPECT_EQ(occurrences(html, "<td class=\"outcome\">"), 4u);
  EXPECT_NE(html.find("115340 wrong elements over all ranks and sizes"), std::string::npos);
}

TEST(ReportHtml, DrawsDefaultsTunedAndTheBestCandidates) {
  const ReportInput in = demo_input();
  ASSERT_EQ(in.candidates.at(kAllReduce).size(), 3u);
  const std::string html = render_report_html(in);
  EXPECT_EQ(occurrences(html, "data-series=\"defaults\""), 1u);
  EXPECT_EQ(occurrences(html, "<polyline class=\"curve\" data-series=\"tuned\""), 1u);
  // The gap between tuned and the defaults is shaded (the ratio band).
  EXPECT_EQ(occurrences(html, "<polygon class=\"gap-band\" data-series=\"tuned\""), 1u);
  for (const char* id : {"candidate-1", "candidate-2", "candidate-3"})
    EXPECT_EQ(occurrences(html, std::string("data-series=\"") + id + "\""), 1u) << id;
  EXPECT_NE(html.find("candidates from out/journal.jsonl"), std::string::npos);
  // One speedup bar per measured size.
  EXPECT_EQ(occurrences(html, "class=\"bar\""), in.profile.collectives.at("all_reduce").results.sizes.size());
}

TEST(ReportHtml, DrawsTheHardwarePeakAndItsShare) {
  ReportInput in = demo_input();
  EXPECT_EQ(occurrences(render_report_html(in), "data-series=\"peak\""), 0u) << "no peak in the profile";
  in.profile.collectives["all_reduce"].results.peak_busbw_gbps = 450;
  in.profile.collectives["all_reduce"].results.peak_bottleneck = "NVLink4 x18";
  const std::string html = render_report_html(in);
  EXPECT_EQ(occurrences(html, "data-series=\"peak\""), 1u);
  EXPECT_NE(html.find("hardware peak 450 GB/s (NVLink4 x18)"), std::string::npos);
  EXPECT_NE(html.find("<th class=\"num\">% of peak</th>"), std::string::npos);
  const auto percent = percent_of_peak(in.profile.collectives["all_reduce"].results,
                                       in.profile.collectives["all_reduce"].results.sizes.size() - 1);
  ASSERT_TRUE(percent);
  EXPECT_NE(html.find(fmt::format("<td class=\"num\">{:.0f}%</td>", *percent)), std::string::npos);

  in.profile.collectives["all_reduce"].results.peak_busbw_gbps.reset();
  in.profile.collectives["all_reduce"].results.peak_bottleneck = "unknown: <b>no NIC</b>";
  const std::string unknown = render_report_html(in);
  EXPECT_EQ(occurrences(unknown, "data-series=\"peak\""), 0u);
  EXPECT_NE(unknown.find("Hardware peak unknown: &lt;b&gt;no NIC&lt;/b&gt;"), std::string::npos);
}

TEST(ReportHtml, WarnsWhenTheTopologyIsNotTheTunedShape) {
  ReportInput in = demo_input();  // 2 GPUs per node measured, a DGX-H100 drawn
  EXPECT_NE(render_report_html(in).find(
                "This topology (8 GPUs, 8 NICs) differs from the shape the profile was tuned "
                "on (2 GPUs, 0 NICs per node)"),
            std::string::npos);
  in.profile.shape.gpus_per_node = 8;
  in.profile.shape.nics_per_node = 8;
  EXPECT_EQ(render_report_html(in).find("differs from the shape"), std::string::npos);
}

TEST(ReportHtml, WithoutTopologyOrJournalSaysHowToAddThem) {
  ReportInput in = demo_input();
  in.topology.reset();
  in.candidates.clear();
  const std::string html = render_report_html(in);
  EXPECT_NE(html.find("No node topology was given"), std::string::npos);
  EXPECT_EQ(html.find("class=\"node-diagram\""), std::string::npos);
  EXPECT_EQ(html.find("data-series=\"candidate-1\""), std::string::npos);
  EXPECT_NE(html.find("data-series=\"tuned\""), std::string::npos);
}

TEST(ReportHtml, KeepDefaultsSaysSo) {
  ReportInput in;
  in.profile = read_fixture_profile("report/keep-defaults-2n.yaml");
  const std::string html = render_report_html(in);
  EXPECT_NE(html.find("Keep NCCL's defaults."), std::string::npos);
  EXPECT_NE(html.find("None: every configuration tried ran"), std::string::npos);
}

TEST(ReportHtml, EscapesHostileProfileText) {
  // Strings a profile may legally carry (parse_profile rejects only control characters and bad UTF-8).
  Profile p = read_fixture_profile(kDemoProfile);
  p.shape.gpu = "<img src=x onerror=alert(1)>";
  p.provenance.confirmation = "</dd><script>alert('x')</script>";
  p.provenance.objective = "\"><script>";
  p.failed[0].reason = "<script>document.location='http://evil'</script>";
  ReportInput in = demo_input();
  in.profile = p;
  in.profile_source = "<b>path</b>";
  in.title = "demo & <i>simulated</i>";
  // A snapshot is read from files a user may be sent, and the journal from a shared store.
  ASSERT_FALSE(in.topology->gpus.empty());
  ASSERT_FALSE(in.topology->nics.empty());
  in.topology->host = "<u>host</u>";
  in.topology->gpus[0].name = "<svg onload=1>";
  in.topology->nics[0].name = "<a name=nic>";
  in.topology->notes.push_back("<style>note</style>");
  in.topology_source = "<em>snapshot</em>";
  ASSERT_FALSE(in.candidates[kAllReduce].empty());
  in.candidates[kAllReduce][0].env["NCCL_ALGO"] = "</title><iframe>";
  const std::string html = render_report_html(in);
  for (const char* raw : {"<script", "<img", "<b>path", "<i>simulated", "<u>", "<svg onload", "<a name",
                          "<style>note", "<em>", "</title><iframe", "<iframe"})
    EXPECT_EQ(html.find(raw), std::string::npos) << raw;
  for (const char* escaped :
       {"&lt;script&gt;document.location=&#39;http://evil&#39;&lt;/script&gt;",
        "&lt;img src=x onerror=alert(1)&gt;", "demo &amp; &lt;i&gt;simulated&lt;/i&gt;",
        "&quot;&gt;&lt;script&gt;", "&lt;b&gt;path&lt;/b&gt;", "&lt;u&gt;host&lt;/u&gt;",
        "&lt;svg onload=1&gt;", "&lt;a name=nic&gt;", "&lt;style&gt;note&lt;/style&gt;",
        "&lt;em&gt;snapshot&lt;/em&gt;", "NCCL_ALGO=&lt;/title&gt;&lt;iframe&gt;"})
    EXPECT_NE(html.find(escaped), std::string::npos) << escaped;
}

TEST(ReportHtml, UnknownSpeedupsReadNa) {
  ReportInput in;
  in.profile = read_fixture_profile("report/nan-2n.yaml");  // NaN and zero baselines, a NaN tuned value
  const std::string html = render_report_html(in);
  EXPECT_EQ(occurrences(html, "\">n/a</td><td>"), 3u);  // the speedup cells of 1K, 512K and 8M
  EXPECT_NE(html.find("<td class=\"num neutral\">1.000x</td>"), std::string::npos);   // 8 B
  EXPECT_NE(html.find("1.000x &rarr; <span class=\"neutral\">n/a</span>"), std::string::npos);  // the geomean
  EXPECT_EQ(occurrences(html, "class=\"bar\""), 1u);  // no bar for an unknown speedup
  EXPECT_EQ(html.find("n/ax"), std::string::npos);
  EXPECT_EQ(html.find("nan"), std::string::npos);
}

TEST(BestCandidates, FromTheDemoJournalTheBestOtherConfigsOnTheProfileSizes) {
  const Profile profile = read_fixture_profile(kDemoProfile);
  const auto candidates = best_candidates(profile, read_fixture_journal(), 3);
  ASSERT_EQ(candidates.size(), 3u);
  for (const CandidateCurve& c : candidates) {
    EXPECT_FALSE(c.env.empty());
    EXPECT_NE(c.env, profile.env);
    EXPECT_EQ(c.busbw.size(), profile.collectives.at("all_reduce").results.sizes.size());
    EXPECT_EQ(c.phase, TrialPhase::halving);  // the longest measurements on the final grid
  }
  EXPECT_GE(candidates[0].score, candidates[1].score);
  EXPECT_GE(candidates[1].score, candidates[2].score);
}

TEST(ReportHtml, ASectionPerCollectiveWithItsOwnCandidates) {
  ReportInput in;
  in.profile = read_fixture_profile("report/collectives/2n.yaml");
  in.profile_source = "collectives/2n.yaml";
  const auto journal = Journal::read(fixture("report/collectives/journal.jsonl"));
  ASSERT_TRUE(journal) << journal.error();
  for (const auto& [op, collective] : in.profile.collectives) {
    in.candidates[op] = best_candidates(in.profile, *journal, 3, op);
    // Every tuned collective was measured in the same trials: each has its own curves from
    // them. A guard was measured by the defaults and the winner only.
    EXPECT_EQ(in.candidates[op].size(), collective.guard ? 0u : 3u) << op;
    for (const CandidateCurve& c : in.candidates[op])
      EXPECT_EQ(c.busbw.size(), collective.results.sizes.size()) << op;
  }
  EXPECT_NE(in.candidates.at("all_gather")[0].busbw, in.candidates.at("all_reduce")[0].busbw);
  const std::string html = render_report_html(in);
  for (const char* op : {"all_reduce", "all_gather", "reduce_scatter", "alltoall"}) {
    EXPECT_NE(html.find(std::string("<section id=\"busbw-") + op + "\"><h2>Bus bandwidth (" + op + ")</h2>"),
              std::string::npos)
        << op;
    EXPECT_NE(html.find(std::string("<section id=\"speedup-") + op + "\">"), std::string::npos) << op;
    EXPECT_NE(html.find(std::string("<td><strong>") + op + "</strong></td>"), std::string::npos) << op;
  }
  EXPECT_NE(html.find("<span class=\"status\">guard</span><br><span class=\"sub\">measured against the "
                      "defaults, not tuned</span>"),
            std::string::npos);
  EXPECT_NE(html.find("<h4>reduce_scatter</h4>"), std::string::npos);  // its per-size choices
  EXPECT_EQ(html.find("<h4>alltoall</h4>"), std::string::npos);        // a guard has none
}

// Profile v3: each communicator shape's collectives get their own speedup section, named by the
// shape, without NCCL's choices (its log was read on the world).
TEST(ReportHtml, ASpeedupSectionPerCommunicatorShape) {
  ReportInput in;
  in.profile = read_fixture_profile("report/collectives/2n.yaml");
  in.profile_source = "collectives/2n.yaml";
  CommunicatorSection rail{2, 1, CommRole::rail, {}};
  rail.collectives["all_reduce"] = in.profile.collectives.at("all_reduce");
  in.profile.shapes.push_back(rail);
  const std::string html = render_report_html(in);
  EXPECT_NE(
      html.find("<section id=\"speedup-rail-all_reduce\"><h2>Speedup per message size (all_reduce, rail: 2 "
                "nodes x 1 rank)</h2>"),
      std::string::npos);
  const std::string rail_part = html.substr(html.find("id=\"speedup-rail-all_reduce\""));
  EXPECT_EQ(rail_part.substr(0, rail_part.find("</section>")).find("NCCL chose"), std::string::npos);
}

TEST(BestCandidates, AveragesTheLongestMeasurementsAndSkipsWhatDoesNotQualify) {
  const Profile p = small_profile();
  std::vector<JournalEntry> journal = {
      entry({{"NCCL_PROTO", "LL"}}, 5, {1, 100}),  // a short screen, replaced by the longer runs
      entry({{"NCCL_PROTO", "LL"}}, 20, {1, 12}),
      entry({{"NCCL_PROTO", "LL"}}, 20, {1, 14}),  // averaged with the one above: 13
      entry({{"NCCL_PROTO", "Simple"}}, 20, {1, 11}),
      entry({}, 20, {1, 10}),                       // the defaults
      entry({{"NCCL_ALGO", "Ring"}}, 20, {1, 20}),  // the profile's own env
  };
  JournalEntry failed = entry({{"NCCL_ALGO", "Tree"}}, 20, {1, 50});
  failed.outcome = TrialOutcome::wrong_data;
  JournalEntry other_shape = entry({{"NCCL_ALGO", "NVLS"}}, 20, {1, 50});
  other_shape.node_type_key = "other";
  JournalEntry other_nccl = entry({{"NCCL_ALGO", "NVLS"}}, 20, {1, 50});
  other_nccl.nccl_version = "2.29.1";
  JournalEntry other_sizes = entry({{"NCCL_ALGO", "NVLS"}}, 20, {1, 50, 60});
  other_sizes.sizes = {8, 1024, 4096};
  journal.insert(journal.end(), {failed, other_shape, other_nccl, other_sizes});

  const auto candidates = best_candidates(p, journal, 5);
  ASSERT_EQ(candidates.size(), 2u);
  EXPECT_EQ(candidates[0].env, (std::map<std::string, std::string>{{"NCCL_PROTO", "LL"}}));
  EXPECT_EQ(candidates[0].measurements, 2);
  EXPECT_EQ(candidates[0].iterations, 20);
  EXPECT_DOUBLE_EQ(candidates[0].busbw[1], 13);
  EXPECT_EQ(candidates[1].env, (std::map<std::string, std::string>{{"NCCL_PROTO", "Simple"}}));
  EXPECT_GT(candidates[0].score, candidates[1].score);
  EXPECT_EQ(best_candidates(p, journal, 1).size(), 1u);
}

TEST(BestCandidates, APairModeEntryCountsByItsEnvsOwnMeasurementOnly) {
  // A halving run in pair mode measured its env under NCCL's own choice, then two forced pairs:
  // the candidate's curve is the first part; an entry of forced pairs alone is no candidate.
  const Profile p = small_profile();
  JournalEntry halving = entry({{"NCCL_PROTO", "LL"}}, 20, {1, 12, 1, 90, 1, 95});
  halving.pairs = {"NCCL/own", "Ring/LL", "Tree/LL"};
  halving.pair_outcomes = {TrialOutcome::ok, TrialOutcome::ok, TrialOutcome::wrong_data};
  halving.unavailable = {0, 0, 0, 0, 0, 0};
  JournalEntry cross = halving;
  cross.env = {{"NCCL_PROTO", "Simple"}};
  cross.pairs = {"Ring/LL", "Tree/LL", "Ring/Simple"};
  JournalEntry own_failed = halving;
  own_failed.env = {{"NCCL_ALGO", "Tree"}};
  own_failed.pair_outcomes = {TrialOutcome::wrong_data, TrialOutcome::ok, TrialOutcome::ok};

  const auto candidates = best_candidates(p, {halving, cross, own_failed}, 5);
  ASSERT_EQ(candidates.size(), 1u);
  EXPECT_EQ(candidates[0].env, (std::map<std::string, std::string>{{"NCCL_PROTO", "LL"}}));
  EXPECT_EQ(candidates[0].busbw, (std::vector<double>{1, 12}));
}

TEST(ReportHtml, ShowsWhatNcclChoseNextToTheMeasuredBest) {
  ReportInput in = demo_input();
  EXPECT_NE(render_report_html(in).find("What NCCL did</h2>\n<p>Not recorded"), std::string::npos);
  EXPECT_EQ(render_report_html(in).find("<th>NCCL chose</th>"), std::string::npos);

  NcclObservation shipped;
  shipped.transport = "IB";
  shipped.hcas = {"mlx5_0:1"};
  const std::uint64_t size = in.profile.collectives["all_reduce"].results.sizes.at(1);
  shipped.choices = {{"AllReduce", size, "RING", "LL128<"}};
  in.profile.provenance.nccl_observed.shipped = shipped;
  in.profile.provenance.nccl_observed.verdicts = {{"warn", "hcas", "NCCL uses 1 of 8 <ACTIVE> ports"}};
  in.profile.provenance.nccl_observed.contradictions = {{"AllReduce", size, "RING/LL128", "Tree/LL"}};
  const std::string html = render_report_html(in);
  EXPECT_NE(html.find("<th>NCCL chose</th><th>measured best</th>"), std::string::npos);
  EXPECT_NE(html.find("<td class=\"mono\">RING/LL128&lt;</td>"), std::string::npos);  // escaped
  EXPECT_NE(html.find("<dt>with the env</dt><dd>IB, 1 device (mlx5_0:1)</dd>"), std::string::npos);
  EXPECT_NE(html.find("<dt class=\"flag\">warn hcas</dt><dd>NCCL uses 1 of 8 &lt;ACTIVE&gt; ports</dd>"),
            std::string::npos);
  EXPECT_NE(html.find("NCCL chose RING/LL128 under the shipped env; Tree/LL measured fastest"),
            std::string::npos);
  EXPECT_EQ(html.find("NCCL's model"), std::string::npos);

  // NCCL's model of the pair it chose under the defaults, next to the defaults' busbw there.
  NcclObservation defaults;
  const CollectiveProfile& all_reduce = in.profile.collectives["all_reduce"];
  const std::uint64_t largest = all_reduce.results.sizes.back();
  defaults.choices = {{"AllReduce", largest, "RING", "SIMPLE"}};
  in.profile.provenance.nccl_observed.defaults = defaults;
  in.profile.provenance.nccl_observed.nccl_model["all_reduce"] = {{"RING", "SIMPLE", 12.5, 400}};
  const std::string with_model = render_report_html(in);
  EXPECT_NE(
      with_model.find("<dt>NCCL's model</dt><dd>NCCL&#39;s model: RING/SIMPLE 400.00 GB/s predicted at large "
                      "sizes (its model&#39;s asymptotic busbw, latency left out); measured under the "
                      "defaults at " +
                      format_byte_size(largest)),
      std::string::npos)
      << with_model;
}
