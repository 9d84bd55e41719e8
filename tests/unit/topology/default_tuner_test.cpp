// The tuner NCCL loads by default: the names NCCL's openPluginLib tries, its lookup through the
// dynamic loader (the fake stack's test tuner, which exports ncclTunerPlugin_v5, stands for a
// tuner plugin; the fake NVML module for a library without a tuner), and what check and tune say.
#include <gtest/gtest.h>

#include "topology/check_default_tuner.h"
#include "topology/sources/nccl_tuner_probe.h"

namespace nccltune {
namespace {

TEST(NcclPluginNames, UnsetIsThePrefixAndANameAlsoTriesThePrefixedLibrary) {
  using Names = std::vector<std::string>;
  EXPECT_EQ(nccl_plugin_library_names("", "libnccl-tuner"), Names{"libnccl-tuner.so"});
  EXPECT_EQ(nccl_plugin_library_names("ofi", "libnccl-net"), (Names{"ofi", "libnccl-net-ofi.so"}));
  // A path or a library name is tried as given only (plugin_open.cc, openPluginLib).
  EXPECT_EQ(nccl_plugin_library_names("/opt/t/libx.so", "libnccl-tuner"), Names{"/opt/t/libx.so"});
  EXPECT_EQ(nccl_plugin_library_names("libnccl-net.so", "libnccl-net"), Names{"libnccl-net.so"});
}

TEST(NcclTunerProbe, ALibraryWithATunerTableIsFoundWithItsPathAndNewestTable) {
  const auto found = find_nccl_tuner(std::string(NCCLTUNE_FAKE_TEST_TUNER), std::string("none"));
  ASSERT_TRUE(found);
  EXPECT_EQ(found->path, NCCLTUNE_FAKE_TEST_TUNER);
  EXPECT_EQ(found->symbol, "ncclTunerPlugin_v5");
  EXPECT_FALSE(found->from_net_plugin);
  EXPECT_TRUE(loads_a_tuner(found));
  const Finding finding = default_tuner_finding(found);
  EXPECT_EQ(finding.check, "default_tuner");
  EXPECT_EQ(finding.verdict, Verdict::pass);
  EXPECT_NE(finding.message.find(std::string(NCCLTUNE_FAKE_TEST_TUNER) + " exports ncclTunerPlugin_v5"),
            std::string::npos)
      << finding.message;
  EXPECT_NE(finding.message.find("tune measures its baselines under it"), std::string::npos) << finding.message;
}

TEST(NcclTunerProbe, WithoutATunerLibraryTheNetPluginsTableCounts) {
  // No library by that name: NCCL asks the net plugin's library (tuner.cc, ncclGetNetPluginLib).
  const auto found = find_nccl_tuner(std::string("nccltune-test-no-such-tuner"), std::string(NCCLTUNE_FAKE_TEST_TUNER));
  ASSERT_TRUE(found);
  EXPECT_TRUE(found->from_net_plugin);
  EXPECT_EQ(found->symbol, "ncclTunerPlugin_v5");
  EXPECT_NE(describe_default_tuner(found).find("(in the net plugin)"), std::string::npos);
  // A net plugin without a tuner table is the common case: nothing, and nothing to warn of.
  EXPECT_FALSE(find_nccl_tuner(std::string("nccltune-test-no-such-tuner"), std::string(NCCLTUNE_FAKE_NVML_FABRIC)));
}

TEST(NcclTunerProbe, NoneLoadsNothingAndATunerLibraryWithoutATableWarns) {
  EXPECT_FALSE(find_nccl_tuner(std::string("NONE"), std::string(NCCLTUNE_FAKE_TEST_TUNER)));
  EXPECT_EQ(default_tuner_finding(std::nullopt).verdict, Verdict::pass);
  EXPECT_EQ(describe_default_tuner(std::nullopt), "none");
  // NCCL opens the tuner library, finds no table and stops there: the net plugin is not asked.
  const auto found = find_nccl_tuner(std::string(NCCLTUNE_FAKE_NVML_FABRIC), std::string(NCCLTUNE_FAKE_TEST_TUNER));
  ASSERT_TRUE(found);
  EXPECT_TRUE(found->symbol.empty());
  EXPECT_FALSE(loads_a_tuner(found));
  EXPECT_EQ(default_tuner_finding(found).verdict, Verdict::warn);
}

TEST(NcclTunerProbe, ALibraryTheLoaderCannotLoadWarnsWithTheLoadersWords) {
  NcclTunerLibrary broken;
  broken.library = "libnccl-tuner.so";
  broken.open_error = "/opt/lib/libnccl-tuner.so: file too short";
  const Finding finding = default_tuner_finding(broken);
  EXPECT_EQ(finding.verdict, Verdict::warn);
  EXPECT_NE(finding.message.find("file too short"), std::string::npos) << finding.message;
  EXPECT_FALSE(loads_a_tuner(broken));
}

}  // namespace
}  // namespace nccltune
