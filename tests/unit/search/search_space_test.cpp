#include "search/search_space.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "base/atomic_file.h"
#include "profile/nccl_names.h"
#include "dgx_shape.h"

using namespace nccltune;
using nccltune::test_support::dgx_h100_facts;

namespace {

const std::string kFixtures = NCCLTUNE_FIXTURES;
const std::string kDefaultSpace = kFixtures + "/../../configs/search-space.yaml";

// As `tune --space FILE` reads it.
Result<SearchSpace> read_space(const std::string& file) {
  Result<std::string> text = read_text_file(file, kMaxConfigBytes);
  if (!text) return Error{text.error()};
  return parse_search_space(*text, file);
}

const Knob* find_knob(const SearchSpace& space, const std::string& name) {
  for (const Knob& knob : space.knobs)
    if (knob.name == name) return &knob;
  return nullptr;
}

std::vector<std::string> knob_names(const SearchSpace& space) {
  std::vector<std::string> names;
  for (const Knob& knob : space.knobs) names.push_back(knob.name);
  return names;
}

bool has(const std::vector<std::string>& items, const std::string& item) {
  return std::find(items.begin(), items.end(), item) != items.end();
}

// The error for a one-knob space whose knob is `knob_yaml` (lines from 3 on).
std::string error_of(const std::string& knobs_yaml) {
  const std::string text = "schema: nccltune/search-space/v1\nknobs:\n" + knobs_yaml;
  Result<SearchSpace> space = parse_search_space(text, "space.yaml");
  EXPECT_FALSE(space.ok()) << "parsed:\n" << text;
  return space.ok() ? std::string() : space.error();
}

}  // namespace

TEST(SearchSpace, DefaultConfigParses) {
  Result<SearchSpace> space = read_space(kDefaultSpace);
  ASSERT_TRUE(space.ok()) << space.error();
  EXPECT_EQ(space->origin, kDefaultSpace);
  const std::vector<std::string> names = knob_names(*space);
  for (const char* name :
       {"NCCL_ALGO", "NCCL_PROTO", "NCCL_NVLS_ENABLE", "NCCL_NET_GDR_LEVEL", "NCCL_NET_GDR_READ",
        "NCCL_MIN_NCHANNELS", "NCCL_MAX_NCHANNELS", "NCCL_IB_QPS_PER_CONNECTION", "NCCL_PXN_DISABLE",
        "NCCL_CROSS_NIC", "NCCL_BUFFSIZE", "NCCL_NTHREADS", "NCCL_MIN_CTAS", "NCCL_MAX_CTAS",
        "NCCL_NVLS_NCHANNELS"})
    EXPECT_TRUE(has(names, name)) << name;
  for (const Knob& knob : space->knobs) {
    EXPECT_GE(knob.values.size(), 1u) << knob.name;
    EXPECT_LE(knob.values.size(), 5u) << knob.name;  // one-knob screening stays cheap
    EXPECT_GT(knob.line, 0) << knob.name;
    EXPECT_FALSE(knob.description.empty()) << knob.name;
    if (knob.default_value) {
      EXPECT_FALSE(has(knob.values, *knob.default_value)) << knob.name;
    }
  }
  EXPECT_EQ(find_knob(*space, "NCCL_ALGO")->scope, KnobScope::comm);
  EXPECT_EQ(find_knob(*space, "NCCL_PROTO")->scope, KnobScope::comm);
  EXPECT_EQ(find_knob(*space, "NCCL_BUFFSIZE")->scope, KnobScope::process);
  EXPECT_EQ(find_knob(*space, "NCCL_NVLS_ENABLE")->default_value, std::optional<std::string>("2"));
  EXPECT_EQ(find_knob(*space, "NCCL_IB_QPS_PER_CONNECTION")->default_value, std::optional<std::string>("1"));
  EXPECT_EQ(find_knob(*space, "NCCL_CROSS_NIC")->default_value, std::optional<std::string>("2"));
  EXPECT_EQ(find_knob(*space, "NCCL_BUFFSIZE")->default_value, std::optional<std::string>("4194304"));
  const Knob& algo = *find_knob(*space, "NCCL_ALGO");
  EXPECT_TRUE(has(algo.values, "NVLS"));
  EXPECT_EQ(algo.value_when.count("NVLS"), 1u);
  EXPECT_EQ(algo.value_when.count("Ring"), 0u);
}

