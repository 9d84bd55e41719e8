// Where people look, an MNNVL profile (GB200 NVL72: NCCL's node is an NVLink domain) is said as
// "1 NVLink domain of 16 GPUs on 4 hosts" and its sections as "node: 1 NVLink domain x 4 ranks":
// show's text and JSON, and the report's header, at-a-glance table and headline. HGX profiles keep
// their words (the golden files and the other tests pin them).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "report/profile_json.h"
#include "report/profile_summary.h"
#include "report/profile_view.h"
#include "report/report_html.h"
#include "test_files.h"

using namespace nccltune;

namespace {

Profile rack_profile() {
  Result<Profile> profile = read_profile(test_support::fixture("profiles/gb200-mnnvl-1n4h.yaml"));
  EXPECT_TRUE(profile.ok()) << profile.error();
  return profile.ok() ? *profile : Profile{};
}

}  // namespace

TEST(MnnvlWords, ShowSaysDomainsAndHosts) {
  const std::string out = render_profile_summary(rack_profile(), "1n4h.yaml", {1, 2});
  EXPECT_NE(out.find("counts   NVLink domain counts (of 4 hosts each) in the store for this node type: 1 (this), 2"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("         1 NVLink domain of 16 GPUs on 4 hosts (16 ranks), NVIDIA GB200\n"), std::string::npos)
      << out;
  EXPECT_NE(out.find("\nworld: 1 NVLink domain x 16 ranks\n"), std::string::npos) << out;
  EXPECT_NE(out.find("\nnode: 1 NVLink domain x 4 ranks\n"), std::string::npos) << out;
  EXPECT_EQ(out.find("1 node x"), std::string::npos) << out;
}

TEST(MnnvlWords, TwoDomainsOnFourHosts) {
  Result<Profile> two =
      read_profile(test_support::fixture("store/gb200.4gpu.nvswitch.mnnvl.4xib400.nccl2.28/2n4h.yaml"));
  ASSERT_TRUE(two.ok()) << two.error();
  EXPECT_EQ(describe_profile_shape(two->shape), "2 NVLink domains of 8 GPUs on 4 hosts");
  const std::string out = render_profile_summary(*two, "2n4h.yaml", {2});
  EXPECT_NE(out.find("\nrail: 2 NVLink domains x 2 ranks\n"), std::string::npos) << out;
  // HGX wording stays.
  Profile hgx = *two;
  hgx.shape.mnnvl = false;
  hgx.shape.hosts = 0;
  EXPECT_EQ(describe_profile_shape(hgx.shape), "2 nodes x 8 GPUs");
}

TEST(MnnvlWords, ShowJsonCarriesHostsAndTheWords) {
  const Profile profile = rack_profile();
  const nlohmann::json j = nlohmann::json::parse(
      render_profile_json(view_profile(profile), {"store/key/1n4h.yaml", "nccltune 9.9.9", {1}}));
  EXPECT_EQ(j["shape"]["nodes"], 1);
  EXPECT_EQ(j["shape"]["gpus_per_node"], 16);
  EXPECT_EQ(j["shape"]["hosts"], 4);
  EXPECT_EQ(j["shape"]["mnnvl"], true);
  EXPECT_EQ(j["shape"]["described"], "1 NVLink domain of 16 GPUs on 4 hosts");
}

TEST(MnnvlWords, TheReportSaysThemAtAGlance) {
  ReportInput in;
  in.profile = rack_profile();
  const std::string html = render_report_html(in);
  EXPECT_NE(html.find("&middot; 1 NVLink domain of 16 GPUs on 4 hosts &middot;"), std::string::npos);
  EXPECT_NE(html.find("1 NVLink domain of 16 GPUs on 4 hosts (NVIDIA GB200)"), std::string::npos);
  EXPECT_NE(html.find("node<br><span class=\"sub\">1 NVLink domain x 4 ranks</span>"), std::string::npos);
  EXPECT_EQ(html.find("1 node x"), std::string::npos);
}
