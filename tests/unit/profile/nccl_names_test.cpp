#include "profile/nccl_names.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "base/collective_names.h"
#include "profile/profile.h"

using namespace nccltune;

TEST(NcclNames, Versions) {
  EXPECT_EQ(*parse_nccl_version("2.24"), 22400);
  EXPECT_EQ(*parse_nccl_version("2.28.9"), 22809);
  EXPECT_EQ(*parse_nccl_version("22809"), 22809);
  EXPECT_EQ(*parse_nccl_version("2.8.4"), 2804);  // NCCL's code before 2.9
  EXPECT_FALSE(parse_nccl_version("2").ok());
  EXPECT_FALSE(parse_nccl_version("2.x").ok());
  EXPECT_FALSE(parse_nccl_version("2.28.9.1").ok());
  EXPECT_FALSE(parse_nccl_version("").ok());
}

TEST(NcclNames, KnownKnobValues) {
  EXPECT_FALSE(knob_value_problem("NCCL_ALGO", "Ring").has_value());
  EXPECT_FALSE(knob_value_problem("NCCL_ALGO", "ring,TREE,nvlstree").has_value());
  EXPECT_FALSE(knob_value_problem("NCCL_ALGO", "^NVLS,PAT").has_value());
  EXPECT_TRUE(knob_value_problem("NCCL_ALGO", "Ring,Ring").has_value());
  EXPECT_TRUE(knob_value_problem("NCCL_ALGO", "Ring,").has_value());
  EXPECT_TRUE(knob_value_problem("NCCL_ALGO", "^").has_value());
  EXPECT_TRUE(knob_value_problem("NCCL_ALGO", "Butterfly").has_value());
  EXPECT_FALSE(knob_value_problem("NCCL_PROTO", "LL128,simple").has_value());
  EXPECT_TRUE(knob_value_problem("NCCL_PROTO", "LL256").has_value());
  EXPECT_FALSE(knob_value_problem("NCCL_MIN_NCHANNELS", "64").has_value());
  EXPECT_TRUE(knob_value_problem("NCCL_MAX_NCHANNELS", "0").has_value());
  EXPECT_TRUE(knob_value_problem("NCCL_MAX_NCHANNELS", "65").has_value());
  EXPECT_FALSE(knob_value_problem("NCCL_NET_GDR_LEVEL", "SYS").has_value());
  EXPECT_FALSE(knob_value_problem("NCCL_NET_GDR_LEVEL", "5").has_value());
  EXPECT_TRUE(knob_value_problem("NCCL_NET_GDR_LEVEL", "6").has_value());
  EXPECT_TRUE(knob_value_problem("NCCL_NET_GDR_LEVEL", "NVL").has_value());
  EXPECT_TRUE(knob_value_problem("NCCL_PXN_DISABLE", "2").has_value());
  EXPECT_TRUE(knob_value_problem("NCCL_NET_GDR_READ", "yes").has_value());
  EXPECT_FALSE(knob_value_problem("NCCL_NVLS_ENABLE", "2").has_value());
  EXPECT_TRUE(knob_value_problem("NCCL_BUFFSIZE", "0").has_value());
  EXPECT_TRUE(knob_value_problem("NCCL_BUFFSIZE", "4M").has_value());
  EXPECT_TRUE(knob_value_problem("NCCL_NTHREADS", "1024").has_value());
  EXPECT_FALSE(knob_value_problem("NCCL_NTHREADS", "96").has_value());  // getNthreads: a multiple of 32
  EXPECT_TRUE(knob_value_problem("NCCL_NTHREADS", "100").has_value());
  EXPECT_TRUE(knob_value_problem("NCCL_NTHREADS", "32").has_value());
  EXPECT_TRUE(knob_value_problem("NCCL_IB_QPS_PER_CONNECTION", "129").has_value());
  EXPECT_TRUE(knob_value_problem("NCCL_CROSS_NIC", "3").has_value());
  EXPECT_FALSE(knob_value_problem("NCCL_SOCKET_IFNAME", "=eth0").has_value());  // no rules: safe set only
}