TEST(SearchSpace, SingleNodeDropsNetworkKnobs) {
  Result<SearchSpace> space = read_space(kDefaultSpace);
  ASSERT_TRUE(space.ok()) << space.error();
  const SearchSpace one = prune(*space, dgx_h100_facts(1));
  const std::vector<std::string> names = knob_names(one);
  for (const char* gone : {"NCCL_NET_GDR_LEVEL", "NCCL_NET_GDR_READ", "NCCL_IB_QPS_PER_CONNECTION",
                           "NCCL_PXN_DISABLE", "NCCL_CROSS_NIC"})
    EXPECT_FALSE(has(names, gone)) << gone;
  for (const char* kept :
       {"NCCL_ALGO", "NCCL_PROTO", "NCCL_NVLS_ENABLE", "NCCL_MIN_NCHANNELS", "NCCL_BUFFSIZE"})
    EXPECT_TRUE(has(names, kept)) << kept;
  const Knob& algo = *find_knob(one, "NCCL_ALGO");
  EXPECT_EQ(algo.values, (std::vector<std::string>{"Ring", "Tree", "NVLS"}));  // NVLSTree needs nodes>1

  const SearchSpace two = prune(*space, dgx_h100_facts(2));
  for (const Knob& knob : space->knobs) {  // Blackwell's CTA bounds, and more NICs than GPUs
    const bool gated = knob.name == "NCCL_MIN_CTAS" || knob.name == "NCCL_MAX_CTAS" ||
                       knob.name == "NCCL_NETDEVS_POLICY";
    EXPECT_EQ(find_knob(two, knob.name) != nullptr, !gated) << knob.name;
  }
  EXPECT_EQ(find_knob(two, "NCCL_ALGO")->values, (std::vector<std::string>{"Ring", "Tree", "NVLSTree"}));
  EXPECT_EQ(two.origin, space->origin);
}

TEST(SearchSpace, NoNvswitchDropsNvls) {
  Result<SearchSpace> space = read_space(kDefaultSpace);
  ASSERT_TRUE(space.ok()) << space.error();
  ShapeFacts facts = dgx_h100_facts(2);
  facts.nvswitch = false;
  const SearchSpace pruned = prune(*space, facts);
  EXPECT_EQ(find_knob(pruned, "NCCL_NVLS_ENABLE"), nullptr);
  const Knob& algo = *find_knob(pruned, "NCCL_ALGO");
  EXPECT_EQ(algo.values, (std::vector<std::string>{"Ring", "Tree"}));
  EXPECT_TRUE(algo.value_when.empty());
  EXPECT_TRUE(value_applies(*find_knob(*space, "NCCL_ALGO"), "NVLS", dgx_h100_facts(1)));
  EXPECT_FALSE(value_applies(*find_knob(*space, "NCCL_ALGO"), "NVLS", facts));

  facts.nics = 0;  // no NICs: no GPUDirect RDMA knobs, but PXN and CROSS_NIC stay with nodes>1
  const SearchSpace no_nics = prune(*space, facts);
  EXPECT_EQ(find_knob(no_nics, "NCCL_NET_GDR_LEVEL"), nullptr);
  EXPECT_EQ(find_knob(no_nics, "NCCL_IB_QPS_PER_CONNECTION"), nullptr);
  EXPECT_NE(find_knob(no_nics, "NCCL_PXN_DISABLE"), nullptr);

  facts = dgx_h100_facts(1);
  facts.nccl_version = 21605;  // 2.16.5: before NVLS
  EXPECT_EQ(find_knob(prune(*space, facts), "NCCL_NVLS_ENABLE"), nullptr);
  facts.nccl_version = 0;  // unknown: explore
  EXPECT_NE(find_knob(prune(*space, facts), "NCCL_NVLS_ENABLE"), nullptr);
}

TEST(SearchSpace, FixtureWithPerValueConditionsAndScopes) {
  Result<SearchSpace> space = read_space(kFixtures + "/spaces/per-value-conditions.yaml");
  ASSERT_TRUE(space.ok()) << space.error();
  ASSERT_EQ(space->knobs.size(), 4u);
  const Knob& algo = space->knobs[0];
  EXPECT_EQ(algo.line, 4);
  EXPECT_EQ(algo.values, (std::vector<std::string>{"ring", "NVLS", "NVLSTree", "^NVLS,PAT"}));
  EXPECT_EQ(algo.scope, KnobScope::comm);
  EXPECT_EQ(algo.value_when.at("NVLSTree"),
            (std::vector<std::string>{"nvswitch", "nodes > 1", "nccl>=2.18"}));
  const Knob& proto = space->knobs[1];
  EXPECT_EQ(proto.scope, KnobScope::process);                          // said so explicitly
  EXPECT_EQ(proto.values, (std::vector<std::string>{"LL", "LL128"}));  // "simple" is the default, any case
  EXPECT_EQ(space->knobs[2].when, (std::vector<std::string>{"gpu_sm>=90"}));
  EXPECT_EQ(space->knobs[3].scope, KnobScope::comm);

  ShapeFacts facts = dgx_h100_facts(1);
  facts.gpu_sm = 80;
  const SearchSpace pruned = prune(*space, facts);
  EXPECT_EQ(knob_names(pruned), (std::vector<std::string>{"NCCL_ALGO", "NCCL_PROTO"}));
  EXPECT_EQ(pruned.knobs[0].values, (std::vector<std::string>{"ring", "NVLS", "^NVLS,PAT"}));
  EXPECT_TRUE(knob_applies(space->knobs[3], dgx_h100_facts(2)));
  ShapeFacts four_gpus = dgx_h100_facts(4);
  four_gpus.gpus_per_node = 4;
  EXPECT_FALSE(knob_applies(space->knobs[3], four_gpus));
}

