// Knobs NCCL cannot act on in a cluster are not swept there and never ship (search/nccl_acts.h),
// and NCCL_NVLS_ENABLE=1, which fails init wherever multicast is missing, never ships.
#include "search/nccl_acts.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "search/default_search_space.h"
#include "search/search_space.h"
#include "search/shippable_env.h"

using namespace nccltune;

namespace {

ShapeFacts acts_facts(int nodes, bool ib, std::optional<bool> gdr, bool nvswitch = true) {
  ShapeFacts facts;
  facts.nodes = nodes;
  facts.gpus_per_node = 8;
  facts.nvswitch = nvswitch;
  facts.nics = ib ? 8 : 0;
  facts.ib = ib;
  facts.gdr = gdr;
  facts.nccl_version = 22809;
  facts.gpu_sm = 90;
  return facts;
}

std::vector<std::string> acts_swept(const SearchSpace& space, const ShapeFacts& facts) {
  std::vector<std::string> names;
  for (const Knob& knob : prune(space, facts).knobs) names.push_back(knob.name);
  return names;
}

bool acts_has(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

SearchSpace acts_default_space() {
  Result<SearchSpace> space = parse_search_space(default_search_space_yaml(), "search-space.yaml");
  EXPECT_TRUE(space.ok()) << space.error();
  return space.ok() ? *space : SearchSpace{};
}

}  // namespace

// IB knobs need an RDMA network and more than one node; GDR knobs GPUDirect RDMA as well.
TEST(NcclActs, NetworkKnobsAreSweptOnlyWhereNcclReadsThem) {
  const SearchSpace space = acts_default_space();
  const std::vector<std::string> rdma = acts_swept(space, acts_facts(2, true, std::nullopt));
  for (const char* name : {"NCCL_IB_QPS_PER_CONNECTION", "NCCL_IB_SPLIT_DATA_ON_QPS", "NCCL_NET_GDR_LEVEL",
                           "NCCL_NET_GDR_READ"})
    EXPECT_TRUE(acts_has(rdma, name)) << name << ": unknown GDR explores";
  const std::vector<std::string> socket = acts_swept(space, acts_facts(2, false, std::nullopt));
  const std::vector<std::string> no_gdr = acts_swept(space, acts_facts(2, true, false));
  const std::vector<std::string> one_node = acts_swept(space, acts_facts(1, true, true));
  for (const char* name : {"NCCL_IB_QPS_PER_CONNECTION", "NCCL_IB_SPLIT_DATA_ON_QPS"}) {
    EXPECT_FALSE(acts_has(socket, name)) << name;
    EXPECT_TRUE(acts_has(no_gdr, name)) << name;
    EXPECT_FALSE(acts_has(one_node, name)) << name;
  }
  for (const char* name : {"NCCL_NET_GDR_LEVEL", "NCCL_NET_GDR_READ"}) {
    EXPECT_FALSE(acts_has(socket, name)) << name;
    EXPECT_FALSE(acts_has(no_gdr, name)) << name;
    EXPECT_FALSE(acts_has(one_node, name)) << name;
  }
  EXPECT_TRUE(acts_has(socket, "NCCL_PXN_DISABLE")) << "knobs NCCL reads on any network stay";
}

// The rule holds whatever a search space's own `when` says: a user's knob without conditions.
TEST(NcclActs, ASpaceWithoutConditionsIsPrunedAsNcclReads) {
  Result<SearchSpace> space = parse_search_space(R"(schema: nccltune/search-space/v1
knobs:
  - name: NCCL_IB_TIMEOUT
    values: ["22"]
  - name: NCCL_GDRCOPY_ENABLE
    values: ["1"]
  - name: NCCL_NVLS_CHUNKSIZE
    values: ["262144"]
  - name: NCCL_BUFFSIZE
    values: ["8388608"]
)",
                                                 "space.yaml");
  ASSERT_TRUE(space.ok()) << space.error();
  EXPECT_EQ(acts_swept(*space, acts_facts(2, false, std::nullopt, false)), std::vector<std::string>{"NCCL_BUFFSIZE"});
  EXPECT_EQ(acts_swept(*space, acts_facts(2, true, std::nullopt, true)).size(), 4u);
  EXPECT_EQ(why_nccl_cannot_act("NCCL_IB_TIMEOUT", acts_facts(2, false, std::nullopt)),
            "NCCL's IB transport reads it, and these nodes have no InfiniBand or RoCE NIC");
  EXPECT_EQ(why_nccl_cannot_act("NCCL_NET_GDR_LEVEL", acts_facts(2, true, false)),
            "it acts only with GPUDirect RDMA, which these nodes do not have");
  EXPECT_FALSE(why_nccl_cannot_act("NCCL_NET_GDR_LEVEL", acts_facts(2, true, true)));
}

TEST(NcclActs, IbAndGdrAreConditions) {
  EXPECT_FALSE(condition_problem("ib").has_value());
  EXPECT_FALSE(condition_problem("!gdr").has_value());
  EXPECT_EQ(condition_problem("ib>1"), std::optional<std::string>("'ib>1': ib is written as ib or !ib"));
  EXPECT_TRUE(condition_holds("ib", acts_facts(2, true, std::nullopt)));
  EXPECT_FALSE(condition_holds("ib", acts_facts(2, false, std::nullopt)));
  EXPECT_TRUE(condition_holds("!ib", acts_facts(2, false, std::nullopt)));
  EXPECT_TRUE(condition_holds("gdr", acts_facts(2, true, true)));
  EXPECT_FALSE(condition_holds("gdr", acts_facts(2, true, false)));
  EXPECT_TRUE(condition_holds("!gdr", acts_facts(2, true, false)));
  EXPECT_TRUE(condition_holds("gdr", acts_facts(2, true, std::nullopt))) << "unknown explores";
  EXPECT_TRUE(condition_holds("!gdr", acts_facts(2, true, std::nullopt)));
}

// NCCL_NVLS_ENABLE=1 skips NCCL's multicast check (ncclNvlsInit): never tried, never shipped.
TEST(NcclActs, NvlsEnableOneIsNeverTriedNorShipped) {
  const SearchSpace pruned = prune(acts_default_space(), acts_facts(1, true, true));
  const auto nvls = std::find_if(pruned.knobs.begin(), pruned.knobs.end(),
                                 [](const Knob& knob) { return knob.name == "NCCL_NVLS_ENABLE"; });
  ASSERT_NE(nvls, pruned.knobs.end());
  EXPECT_EQ(nvls->values, std::vector<std::string>{"0"});
  EXPECT_TRUE(forces_nvls("1"));
  EXPECT_TRUE(forces_nvls("0x1"));
  EXPECT_TRUE(forces_nvls("3"));
  EXPECT_FALSE(forces_nvls("2"));
  EXPECT_FALSE(forces_nvls("0"));
  EXPECT_FALSE(forces_nvls(""));
  ShipFacts facts;
  facts.largest_measured = std::uint64_t{1} << 30;
  const ShippableEnv forced = shippable_env({{"NCCL_NVLS_ENABLE", "1"}, {"NCCL_MIN_NCHANNELS", "32"}}, facts);
  EXPECT_EQ(forced.env, (Env{{"NCCL_MIN_NCHANNELS", "32"}}));
  ASSERT_EQ(forced.notes.size(), 1u);
  EXPECT_NE(forced.notes[0].find("NCCL_NVLS_ENABLE=1 is not in env: it forces NVLS"), std::string::npos);
  EXPECT_EQ(shippable_env({{"NCCL_NVLS_ENABLE", "0"}}, facts).env, (Env{{"NCCL_NVLS_ENABLE", "0"}}));
}