TEST(NcclNames, AlgorithmsAndProtocolsByNcclsIndex) {
  EXPECT_EQ(nccl_algorithm_index("ring"), 1);
  EXPECT_EQ(nccl_algorithm_index("collnetdirect"), 2);
  EXPECT_EQ(nccl_algorithm_name(2), "CollNetDirect");  // NCCL's spelling, not Collnet
  EXPECT_EQ(nccl_protocol_index("SIMPLE"), 2);
  EXPECT_FALSE(nccl_algorithm_index("Ring,Tree"));
  EXPECT_EQ(nccl_algorithm_name(7), "?");
  EXPECT_EQ(nccl_protocol_name(-1), "?");
}

TEST(NcclNames, ListsPerCollectiveAsNccl224ReadsThem) {
  EXPECT_EQ(nccl_function_name("reduce_scatter"), std::optional<std::string_view>("reducescatter"));
  EXPECT_EQ(nccl_function_name("alltoall"), std::nullopt);  // send/recv: no NCCL_ALGO applies
  EXPECT_EQ(nccl_log_op_name("all_gather"), std::optional<std::string_view>("AllGather"));
  const std::string_view scoped = "Ring;AllGather:Tree,NVLS;reducescatter:^Ring";
  EXPECT_EQ(nccl_list_for(scoped, "all_gather"), std::optional<std::string>("Tree,NVLS"));
  EXPECT_EQ(nccl_list_for(scoped, "all_reduce"), std::optional<std::string>("Ring"));  // the plain entry
  EXPECT_EQ(nccl_list_for("allgather:Tree", "all_reduce"), std::nullopt);              // NCCL's own choice
  EXPECT_EQ(nccl_list_for("Ring,Tree", "broadcast"), std::optional<std::string>("Ring,Tree"));
  EXPECT_TRUE(nccl_list_allows(scoped, "nvls", "all_gather"));
  EXPECT_FALSE(nccl_list_allows(scoped, "Ring", "all_gather"));
  EXPECT_FALSE(nccl_list_allows(scoped, "Ring", "reduce_scatter"));
  EXPECT_TRUE(nccl_list_allows(scoped, "Tree", "reduce_scatter"));
  EXPECT_TRUE(nccl_list_allows("allgather:Tree", "Ring", "all_reduce"));
  EXPECT_FALSE(nccl_list_allows("Tree", "Ring", "all_gather"));
}

// ncclTopoTuneModel (src/graph/tuning.cc, 2.28.9): which algorithms each collective gets a cost for.
TEST(NcclNames, PairsNcclRunsPerCollective) {
  EXPECT_TRUE(nccl_runs_pair_for("all_reduce", "Tree", "LL"));
  EXPECT_FALSE(nccl_runs_pair_for("all_reduce", "PAT", "Simple"));
  EXPECT_FALSE(nccl_runs_pair_for("all_reduce", "NVLS", "LL"));  // NVLS: Simple only
  EXPECT_FALSE(nccl_runs_pair_for("all_gather", "Tree", "Simple"));
  EXPECT_TRUE(nccl_runs_pair_for("all_gather", "pat", "Simple"));
  EXPECT_TRUE(nccl_runs_pair_for("reduce_scatter", "NVLS", "Simple"));
  EXPECT_FALSE(nccl_runs_pair_for("reduce_scatter", "CollNetChain", "Simple"));
  EXPECT_TRUE(nccl_runs_pair_for("broadcast", "Ring", "LL128"));
  EXPECT_FALSE(nccl_runs_pair_for("reduce", "Tree", "Simple"));
  EXPECT_TRUE(nccl_runs_pair_for("alltoall", "Tree", "LL"));  // send/recv: no cost table
}

// ncclGetLevel (src/graph/paths.cc, 2.21.5-2.30.7) compares path names with strcmp: NCCL ignores `sys`.
TEST(NcclNames, GdrLevelNamesHaveCase) {
  EXPECT_EQ(knob_value_problem("NCCL_NET_GDR_LEVEL", "sys"),
            std::optional<std::string>("'sys' is not a valid NCCL_NET_GDR_LEVEL value (LOC, PIX, PXB, PHB, SYS in "
                                       "capitals, as NCCL compares them with case, or 0-5)"));
  EXPECT_TRUE(knob_value_problem("NCCL_NET_GDR_LEVEL", "Phb").has_value());
  EXPECT_FALSE(knob_value_problem("NCCL_NET_GDR_LEVEL", "PHB").has_value());
  EXPECT_TRUE(knob_value_problem("NCCL_NET_GDR_LEVEL", "05").has_value());
  EXPECT_FALSE(is_case_insensitive_knob("NCCL_NET_GDR_LEVEL"));
  EXPECT_TRUE(is_case_insensitive_knob("NCCL_ALGO"));  // parseList: strcasecmp
}