TEST(SearchSpace, KnobWithNoApplicableValueDoesNotApply) {
  Result<SearchSpace> space = parse_search_space(
      "schema: nccltune/search-space/v1\nknobs:\n  - {name: NCCL_ALGO, values: [{value: NVLS, when: "
      "nvswitch}]}\n",
      "space.yaml");
  ASSERT_TRUE(space.ok()) << space.error();
  ShapeFacts facts;
  EXPECT_FALSE(knob_applies(space->knobs[0], facts));
  EXPECT_TRUE(prune(*space, facts).knobs.empty());
  facts.nvswitch = true;
  EXPECT_TRUE(knob_applies(space->knobs[0], facts));
}

TEST(SearchSpace, Conditions) {
  ShapeFacts facts = dgx_h100_facts(2);
  EXPECT_TRUE(condition_holds("nodes>1", facts));
  EXPECT_TRUE(condition_holds(" nodes > 1 ", facts));
  EXPECT_FALSE(condition_holds("nodes==1", facts));
  EXPECT_TRUE(condition_holds("nodes!=1", facts));
  EXPECT_TRUE(condition_holds("nodes<=2", facts));
  EXPECT_FALSE(condition_holds("nodes<2", facts));
  EXPECT_TRUE(condition_holds("ranks>=16", facts));
  EXPECT_TRUE(condition_holds("gpus_per_node==8", facts));
  EXPECT_TRUE(condition_holds("nics>0", facts));
  EXPECT_TRUE(condition_holds("nvswitch", facts));
  EXPECT_FALSE(condition_holds("!nvswitch", facts));
  // Either of two: NCCL's NVLS wants 3+ GPUs before 2.28.7 and 2+ from it.
  EXPECT_TRUE(condition_holds("gpus_per_node<2|nodes>1", facts));
  EXPECT_FALSE(condition_holds("gpus_per_node<2 | !nvswitch", facts));
  EXPECT_FALSE(condition_problem("!nvswitch|gpus_per_node<2").has_value());
  EXPECT_EQ(condition_problem("nodes>1|"), std::optional<std::string>("empty condition"));
  EXPECT_EQ(condition_problem("nodes>1|gpus>1"),
            std::optional<std::string>("'gpus>1': unknown fact 'gpus' (nodes, gpus_per_node, ranks, nics, nccl, "
                                       "gpu_sm, nvswitch, ib, gdr, collective)"));
  EXPECT_FALSE(condition_holds("nodes>1|gpus>1", facts));  // invalid: false, as any invalid condition
  EXPECT_TRUE(condition_holds("nccl>=2.24", facts));
  EXPECT_TRUE(condition_holds("nccl>=2.28.9", facts));
  EXPECT_FALSE(condition_holds("nccl>2.28.9", facts));
  EXPECT_TRUE(condition_holds("nccl<2.29", facts));
  EXPECT_TRUE(condition_holds("nccl==22809", facts));
  EXPECT_TRUE(condition_holds("gpu_sm>=90", facts));
  EXPECT_FALSE(condition_holds("gpu_sm>90", facts));
  EXPECT_FALSE(condition_holds("bogus>1", facts));  // invalid never holds
  facts.nccl_version = 0;
  facts.gpu_sm = 0;
  EXPECT_TRUE(condition_holds("nccl>=2.24", facts));  // unknown facts do not prune
  EXPECT_TRUE(condition_holds("gpu_sm<70", facts));

  EXPECT_FALSE(condition_problem("nodes>1").has_value());
  EXPECT_NE(condition_problem("gpus>1")->find("unknown fact 'gpus'"), std::string::npos);
  EXPECT_NE(condition_problem("nodes=>1")->find("unknown operator '=>'"), std::string::npos);
  EXPECT_NE(condition_problem("nodes>one")->find("not a whole number"), std::string::npos);
  EXPECT_NE(condition_problem("nodes")->find("needs a comparison"), std::string::npos);
  EXPECT_NE(condition_problem("nvswitch==1")->find("nvswitch or !nvswitch"), std::string::npos);
  EXPECT_NE(condition_problem("!nodes")->find("only nvswitch"), std::string::npos);
  EXPECT_NE(condition_problem("nccl>=two")->find("not an NCCL version"), std::string::npos);
  EXPECT_TRUE(condition_problem("").has_value());
}

TEST(SearchSpace, CollectiveConditions) {
  ShapeFacts facts = dgx_h100_facts(2);
  EXPECT_TRUE(condition_holds("collective=alltoall", facts));  // not said what is tuned: explore
  facts.collectives = {"all_reduce", "all_gather"};
  EXPECT_TRUE(condition_holds("collective=all_gather", facts));
  EXPECT_TRUE(condition_holds("collective = reduce_scatter|all_gather", facts));
  EXPECT_FALSE(condition_holds("collective=reduce_scatter", facts));
  EXPECT_FALSE(condition_holds("collective=alltoall", facts));
  EXPECT_FALSE(
      condition_problem("collective=all_reduce|all_gather|reduce_scatter|broadcast|reduce|alltoall"));
  EXPECT_NE(condition_problem("collective=allgather")->find("'allgather' is not a collective"),
            std::string::npos);
  EXPECT_NE(condition_problem("collective=all_gather|")->find("'' is not a collective"), std::string::npos);
  EXPECT_NE(condition_problem("collective>=alltoall")->find("collective=NAME"), std::string::npos);
  EXPECT_NE(condition_problem("collective")->find("needs a name"), std::string::npos);
  EXPECT_NE(condition_problem("!collective")->find("only nvswitch"), std::string::npos);
}

