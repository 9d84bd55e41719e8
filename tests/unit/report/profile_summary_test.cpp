// `nccltune show`: golden summaries of real and keep-defaults profiles (regenerate with
// NCCLTUNE_UPDATE_GOLDEN=1 and review the diff), and the per-size helpers.
#include "report/profile_summary.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "base/byte_size.h"
#include "golden.h"
#include "report/profile_numbers.h"
#include "report/profile_text.h"
#include "report_fixtures.h"
#include "test_files.h"

using namespace nccltune;
using nccltune::test_support::expect_golden;
using nccltune::test_support::fixture;
using nccltune::test_support::read_report_profile;

namespace {

SizeChoice range(std::uint64_t min, std::uint64_t max, std::string algo, std::string proto,
                 int channels = 0) {
  return {min, max, std::move(algo), std::move(proto), channels};
}

}  // namespace

TEST(ProfileSummary, DemoProfileGolden) {
  const std::string origin = "store/h100-80gb-hbm3.2gpu.nics-unknown.nccl2.28/2n.yaml";
  expect_golden("show-demo.txt", render_profile_summary(read_report_profile(origin), origin));
}

TEST(ProfileSummary, CollectivesGolden) {
  // The demo's three tuned collectives and its alltoall guard, each with its own table.
  expect_golden("show-collectives.txt",
                render_profile_summary(read_report_profile("collectives/2n.yaml"), "collectives/2n.yaml"));
}

TEST(ProfileSummary, KeepDefaultsGolden) {
  expect_golden("show-keep-defaults.txt", render_profile_summary(read_report_profile("keep-defaults-2n.yaml"),
                                                                 "keep-defaults-2n.yaml"));
}

TEST(ProfileSummary, ShowsTheShareOfTheHardwarePeak) {
  Profile p = read_report_profile("store/h100-80gb-hbm3.2gpu.nics-unknown.nccl2.28/2n.yaml");
  const std::string size = format_byte_size(p.collectives["all_reduce"].results.sizes.back());
  p.collectives["all_reduce"].results.peak_busbw_gbps = p.collectives["all_reduce"].results.tuned.back() * 2;
  p.collectives["all_reduce"].results.peak_bottleneck = "NVLink4 x18";
  EXPECT_NE(render_profile_summary(p, "x").find(
                fmt::format("peak     {:g} GB/s (NVLink4 x18): busbw at {} is 50% of it\n",
                            *p.collectives["all_reduce"].results.peak_busbw_gbps, size)),
            std::string::npos)
      << render_profile_summary(p, "x");
  p.collectives["all_reduce"].results.peak_busbw_gbps = p.collectives["all_reduce"].results.tuned.back() / 2;
  EXPECT_NE(render_profile_summary(p, "x").find("is 200% of it (above the line rate"), std::string::npos);
  p.collectives["all_reduce"].results.peak_busbw_gbps.reset();
  p.collectives["all_reduce"].results.peak_bottleneck = "unknown: GPU0's NVLink count is not known";
  EXPECT_NE(render_profile_summary(p, "x").find("peak     unknown: GPU0's NVLink count is not known\n"),
            std::string::npos);
  p.collectives["all_reduce"].results.peak_bottleneck.clear();
  EXPECT_EQ(render_profile_summary(p, "x").find("peak "), std::string::npos) << "older profiles say nothing";
}

TEST(ProfileSummary, ShowsEveryEnvVariableAndFailedTrial) {
  const Profile p = read_report_profile("store/h100-80gb-hbm3.2gpu.nics-unknown.nccl2.28/2n.yaml");
  const std::string text = render_profile_summary(p, "x");
  for (const auto& [name, value] : p.env)
    EXPECT_NE(text.find(name + "=" + value + "\n"), std::string::npos) << name;
  for (const FailedTrial& f : p.failed) EXPECT_NE(text.find(f.reason), std::string::npos) << f.reason;
}

TEST(ProfileSummary, ChoiceForSizeFindsTheRangeHoldingIt) {
  const std::vector<SizeChoice> per_size = {range(0, 65535, "Tree", "LL"),
                                            range(65536, 1 << 30, "Ring", "Simple")};
  EXPECT_EQ(choice_for_size(per_size, 0), &per_size[0]);
  EXPECT_EQ(choice_for_size(per_size, 65535), &per_size[0]);
  EXPECT_EQ(choice_for_size(per_size, 65536), &per_size[1]);
  EXPECT_EQ(choice_for_size(per_size, (1ull << 30) + 1), nullptr);
}

TEST(ProfileSummary, DescribesChoicesAndRanges) {
  EXPECT_EQ(describe_choice(range(0, 1, "Tree", "LL")), "Tree/LL");
  EXPECT_EQ(describe_choice(range(0, 1, "", "Simple", 16)), "auto/Simple, 16 channels");
  EXPECT_EQ(describe_range(range(0, 524287, "", "")), "0 .. <512K");
  EXPECT_EQ(describe_range(range(8388608, 17179869184ull, "", "")), "8M .. 16G");
  EXPECT_EQ(describe_range(range(65537, 100000, "", "")), "65537 .. 100000");
}

