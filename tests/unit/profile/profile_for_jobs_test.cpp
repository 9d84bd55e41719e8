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
      "-\n"
      "failed: [{env: {}, reason: x}]\n"
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