TEST(SearchSpace, ConditionsCompareTwoCounts) {
  ShapeFacts facts = dgx_h100_facts(2);  // 8 GPUs, 8 NICs per node
  EXPECT_FALSE(condition_holds("nics>gpus_per_node", facts));
  EXPECT_TRUE(condition_holds("nics>=gpus_per_node", facts));
  facts.nics = 10;  // DGX H100 with its two storage NICs counted
  EXPECT_TRUE(condition_holds("nics > gpus_per_node", facts));
  EXPECT_TRUE(condition_holds("ranks>nodes", facts));
  EXPECT_FALSE(condition_problem("nodes==ranks").has_value());
  EXPECT_NE(condition_problem("nics>nccl")->find("'nccl' is not a whole number or a count"), std::string::npos);
  EXPECT_NE(condition_problem("gpu_sm>nics")->find("'nics' is not a whole number"), std::string::npos);
  EXPECT_NE(condition_problem("nics>gpus")->find("'gpus' is not a whole number or a count"), std::string::npos);
}

// The knobs of NCCL 2.21-2.28 in the default space, each behind the version that brought it and
// the shapes and collectives it acts on (configs/README.md cites the sources).
TEST(SearchSpace, NewNcclKnobsAreGatedByVersionShapeAndCollective) {
  Result<SearchSpace> space = read_space(kDefaultSpace);
  ASSERT_TRUE(space.ok()) << space.error();
  const std::vector<std::string> kNew = {"NCCL_IB_SPLIT_DATA_ON_QPS", "NCCL_CTA_POLICY",
                                         "NCCL_NETDEVS_POLICY",       "NCCL_NCHANNELS_PER_NET_PEER",
                                         "NCCL_P2P_NET_CHUNKSIZE",    "NCCL_MIN_CTAS", "NCCL_MAX_CTAS"};
  // GB200-like: 4 nodes of 1 GPU with 2 NICs each (PAT's one GPU per node), NVSwitch, Blackwell.
  ShapeFacts all = dgx_h100_facts(4, {"all_reduce", "all_gather", "reduce_scatter", "alltoall"});
  all.gpus_per_node = 1;
  all.nics = 2;
  all.gpu_sm = 100;
  const SearchSpace rich = prune(*space, all);
  for (const std::string& name : kNew) EXPECT_NE(find_knob(rich, name), nullptr) << name;
  EXPECT_TRUE(has(find_knob(rich, "NCCL_ALGO")->values, "PAT"));
  EXPECT_TRUE(has(find_knob(rich, "NCCL_CTA_POLICY")->values, "2"));  // ZERO, 2.28.3

  // NCCL 2.21.5: none of the knobs of 2.23 and later. NVLS_CHUNKSIZE came with 2.21.5, and the
  // IB and send/recv knobs are older still (their defaults as listed hold from 2.20.3), as are the
  // CTA bounds (2.17.1).
  ShapeFacts old_nccl = all;
  old_nccl.nccl_version = 22105;
  const SearchSpace older = prune(*space, old_nccl);
  for (const char* gone : {"NCCL_CTA_POLICY", "NCCL_NETDEVS_POLICY"})
    EXPECT_EQ(find_knob(older, gone), nullptr) << gone;
  for (const char* kept : {"NCCL_IB_SPLIT_DATA_ON_QPS", "NCCL_NCHANNELS_PER_NET_PEER", "NCCL_P2P_NET_CHUNKSIZE",
                           "NCCL_MIN_CTAS", "NCCL_MAX_CTAS"})
    EXPECT_NE(find_knob(older, kept), nullptr) << kept;
  EXPECT_FALSE(has(find_knob(older, "NCCL_ALGO")->values, "PAT"));
  ShapeFacts old_dgx = dgx_h100_facts(1);  // NVLS_CHUNKSIZE acts where NVLS runs: 2+ GPUs
  old_dgx.nccl_version = 22105;
  EXPECT_NE(find_knob(prune(*space, old_dgx), "NCCL_NVLS_CHUNKSIZE"), nullptr);
  old_dgx.nccl_version = 22104;
  EXPECT_EQ(find_knob(prune(*space, old_dgx), "NCCL_NVLS_CHUNKSIZE"), nullptr);
  old_dgx.nccl_version = 21605;  // before 2.17.1, no CTA bounds (and no NVLS)
  old_dgx.nvswitch = false;
  EXPECT_EQ(find_knob(prune(*space, old_dgx), "NCCL_MIN_CTAS"), nullptr);
  old_nccl.nccl_version = 21903;  // IB_SPLIT_DATA_ON_QPS defaulted to 1 before 2.20.3
  EXPECT_EQ(find_knob(prune(*space, old_nccl), "NCCL_IB_SPLIT_DATA_ON_QPS"), nullptr);
  old_nccl.nccl_version = 22606;
  EXPECT_EQ(find_knob(prune(*space, old_nccl), "NCCL_CTA_POLICY"), nullptr);  // 2.27.3 and later
  old_nccl.nccl_version = 22709;
  EXPECT_EQ(find_knob(prune(*space, old_nccl), "NCCL_CTA_POLICY")->values, std::vector<std::string>{"1"});
  old_nccl.nccl_version = 22404;
  EXPECT_TRUE(has(find_knob(prune(*space, old_nccl), "NCCL_ALGO")->values, "PAT"));

  ShapeFacts eight_gpus = all;  // PAT needs one GPU per node
  eight_gpus.gpus_per_node = 8;
  EXPECT_FALSE(has(find_knob(prune(*space, eight_gpus), "NCCL_ALGO")->values, "PAT"));
  EXPECT_EQ(find_knob(prune(*space, eight_gpus), "NCCL_NETDEVS_POLICY"), nullptr);  // 2 NICs, 8 GPUs
  ShapeFacts all_reduce_only = all;
  all_reduce_only.collectives = {"all_reduce"};
  const SearchSpace reduce = prune(*space, all_reduce_only);
  for (const char* gone : {"NCCL_CTA_POLICY", "NCCL_NCHANNELS_PER_NET_PEER", "NCCL_P2P_NET_CHUNKSIZE"})
    EXPECT_EQ(find_knob(reduce, gone), nullptr) << gone;
  EXPECT_FALSE(has(find_knob(reduce, "NCCL_ALGO")->values, "PAT"));
  ShapeFacts no_nvswitch = all;
  no_nvswitch.nvswitch = false;
  EXPECT_EQ(find_knob(prune(*space, no_nvswitch), "NCCL_NVLS_CHUNKSIZE"), nullptr);
  EXPECT_EQ(find_knob(prune(*space, no_nvswitch), "NCCL_CTA_POLICY"), nullptr);
  for (const std::string& name : kNew)  // one node: only the knobs of NVLink
    EXPECT_EQ(find_knob(prune(*space, dgx_h100_facts(1)), name) != nullptr,
              name == "NCCL_NVLS_CHUNKSIZE" || name == "NCCL_CTA_POLICY")
        << name;
}