TEST(ProfileSummary, ARangeEndingAtTheLargestSizeShowsItsInclusiveEnd) {
  constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();  // max + 1 wraps to 0
  EXPECT_EQ(describe_range(range(524288, kMax, "", "")), "512K .. " + format_byte_size(kMax));
  EXPECT_EQ(describe_range(range(524288, kMax - 1, "", "")), "512K .. " + format_byte_size(kMax - 1));
}

TEST(ProfileSummary, SpeedupIsUnknownWithoutAPositiveBaselineAndATunedValue) {
  const double nan = std::nan("");
  ProfileResults r;
  r.sizes = {8, 16, 32, 64, 128, 256};
  r.baseline = {2, nan, 0, 4, -1, std::numeric_limits<double>::infinity()};
  r.tuned = {3, 1, 1, nan, 1, 1};
  EXPECT_DOUBLE_EQ(speedup_at(r, 0), 1.5);
  for (std::size_t i = 1; i < r.sizes.size(); ++i) EXPECT_TRUE(std::isnan(speedup_at(r, i))) << i;
  EXPECT_TRUE(std::isnan(speedup_at(r, 6)));  // not recorded
  r.tuned.resize(1);
  EXPECT_TRUE(std::isnan(speedup_at(r, 1)));  // a baseline without its tuned value
  EXPECT_EQ(format_speedup(1.5), "1.500x");
  EXPECT_EQ(format_speedup(nan), "n/a");
  EXPECT_EQ(format_speedup(std::numeric_limits<double>::infinity()), "n/a");
  EXPECT_EQ(format_busbw(370.2), "370.20");
  EXPECT_EQ(format_busbw(nan), "n/a");
}

TEST(ProfileSummary, UnknownValuesReadNa) {
  // NaN and zero baselines, a NaN tuned value, an unknown geomean, a range ending at UINT64_MAX.
  const std::string text = render_profile_summary(read_report_profile("nan-2n.yaml"), "nan-2n.yaml");
  expect_golden("show-nan.txt", text);
  EXPECT_NE(text.find("         8            1.50         1.50    1.000x  Tree/LL\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("        1K             n/a         2.25       n/a  Tree/LL\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("      512K            0.00        40.00       n/a  Ring/Simple\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("speedup  n/a geometric mean over the objective's sizes, worst size n/a\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("nan\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("<0"), std::string::npos) << text;
}

TEST(ProfileSummary, PutsNcclsModelNextToTheDefaultsMeasuredAtTheLargestSize) {
  auto read = read_profile(fixture("profiles/nccl-model-2n.yaml"));
  ASSERT_TRUE(read) << read.error();
  Profile p = *read;
  // Under the defaults NCCL chose RING/LL128 at 8M, where its model predicts 240 GB/s and the
  // defaults measured 216.54.
  const std::string expected =
      "model    NCCL's model: RING/LL128 240.00 GB/s predicted at large sizes (its model's asymptotic "
      "busbw, latency left out); measured under the defaults at 8M: 216.54 GB/s (90%)\n";
  EXPECT_NE(render_profile_summary(p, "x").find(expected), std::string::npos) << render_profile_summary(p, "x");

  // Where NCCL's log shows no choice at the largest size, the largest one it does show counts.
  NcclObservation& defaults = *p.provenance.nccl_observed.defaults;
  std::erase_if(defaults.choices, [](const ObservedChoice& c) { return c.bytes == 8388608; });
  EXPECT_NE(describe_nccl_model(p, "all_reduce", p.collectives.at("all_reduce"))
                .find("RING/LL128 240.00 GB/s predicted at large sizes"),
            std::string::npos);
  EXPECT_NE(describe_nccl_model(p, "all_reduce", p.collectives.at("all_reduce"))
                .find("measured under the defaults at 2M: 118.09 GB/s (49%)"),
            std::string::npos);

  // Nothing to compare: no busbw for the pair (ranks unknown), no pair, no model.
  for (ModelPair& pair : p.provenance.nccl_observed.nccl_model.at("all_reduce")) pair.busbw.reset();
  EXPECT_EQ(describe_nccl_model(p, "all_reduce", p.collectives.at("all_reduce")), "");
  p.provenance.nccl_observed.nccl_model.at("all_reduce").clear();
  EXPECT_EQ(describe_nccl_model(p, "all_reduce", p.collectives.at("all_reduce")), "");
  p.provenance.nccl_observed.nccl_model.clear();
  EXPECT_EQ(render_profile_summary(p, "x").find("NCCL's model"), std::string::npos);
}