// ncclLoadParam (src/misc/param.cc, 2.21.5-2.30.7) reads integers with strtoll(str, nullptr, 0):
// hex, octal and trailing text read as something else than the text says, so they are refused.
TEST(NcclNames, IntegerParamsArePlainDecimal) {
  EXPECT_FALSE(knob_value_problem("NCCL_BUFFSIZE", "16").has_value());
  EXPECT_EQ(knob_value_problem("NCCL_BUFFSIZE", "0x10"),
            std::optional<std::string>("'0x10' is not a valid NCCL_BUFFSIZE value (an integer from 1 to "
                                       "1099511627776, in plain decimal: NCCL reads 0x10 as 16, 010 as 8 and 16k "
                                       "as 16)"));
  EXPECT_TRUE(knob_value_problem("NCCL_MIN_CTAS", "010").has_value());  // octal 8
  EXPECT_TRUE(knob_value_problem("NCCL_BUFFSIZE", "16k").has_value());
  EXPECT_TRUE(knob_value_problem("NCCL_BUFFSIZE", "+16").has_value());
  EXPECT_TRUE(knob_value_problem("NCCL_NVLS_NCHANNELS", "-1").has_value());
  EXPECT_FALSE(knob_value_problem("NCCL_NVLS_NCHANNELS", "24").has_value());
  EXPECT_FALSE(knob_value_problem("NCCL_PXN_DISABLE", "0").has_value());
  EXPECT_TRUE(knob_value_problem("NCCL_PXN_DISABLE", "00").has_value());
  EXPECT_TRUE(knob_value_problem("NCCL_NETDEVS_POLICY", "MAX:02").has_value());
  EXPECT_TRUE(knob_value_problem("NCCL_NETDEVS_POLICY", "MAX:2x").has_value());  // atoi: 2
  EXPECT_FALSE(knob_value_problem("NCCL_NETDEVS_POLICY", "max:2").has_value());  // strncasecmp
}

// NCCL_CTA_POLICY is an NCCL_PARAM up to 2.28.9 (strtoll reads EFFICIENCY as 0) and read by its
// first digit from 2.29.2 (getEnvCtaPolicyOnce, src/init.cc): only 0, 1 and 2 mean the same in both.
TEST(NcclNames, CtaPolicyIsOneDigit) {
  EXPECT_FALSE(knob_value_problem("NCCL_CTA_POLICY", "1").has_value());
  EXPECT_FALSE(knob_value_problem("NCCL_CTA_POLICY", "2").has_value());
  EXPECT_TRUE(knob_value_problem("NCCL_CTA_POLICY", "EFFICIENCY").has_value());
  EXPECT_TRUE(knob_value_problem("NCCL_CTA_POLICY", "10").has_value());  // 2.30.7 reads '1'
  EXPECT_TRUE(knob_value_problem("NCCL_CTA_POLICY", "3").has_value());
}

// The channel bounds are searched again at every node count, whichever names the space uses.
TEST(NcclNames, ChannelBoundsAreSearchedPerNodeCount) {
  for (const char* name : {"NCCL_MIN_NCHANNELS", "NCCL_MAX_NCHANNELS", "NCCL_MIN_CTAS", "NCCL_MAX_CTAS",
                           "NCCL_NVLS_NCHANNELS"})
    EXPECT_TRUE(is_searched_per_node_count(name)) << name;
  EXPECT_FALSE(is_searched_per_node_count("NCCL_BUFFSIZE"));
}

// A profile's collectives are the table's (base/collective_names.h), and its error lists them all.
TEST(NcclNames, ProfileCollectivesAreTheTables) {
  std::size_t listed = 0;
  for (const CollectiveName& row : kCollectiveTable) {
    EXPECT_TRUE(is_collective_name(row.name)) << row.name;
    EXPECT_NE(kCollectiveNames.find(row.name), std::string_view::npos) << row.name;
    ++listed;
  }
  EXPECT_EQ(static_cast<std::size_t>(std::count(kCollectiveNames.begin(), kCollectiveNames.end(), ',')) + 1, listed);
  EXPECT_EQ(nccl_function_name("alltoall"), std::nullopt);
  EXPECT_EQ(nccl_log_op_name("alltoall"), std::nullopt);
  EXPECT_FALSE(is_nccl_function_name(""));
}