TEST(SearchSpace, AKnobWithAnotherNamesAnEarlierKnobAndGoesWithIt) {
  Result<SearchSpace> space = parse_search_space(
      "schema: nccltune/search-space/v1\nknobs:\n"
      "  - {name: NCCL_IB_QPS_PER_CONNECTION, values: [\"4\"], when: [\"nodes>1\"]}\n"
      "  - {name: NCCL_IB_SPLIT_DATA_ON_QPS, values: [\"1\"], with: NCCL_IB_QPS_PER_CONNECTION}\n",
      "space.yaml");
  ASSERT_TRUE(space.ok()) << space.error();
  EXPECT_EQ(space->knobs[1].with, "NCCL_IB_QPS_PER_CONNECTION");
  EXPECT_EQ(prune(*space, dgx_h100_facts(2)).knobs.size(), 2u);
  EXPECT_TRUE(prune(*space, dgx_h100_facts(1)).knobs.empty());  // without its knob, it goes too
  EXPECT_EQ(error_of("  - {name: NCCL_IB_SPLIT_DATA_ON_QPS, values: [\"1\"], with: NCCL_IB_QPS_PER_CONNECTION}\n"
                     "  - {name: NCCL_IB_QPS_PER_CONNECTION, values: [\"4\"]}\n"),
            "space.yaml:3: knobs[0].with: 'NCCL_IB_QPS_PER_CONNECTION' is not a knob listed before this one");
  EXPECT_EQ(error_of("  - {name: NCCL_IB_QPS_PER_CONNECTION, values: [\"4\"]}\n"
                     "  - {name: NCCL_IB_SPLIT_DATA_ON_QPS, values: [\"1\"], with: NCCL_IB_QPS_PER_CONNECTION}\n"
                     "  - {name: NCCL_BUFFSIZE, values: [\"1024\"], with: NCCL_IB_SPLIT_DATA_ON_QPS}\n"),
            "space.yaml:5: knobs[2].with: 'NCCL_IB_SPLIT_DATA_ON_QPS' itself acts only with "
            "'NCCL_IB_QPS_PER_CONNECTION'");
}

