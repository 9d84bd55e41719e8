// What env, nccltune-env and the plugin read of a profile (ProfileParts::for_jobs): everything a
// job's environment needs, as the whole parse gives it, without the curves and NCCL's account
// that make most of a profile tune writes; errors still name the file's own lines.
#include <gtest/gtest.h>

#include <algorithm>

#include "profile/profile.h"
#include "test_files.h"

using namespace nccltune;

namespace {

std::string tuned_profile() {
  return test_support::read_file(test_support::fixture("report/collectives/2n.yaml"));
}

// What a job needs of a profile.
Profile job_parts(Profile profile) {
  profile.provenance = {};
  profile.failed.clear();
  profile.notes.clear();
  for (auto& [op, collective] : profile.collectives) collective.results = {};
  return profile;
}

}  // namespace

TEST(ProfileForJobs, GivesWhatTheWholeParseGivesAJob) {
  const std::string text = tuned_profile();
  Result<Profile> whole = parse_profile(text, "2n.yaml");
  Result<Profile> skimmed = parse_profile(text, "2n.yaml", ProfileParts::for_jobs);
  ASSERT_TRUE(whole) << whole.error();
  ASSERT_TRUE(skimmed) << skimmed.error();
  ASSERT_FALSE(whole->collectives.empty());
  EXPECT_FALSE(whole->provenance.tool.empty());
  EXPECT_EQ(*skimmed, job_parts(*whole));
  // Most of the file is what a job does not need.
  const std::optional<std::string> kept = profile_text_for_jobs(text);
  ASSERT_TRUE(kept);
  EXPECT_LT(kept->size() * 2, text.size());
}

TEST(ProfileForJobs, KeepsEveryLineNumber) {
  const std::string text = tuned_profile();
  const std::optional<std::string> kept = profile_text_for_jobs(text);
  ASSERT_TRUE(kept);
  EXPECT_EQ(std::count(kept->begin(), kept->end(), '\n'), std::count(text.begin(), text.end(), '\n'));
  // An error in a part jobs read names the same line either way.
  std::string broken = text;
  broken.replace(broken.find("NCCL_"), 5, "LD_X_");
  Result<Profile> whole = parse_profile(broken, "2n.yaml");
  Result<Profile> skimmed = parse_profile(broken, "2n.yaml", ProfileParts::for_jobs);
  ASSERT_FALSE(whole);
  ASSERT_FALSE(skimmed);
  EXPECT_EQ(skimmed.error(), whole.error());
}

TEST(ProfileForJobs, SkipsBlockSectionsAndTheirSequenceItems) {
  const std::string text =
      "schema: nccltune/profile/v2\n"
      "shape: {key: \"k\", nodes: 2, gpus_per_node: 8}\n"
      "env: {NCCL_ALGO: \"Ring\"}\n"
      "collectives:\n"
      "  all_reduce:\n"
      "    measured: {min_bytes: 8, max_bytes: 1024}\n"
      "    results:\n"
      "      sizes: [8, 1024]\n"
      "      # a comment\n"
      "    per_size: []\n"
      "notes:\n"
      "- \"a note\"\n"
      "- \"another\"\n"
      "failed: [{env: {}, reason: \"x\"}]\n"
      "provenance:\n"
      "  tool: \"nccltune\"\n";
  EXPECT_EQ(profile_text_for_jobs(text).value_or("(parsed whole)"),
            "schema: nccltune/profile/v2\n"
            "shape: {key: \"k\", nodes: 2, gpus_per_node: 8}\n"
            "env: {NCCL_ALGO: \"Ring\"}\n"
            "collectives:\n"
            "  all_reduce:\n"
            "    measured: {min_bytes: 8, max_bytes: 1024}\n"
            "\n\n\n"
            "    per_size: []\n"
            "\n\n\n\n\n\n");
  Result<Profile> skimmed = parse_profile(text, "p.yaml", ProfileParts::for_jobs);
  ASSERT_TRUE(skimmed) << skimmed.error();
  EXPECT_EQ(skimmed->env.at("NCCL_ALGO"), "Ring");
  EXPECT_TRUE(skimmed->collectives.at("all_reduce").per_size.empty());
}

TEST(ProfileForJobs, WhatTheStrictReaderRefusesAnywhereIsStillRefused) {
  const std::string text = tuned_profile();
  const std::size_t provenance = text.find("\nprovenance:\n");
  ASSERT_NE(provenance, std::string::npos);
  const std::size_t inside = provenance + std::string("\nprovenance:\n").size();
  // In the provenance jobs skip: a NUL, invalid UTF-8, an anchor and its alias; after it all, a
  // second document.
  for (const auto& [at, bad] : {std::pair{inside, std::string("  tool: \"a\0b\"\n", 14)},
                                std::pair{inside, std::string("  tool: \"\xff\"\n")},
                                std::pair{inside, std::string("  tool: &a \"x\"\n  date: *a\n")},
                                std::pair{text.size(), std::string("---\nschema: nccltune/profile/v2\n")}}) {
    std::string broken = text;
    broken.insert(at, bad);
    Result<Profile> skimmed = parse_profile(broken, "2n.yaml", ProfileParts::for_jobs);
    ASSERT_FALSE(skimmed) << bad;
    EXPECT_EQ(skimmed.error(), parse_profile(broken, "2n.yaml").error());
  }
}

