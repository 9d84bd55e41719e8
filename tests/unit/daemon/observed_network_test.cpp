// nccltuned's account of what NCCL last said of the network: the newest profile of the node's key
// that recorded it, whatever its node count.
#include "daemon/observed_network.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include "profile/profile.h"
#include "test_files.h"

using namespace nccltune;
using nccltune::test_support::TempDir;
using nccltune::test_support::write_file;

namespace {

const std::string kKey = "h100-80gb-hbm3.8gpu.nvswitch.8xib400.pix.nccl2.28";

Profile tuned(int nodes, const std::string& date, const std::string& transport) {
  Profile p;
  p.shape.node_type_key = kKey;
  p.shape.nodes = nodes;
  p.shape.gpus_per_node = 8;
  p.shape.ranks = 8 * nodes;
  p.keep_defaults = true;
  p.provenance.date = date;
  if (!transport.empty()) {
    p.provenance.nccl_observed.defaults = NcclObservation{};
    p.provenance.nccl_observed.defaults->transport = transport;
  }
  return p;
}

}  // namespace

TEST(ObservedNetwork, TheNewestProfileThatRecordedNcclsAccount) {
  TempDir store("nccltune-store");
  ASSERT_TRUE(write_profile(store.path(), tuned(1, "2026-11-01T00:00:00Z", "")));  // no network then
  ASSERT_TRUE(write_profile(store.path(), tuned(2, "2026-11-20T00:00:00Z", "IB")));
  ASSERT_TRUE(write_profile(store.path(), tuned(4, "2026-11-10T00:00:00Z", "Socket")));
  ASSERT_TRUE(write_profile(store.path(), tuned(8, "2026-11-30T00:00:00Z", "")));  // tuned before it was read
  write_file(store / kKey / "16n.yaml", "schema: [broken\n");
  std::vector<std::string> warnings;
  const auto found = newest_observed_network(store.path(), kKey, ::geteuid(), warnings);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->observation.transport, "IB");
  EXPECT_EQ(found->file, store / kKey / "2n.yaml");
  EXPECT_EQ(found->date, "2026-11-20T00:00:00Z");
  ASSERT_EQ(warnings.size(), 1u);  // the broken file is named, not fatal
  EXPECT_NE(warnings[0].find("16n.yaml"), std::string::npos) << warnings[0];

  warnings.clear();
  EXPECT_FALSE(newest_observed_network(store.path(), "other-key", ::geteuid(), warnings).has_value());
  EXPECT_FALSE(newest_observed_network(store.path(), "../escape", ::geteuid(), warnings).has_value());
  EXPECT_TRUE(warnings.empty());
}

// A three-shape tune records each communicator's account apart: the node's account is the
// world's (NVLS available), never the rail's (one GPU per node: no NVLS there).
TEST(ObservedNetwork, TheWorldsAccountNotARails) {
  TempDir store("nccltune-store");
  Profile p = tuned(2, "2026-11-20T00:00:00Z", "IB");
  p.provenance.nccl_observed.defaults->nvls_available = true;
  p.provenance.nccl_observed.defaults->nvls_channels = 16;
  CommObserved rail{"rail", NcclObservation{}, std::nullopt, {}};
  rail.defaults->transport = "IB";
  rail.defaults->nvls_available = false;
  p.provenance.nccl_observed.comms.push_back(rail);
  ASSERT_TRUE(write_profile(store.path(), p));
  std::vector<std::string> warnings;
  const auto found = newest_observed_network(store.path(), kKey, ::geteuid(), warnings);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->observation.nvls_available, true);
  EXPECT_EQ(found->observation.nvls_channels, 16);
}
