// `nccltune show`: golden summaries of real and keep-defaults profiles (regenerate with
// NCCLTUNE_UPDATE_GOLDEN=1 and review the diff), and the per-size helpers.
#include "profile_summary.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

using namespace nccltune;

namespace {

const std::string kReport = std::string(NCCLTUNE_FIXTURES) + "/report";

void expect_golden(const std::string& name, const std::string& actual) {
  const std::filesystem::path path = std::filesystem::path(NCCLTUNE_FIXTURES) / "golden" / name;
  const char* update = std::getenv("NCCLTUNE_UPDATE_GOLDEN");
  if (update && std::string(update) == "1") {
    std::ofstream(path, std::ios::binary) << actual;
    return;
  }
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in) << path << " is missing; run with NCCLTUNE_UPDATE_GOLDEN=1 to create it";
  std::stringstream expected;
  expected << in.rdbuf();
  EXPECT_EQ(actual, expected.str()) << "differs from " << path;
}

Profile read_fixture(const std::string& relative) {
  auto profile = read_profile(kReport + "/" + relative);
  EXPECT_TRUE(profile) << profile.error();
  return profile ? *profile : Profile{};
}

SizeChoice range(std::uint64_t min, std::uint64_t max, std::string algo, std::string proto,
                 int channels = 0) {
  return {min, max, std::move(algo), std::move(proto), channels};
}

}  // namespace

TEST(ProfileSummary, DemoProfileGolden) {
  const std::string origin = "store/h100-80gb-hbm3.2gpu.nics-unknown.nccl2.28/2n.yaml";
  expect_golden("show-demo.txt", render_profile_summary(read_fixture(origin), origin));
}

TEST(ProfileSummary, KeepDefaultsGolden) {
  expect_golden("show-keep-defaults.txt",
                render_profile_summary(read_fixture("keep-defaults-2n.yaml"), "keep-defaults-2n.yaml"));
}

TEST(ProfileSummary, ShowsEveryEnvVariableAndFailedTrial) {
  const Profile p = read_fixture("store/h100-80gb-hbm3.2gpu.nics-unknown.nccl2.28/2n.yaml");
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