TEST(SearchSpace, NewKnobValuesAreChecked) {
  EXPECT_EQ(error_of("  - {name: NCCL_NETDEVS_POLICY, values: [ALL, \"MAX:0\"]}\n"),
            "space.yaml:3: knobs[0].values[1]: 'MAX:0' is not a valid NCCL_NETDEVS_POLICY value (AUTO, ALL or MAX:N)");
  EXPECT_EQ(error_of("  - {name: NCCL_CTA_POLICY, values: [\"3\"]}\n"),
            "space.yaml:3: knobs[0].values[0]: '3' is not a valid NCCL_CTA_POLICY value (0, 1 or 2; NCCL before "
            "2.29.2 reads the names DEFAULT, EFFICIENCY and ZERO as 0)");
  EXPECT_EQ(error_of("  - {name: NCCL_NET_GDR_LEVEL, values: [PHB, sys]}\n"),
            "space.yaml:3: knobs[0].values[1]: 'sys' is not a valid NCCL_NET_GDR_LEVEL value (LOC, PIX, PXB, PHB, "
            "SYS in capitals, as NCCL compares them with case, or 0-5)");
  EXPECT_EQ(error_of("  - {name: NCCL_BUFFSIZE, values: [\"0x400000\"]}\n"),
            "space.yaml:3: knobs[0].values[0]: '0x400000' is not a valid NCCL_BUFFSIZE value (an integer from 1 to "
            "1099511627776, in plain decimal: NCCL reads 0x10 as 16, 010 as 8 and 16k as 16)");
  EXPECT_EQ(error_of("  - {name: NCCL_MAX_CTAS, values: [\"128\"]}\n"),
            "space.yaml:3: knobs[0].values[0]: '128' is not a valid NCCL_MAX_CTAS value (an integer from 1 to 64)");
  EXPECT_EQ(error_of("  - {name: NCCL_IB_SPLIT_DATA_ON_QPS, values: [\"2\"]}\n"),
            "space.yaml:3: knobs[0].values[0]: '2' is not a valid NCCL_IB_SPLIT_DATA_ON_QPS value (an integer from 0 "
            "to 1)");
  const Result<SearchSpace> valid = parse_search_space(
      "schema: nccltune/search-space/v1\nknobs:\n"
      "  - {name: NCCL_NETDEVS_POLICY, values: [all, \"max:2\"]}\n"
      "  - {name: NCCL_CTA_POLICY, values: [\"1\", \"2\"]}\n",
      "space.yaml");
  EXPECT_TRUE(valid.ok()) << valid.error();
}