// A profile cut short (a copy that stopped, a disk that filled) is refused by the read for jobs
// as by the whole parse, wherever the cut falls: what the skim skips must be proven whole.
TEST(ProfileForJobs, TornProfileIsRefusedWhereverItIsCut) {
  const std::string text = tuned_profile();
  int refused = 0;
  for (std::size_t cut = 1; cut < text.size(); cut += 31) {
    const std::string torn = text.substr(0, cut);
    Result<Profile> whole = parse_profile(torn, "2n.yaml");
    Result<Profile> lean = parse_profile(torn, "2n.yaml", ProfileParts::for_jobs);
    if (!whole) {
      ++refused;
      ASSERT_FALSE(lean) << "served a profile cut at byte " << cut << " that show refuses: " << whole.error();
      EXPECT_EQ(lean.error(), whole.error()) << cut;
      EXPECT_EQ(lean.error().find('\n'), std::string::npos);
      EXPECT_EQ(lean.error().rfind("2n.yaml:", 0), 0u) << lean.error();
    } else {
      ASSERT_TRUE(lean) << lean.error();
      EXPECT_EQ(job_parts(*lean), job_parts(*whole)) << cut;  // the whole parse may have read it
    }
  }
  EXPECT_GT(refused, 250);
  // The case: the first 3,000 bytes.
  Result<Profile> lean = parse_profile(text.substr(0, 3000), "2n.yaml", ProfileParts::for_jobs);
  ASSERT_FALSE(lean);
  EXPECT_EQ(lean.error(), parse_profile(text.substr(0, 3000), "2n.yaml").error());
}

// Whatever the whole parse refuses in a part the skim skips, the read for jobs refuses too.
TEST(ProfileForJobs, BrokenSkippedSectionsAreRefusedAsByTheWholeParse) {
  const std::string text = tuned_profile();
  const std::pair<std::string, std::string> edits[] = {
      {"  trials: 66\n", "  trials: 66\n  with_: 1\n"},                 // an unknown key
      {"  trials: 66\n", "  trials: -1\n"},                              // out of range
      {"  objective: \"balanced\"", "  objective: \"fastest\""},         // not an objective
      {"      worst_size_ratio: 1\n", "      worst_size_ratio: one\n"},  // not a number
      {"sizes: [0, 32, 128,", "sizes: [0, 128, 32,"},                    // not ascending
      {"speedup_geomean: 1.0105615807797819\n", "speedup_geomean: 1.0105615807797819\n      sizes: [1]\n"},
      {"failed_trials: 4\n", "failed_trials: 4\n  trials: 1\n"},         // a key twice
      {"provenance:\n", "results:\n  sizes: [1]\nprovenance:\n"},        // results at the top of v2
      {"    results:\n", "    results:\n      tuned: [1, 2]\n"},         // values for sizes not there
      {"{op: \"AllGather\", bytes: 32,", "{op: \"AllGather\", bytes: x32,"},
      {"nvls_available: true", "nvls_available: yes"},
  };
  for (const auto& [from, to] : edits) {
    std::string broken = text;
    const std::size_t at = broken.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    broken.replace(at, from.size(), to);
    Result<Profile> whole = parse_profile(broken, "2n.yaml");
    Result<Profile> lean = parse_profile(broken, "2n.yaml", ProfileParts::for_jobs);
    ASSERT_FALSE(whole) << to;
    ASSERT_FALSE(lean) << to;
    EXPECT_EQ(lean.error(), whole.error());
  }
}

// A key line that may be more of a value left open above it (a quoted text, a flow map over
// several lines) is not skipped: the whole parse reads the file, and the job gets what it reads.
TEST(ProfileForJobs, AValueLeftOpenAboveAKeyLineIsReadWhole) {
  const std::string text =
      "schema: nccltune/profile/v2\n"
      "shape: {key: \"k\", nodes: 2, gpus_per_node: 8, gpu: \"H100\n"
      "notes: [\"x\"]\n"
      "  SXM\"}\n"
      "env: {NCCL_ALGO: \"Ring\"}\n";
  EXPECT_FALSE(profile_text_for_jobs(text));
  Result<Profile> whole = parse_profile(text, "p.yaml");
  Result<Profile> lean = parse_profile(text, "p.yaml", ProfileParts::for_jobs);
  ASSERT_EQ(lean.ok(), whole.ok());
  if (!whole) {
    EXPECT_EQ(lean.error(), whole.error());
  }
  EXPECT_FALSE(profile_text_for_jobs("schema: nccltune/profile/v2\nenv: [\"a\",\nfailed: []\n]\n"));
  EXPECT_TRUE(profile_text_for_jobs("schema: nccltune/profile/v2\nenv: {}  # it's {\nfailed: []\n"));
}