TEST(SearchSpace, ErrorsNameFileLineAndField) {
  Result<SearchSpace> typo = read_space(kFixtures + "/spaces/typo.yaml");
  ASSERT_FALSE(typo.ok());
  EXPECT_EQ(typo.error(), kFixtures + "/spaces/typo.yaml:8: knobs[1]: unknown key 'valeus'");

  EXPECT_EQ(error_of("  - name: NCCL_PROTO\n    values: []\n"), "space.yaml:4: knobs[0].values: empty");
  EXPECT_EQ(error_of("  - name: NCCL_PROTO\n"), "space.yaml:3: knobs[0].values: missing");
  EXPECT_EQ(error_of("  - name: NCCL_PROTO\n    values: LL\n"),
            "space.yaml:4: knobs[0].values: must be a list");
  EXPECT_EQ(error_of("  - values: [LL]\n"), "space.yaml:3: knobs[0].name: missing");
  EXPECT_EQ(error_of("  - {name: NCCL_PROTO, values: [LL]}\n  - {name: NCCL_ALGO, values: [Ring]}\n"
                     "  - {name: NCCL_PROTO, values: [Simple]}\n"),
            "space.yaml:5: knobs[2].name: duplicate knob 'NCCL_PROTO' (first at line 3)");
  EXPECT_EQ(error_of("  - {name: nccl_proto, values: [LL]}\n"),
            "space.yaml:3: knobs[0].name: 'nccl_proto' does not match ^NCCL_[A-Z0-9_]+$");
  EXPECT_EQ(error_of("  - {name: LD_PRELOAD, values: [x]}\n"),
            "space.yaml:3: knobs[0].name: 'LD_PRELOAD' does not match ^NCCL_[A-Z0-9_]+$");
  EXPECT_EQ(error_of("  - name: NCCL_SOCKET_IFNAME\n    values:\n      - eth0\n      - \"$(reboot)\"\n"),
            "space.yaml:6: knobs[0].values[1]: '$(reboot)' has characters outside [A-Za-z0-9_,.:^=+-] (or is "
            "longer than 1024)");
  EXPECT_EQ(
      error_of("  - {name: NCCL_SOCKET_IFNAME, values: [\"a\\nb\"]}\n"),
      "space.yaml:3: knobs[0].values[0]: 'a\\x0ab' has characters outside [A-Za-z0-9_,.:^=+-] (or is longer "
      "than 1024)");
  EXPECT_EQ(error_of("  - {name: NCCL_SOCKET_IFNAME, values: [\"\"]}\n"),
            "space.yaml:3: knobs[0].values[0]: empty value");
  EXPECT_EQ(
      error_of("  - name: NCCL_ALGO\n    values: [Ring, Butterfly]\n"),
      "space.yaml:4: knobs[0].values[1]: 'Butterfly' is not a valid NCCL_ALGO value (a list of Tree, Ring, "
      "CollNetDirect, CollNetChain, NVLS, NVLSTree, PAT, optionally after ^)");
  EXPECT_EQ(error_of("  - name: NCCL_ALGO\n    values: [Ring, ring]\n"),
            "space.yaml:4: knobs[0].values[1]: 'ring' is listed twice");
  EXPECT_EQ(
      error_of("  - name: NCCL_MIN_NCHANNELS\n    values: [\"8\", \"128\"]\n"),
      "space.yaml:4: knobs[0].values[1]: '128' is not a valid NCCL_MIN_NCHANNELS value (an integer from 1 to "
      "64)");
  EXPECT_EQ(
      error_of("  - name: NCCL_NTHREADS\n    default_value: \"500\"\n    values: [\"256\"]\n"),
      "space.yaml:4: knobs[0].default_value: '500' is not a valid NCCL_NTHREADS value (a multiple of 32 from 64 to 512)");
  EXPECT_EQ(error_of("  - name: NCCL_PXN_DISABLE\n    default_value: \"0\"\n    values: [\"0\"]\n"),
            "space.yaml:5: knobs[0].values: nothing to try besides default_value '0'");
  EXPECT_EQ(error_of("  - name: NCCL_PROTO\n    values: [LL]\n    when: [\"gpus>1\"]\n"),
            "space.yaml:5: knobs[0].when[0]: 'gpus>1': unknown fact 'gpus' (nodes, gpus_per_node, ranks, "
            "nics, nccl, gpu_sm, nvswitch, ib, gdr, collective)");
  EXPECT_EQ(error_of("  - name: NCCL_PROTO\n    values: [LL]\n    when: \"nodes=>1\"\n"),
            "space.yaml:5: knobs[0].when: 'nodes=>1': unknown operator '=>' (>=, <=, >, <, ==, !=)");
  EXPECT_EQ(error_of("  - name: NCCL_ALGO\n    values:\n      - {value: NVLS, when: [nvlink]}\n"),
            "space.yaml:5: knobs[0].values[0].when[0]: 'nvlink': unknown fact 'nvlink' (nodes, "
            "gpus_per_node, ranks, nics, nccl, gpu_sm, nvswitch, ib, gdr, collective)");
  EXPECT_EQ(
      error_of("  - name: NCCL_NVLS_ENABLE\n    values: [\"1\"]\n    when: [!nvswitch]\n"),
      "space.yaml:5: explicit tags (!nvswitch) are not allowed; text that starts with ! goes in quotes");
  EXPECT_EQ(error_of("  - name: NCCL_ALGO\n    values:\n      - {valeu: NVLS}\n"),
            "space.yaml:5: knobs[0].values[0]: unknown key 'valeu'");
  EXPECT_EQ(error_of("  - name: NCCL_PROTO\n    values: [LL]\n    scope: global\n"),
            "space.yaml:5: knobs[0].scope: 'global' is not process or comm");
  EXPECT_EQ(error_of("  - name: NCCL_PROTO\n    values: [LL]\n    values: [Simple]\n"),
            "space.yaml:5: knobs[0].values: appears twice");
  EXPECT_EQ(error_of("  - NCCL_PROTO\n"), "space.yaml:3: knobs[0]: must be a map with name and values");

  const auto whole = [](const std::string& text) {
    Result<SearchSpace> space = parse_search_space(text, "space.yaml");
    return space.ok() ? std::string() : space.error();
  };
  EXPECT_EQ(whole("knobs: []\n"), "space.yaml:1: schema: missing (nccltune/search-space/v1)");
  EXPECT_EQ(whole("\n\nschema: nccltune/search-space/v2\nknobs: []\n"),
            "space.yaml:3: schema: expected 'nccltune/search-space/v1', found 'nccltune/search-space/v2'");
  EXPECT_EQ(whole("schema: nccltune/search-space/v1\nknob: []\n"), "space.yaml:2: unknown key 'knob'");
  EXPECT_EQ(whole("schema: nccltune/search-space/v1\n"), "space.yaml:1: knobs: missing");
  EXPECT_EQ(whole("- a\n"), "space.yaml:1: the document must be a map with schema and knobs");
  const std::string syntax =
      whole("schema: nccltune/search-space/v1\nknobs:\n  - {name: NCCL_ALGO, values: [Ring\n");
  EXPECT_EQ(syntax.rfind("space.yaml:", 0), 0u) << syntax;
  EXPECT_NE(syntax.find("invalid YAML"), std::string::npos) << syntax;
  EXPECT_EQ(syntax.find('\n'), std::string::npos) << syntax;

  EXPECT_EQ(whole(std::string(5000, '{')), "space.yaml:1: invalid YAML: nested too deeply");

  Result<SearchSpace> missing = read_space(kFixtures + "/spaces/no-such-file.yaml");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().find("no-such-file.yaml"), std::string::npos);
}

// Where NVLS can run: NVSwitch and 2+ GPUs on a node (ncclNvlsInit, src/transport/nvls.cc: gpuCount < 2
// from 2.28.7, gpuCount <= 2 before), NVLS on one node and NVLSTree on several (ncclTopoTuneModel,
// src/graph/tuning.cc, 2.28.9). The NVLS knobs follow it.
TEST(SearchSpace, NvlsFollowsNcclsRules) {
  Result<SearchSpace> space = read_space(kDefaultSpace);
  ASSERT_TRUE(space.ok()) << space.error();
  const auto algos = [&](const ShapeFacts& facts) {
    const SearchSpace pruned = prune(*space, facts);
    const Knob* algo = find_knob(pruned, "NCCL_ALGO");
    return algo ? algo->values : std::vector<std::string>{};
  };
  const std::vector<std::string> nvls_knobs = {"NCCL_NVLS_ENABLE", "NCCL_NVLS_CHUNKSIZE", "NCCL_NVLS_NCHANNELS"};
  const auto nvls_knobs_kept = [&](const ShapeFacts& facts) {
    const SearchSpace pruned = prune(*space, facts);
    int kept = 0;
    for (const std::string& name : nvls_knobs) kept += find_knob(pruned, name) != nullptr;
    return kept;
  };

  ShapeFacts one = dgx_h100_facts(1);
  one.nccl_version = 22809;
  EXPECT_TRUE(has(algos(one), "NVLS"));
  EXPECT_FALSE(has(algos(one), "NVLSTree"));
  EXPECT_EQ(nvls_knobs_kept(one), 3);

  ShapeFacts two = dgx_h100_facts(2);  // 2 nodes: NVLSTree, not NVLS
  two.nccl_version = 22809;
  EXPECT_FALSE(has(algos(two), "NVLS"));
  EXPECT_TRUE(has(algos(two), "NVLSTree"));
  EXPECT_EQ(nvls_knobs_kept(two), 3);

  for (int nodes : {1, 2}) {  // one GPU per node: neither, and no NVLS knobs
    ShapeFacts single = dgx_h100_facts(nodes);
    single.gpus_per_node = 1;
    EXPECT_FALSE(has(algos(single), "NVLS")) << nodes;
    EXPECT_FALSE(has(algos(single), "NVLSTree")) << nodes;
    EXPECT_EQ(nvls_knobs_kept(single), 0) << nodes;
  }

  ShapeFacts pair = dgx_h100_facts(1);  // 2 GPUs: NVLS from 2.28.7, 3+ GPUs before
  pair.gpus_per_node = 2;
  pair.nccl_version = 22807;
  EXPECT_TRUE(has(algos(pair), "NVLS"));
  EXPECT_EQ(nvls_knobs_kept(pair), 3);
  pair.nccl_version = 22803;
  EXPECT_FALSE(has(algos(pair), "NVLS"));
  EXPECT_EQ(nvls_knobs_kept(pair), 0);
  pair.gpus_per_node = 3;
  EXPECT_TRUE(has(algos(pair), "NVLS"));

  // NVLS_NCHANNELS never tries NCCL's own default: 16 on Hopper, 24 on one Blackwell node, 32 on more.
  const auto channels = [&](int nodes, int sm) {
    ShapeFacts facts = dgx_h100_facts(nodes);
    facts.gpu_sm = sm;
    return find_knob(prune(*space, facts), "NCCL_NVLS_NCHANNELS")->values;
  };
  EXPECT_EQ(channels(1, 90), (std::vector<std::string>{"8", "24", "32"}));
  EXPECT_EQ(channels(1, 100), (std::vector<std::string>{"8", "16", "32"}));
  EXPECT_EQ(channels(2, 100), (std::vector<std::string>{"8", "16", "24"}));
}

// NCCL_MIN/MAX_CTAS bound the ring and tree channels as NCCL_MIN/MAX_NCHANNELS do (src/graph/connect.cc,
// 2.28.9 and 2.30.7: min(ncclMaxNchannels(), maxCTAs), max(ncclMinNchannels(), minCTAs)), and NVLS's
// channels too (src/transport/nvls.cc): the current names where NVLS cannot run, the older ones where
// it can, so that the bounds leave NVLS's channels to NCCL_NVLS_NCHANNELS.
TEST(SearchSpace, ChannelBoundsUseTheCurrentNamesWhereNvlsCannotRun) {
  Result<SearchSpace> space = read_space(kDefaultSpace);
  ASSERT_TRUE(space.ok()) << space.error();
  const auto names_for = [&](const ShapeFacts& facts) { return knob_names(prune(*space, facts)); };
  ShapeFacts pcie = dgx_h100_facts(2);
  pcie.nvswitch = false;
  ShapeFacts single = dgx_h100_facts(2);
  single.gpus_per_node = 1;
  for (const ShapeFacts& facts : {pcie, single}) {
    const std::vector<std::string> names = names_for(facts);
    EXPECT_TRUE(has(names, "NCCL_MIN_CTAS") && has(names, "NCCL_MAX_CTAS"));
    EXPECT_FALSE(has(names, "NCCL_MIN_NCHANNELS") || has(names, "NCCL_MAX_NCHANNELS"));
  }
  const std::vector<std::string> dgx = names_for(dgx_h100_facts(2));
  EXPECT_TRUE(has(dgx, "NCCL_MIN_NCHANNELS") && has(dgx, "NCCL_MAX_NCHANNELS"));
  EXPECT_FALSE(has(dgx, "NCCL_MIN_CTAS") || has(dgx, "NCCL_MAX_CTAS"));
}


// Every knob the tuner ships has a value rule (knob_value_problem), so that a space or profile
// value NCCL would read otherwise than it says ("0x10", "sys") is refused before any trial.
TEST(SearchSpace, EveryDefaultKnobHasAValueRule) {
  Result<SearchSpace> space = read_space(kDefaultSpace);
  ASSERT_TRUE(space.ok()) << space.error();
  for (const Knob& knob : space->knobs) {
    EXPECT_TRUE(knob_value_problem(knob.name, "0x1").has_value()) << knob.name;
    for (const std::string& value : knob.values) EXPECT_FALSE(knob_value_problem(knob.name, value)) << knob.name;
  }
}
