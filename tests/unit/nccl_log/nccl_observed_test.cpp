// provenance.nccl_observed: what tune records of NCCL's log, how it reads back, how strictly, and
// where NCCL's own choice under the shipped env is not the fastest measured.
#include "profile/nccl_observed.h"

#include <gtest/gtest.h>

#include <string>

#include "nccl_log/nccl_account.h"
#include "nccl_log/nccl_observation.h"
#include "nccl_log/node_log_summary.h"
#include "profile/profile.h"
#include "test_files.h"

using namespace nccltune;
using nccltune::test_support::fixture;
using nccltune::test_support::read_file;

namespace {

NcclObservation socket_observation() {
  NcclObservation o;
  o.nccl_version = "2.28.9";
  o.transport = "Socket";
  o.net_plugin = "Socket";
  o.hcas = {"eth0"};
  o.connections = 4;
  o.gdr_connections = 0;
  o.nvls_available = false;
  o.coll_channels = 2;
  o.choices = {{"AllReduce", 1024, "TREE", "LL"}, {"AllReduce", 1048576, "RING", "SIMPLE"}};
  return o;
}

Profile profile_with(const NcclObserved& observed) {
  Profile p;
  p.shape.node_type_key = "h100.8gpu";
  p.shape.nodes = 2;
  p.shape.gpus_per_node = 8;
  p.shape.ranks = 16;
  p.env = {{"NCCL_MIN_NCHANNELS", "16"}};
  p.provenance.nccl_observed = observed;
  return p;
}

std::string error_of(const std::string& yaml) {
  const Result<Profile> parsed = parse_profile(yaml, "p.yaml");
  return parsed ? std::string("(parsed)") : parsed.error();
}

// A minimal profile whose provenance holds `observed` (YAML text, indented under provenance).
std::string profile_yaml(const std::string& observed) {
  return "schema: nccltune/profile/v1\nshape: {key: k, nodes: 2, gpus_per_node: 8}\nenv: {}\n"
         "provenance:\n  nccl_observed:\n" +
         observed;
}

}  // namespace

TEST(NcclObserved, RoundTripsThroughTheProfile) {
  NcclObserved observed;
  observed.defaults = socket_observation();
  observed.shipped = socket_observation();
  observed.shipped->coll_channels = 16;
  observed.shipped->connections.reset();  // unknown stays unknown
  observed.shipped->gdr_connections.reset();
  observed.verdicts = {{"fail", "transport", "NCCL sends between nodes over sockets: \"quoted\" \\ text"}};
  observed.contradictions = {{"AllReduce", 1048576, "RING/SIMPLE", "Ring/LL128"}};
  const Profile p = profile_with(observed);
  const std::string yaml = profile_to_yaml(p);
  const Result<Profile> back = parse_profile(yaml, "written");
  ASSERT_TRUE(back) << back.error() << "\n" << yaml;
  EXPECT_EQ(back->provenance.nccl_observed, observed);
}

TEST(NcclObserved, AProfileWithoutItReadsAsNothingObserved) {
  const Result<Profile> p = parse_profile(read_file(fixture("profiles/h100-2n.yaml")), "h100-2n.yaml");
  ASSERT_TRUE(p) << p.error();
  EXPECT_TRUE(p->provenance.nccl_observed.empty());
  EXPECT_EQ(jobs_observation(p->provenance.nccl_observed), nullptr);
  EXPECT_EQ(profile_to_yaml(*p).find("nccl_observed"), std::string::npos);
}

TEST(NcclObserved, ReadsStrictlyAndNamesTheField) {
  EXPECT_NE(error_of(profile_yaml("    defaults: {transport: IB, colour: red}\n"))
                .find("provenance.nccl_observed.defaults: unknown key 'colour'"),
            std::string::npos);
  EXPECT_NE(error_of(profile_yaml("    defaults: {network: {connections: 2, with_gdr: 3}}\n"))
                .find("provenance.nccl_observed.defaults.network.with_gdr: more than connections"),
            std::string::npos);
  EXPECT_NE(error_of(profile_yaml("    verdicts: [{level: panic, check: gdr, message: m}]\n"))
                .find("provenance.nccl_observed.verdicts[0].level"),
            std::string::npos);
  EXPECT_NE(error_of(profile_yaml("    defaults: {choices: [{op: AllReduce, algo: RING}]}\n"))
                .find("provenance.nccl_observed.defaults.choices[0].bytes: missing"),
            std::string::npos);
  EXPECT_NE(error_of(profile_yaml("    contradictions: [{bytes: -1}]\n")).find("contradictions[0].bytes"),
            std::string::npos);
  std::string many = "    defaults:\n      hcas: [";
  for (std::size_t i = 0; i <= kMaxObservedEntries; ++i) many += (i ? ", " : "") + std::string("x");
  EXPECT_NE(error_of(profile_yaml(many + "]\n")).find("more than 512 entries"), std::string::npos);
}

TEST(NcclObserved, ContradictionsAreMeasuredSizesWherePerSizeSaysOtherwise) {
  NcclObservation o;
  o.choices = {
      {"AllReduce", 1024, "TREE", "LL"},                  // agrees with Tree/LL
      {"AllReduce", 131072, "RING", "SIMPLE"},            // Ring/LL128 measured: a contradiction
      {"AllReduce", 1 << 20, "COLLNET_DIRECT", "LL128"},  // CollnetDirect is COLLNET_DIRECT
      {"AllReduce", 4 << 20, "TREE", "SIMPLE"},           // a list that allows it
      {"AllReduce", 16 << 20, "RING", "LL"},              // any protocol (empty) but not RING
      {"AllGather", 131072, "RING", "LL"},                // another collective
      {"", 262144, "TREE", "LL"},                         // before 2.23: no op, counts for any
      {"AllReduce", 1u << 30, "NVLS", "SIMPLE"},          // above the measured range
  };
  const std::vector<SizeChoice> per_size = {{0, 65535, "Tree", "LL", 0},
                                            {65536, 524287, "Ring", "LL128", 0},
                                            {524288, 2097151, "CollnetDirect", "LL128", 0},
                                            {2097152, 8388607, "Ring,Tree", "^LL", 0},
                                            {8388608, 1u << 30, "NVLS", "", 0}};
  const MeasuredRange measured{8, 64 << 20};
  const auto found = choice_contradictions(o, "AllReduce", per_size, measured);
  ASSERT_EQ(found.size(), 3u);
  EXPECT_EQ(found[0], (ChoiceContradiction{"AllReduce", 131072, "RING/SIMPLE", "Ring/LL128"}));
  EXPECT_EQ(found[1], (ChoiceContradiction{"AllReduce", 262144, "TREE/LL", "Ring/LL128"}));
  EXPECT_EQ(found[2], (ChoiceContradiction{"AllReduce", 16 << 20, "RING/LL", "NVLS/auto"}));
  EXPECT_EQ(describe_contradiction(found[0]),
            "AllReduce at 128K: NCCL chose RING/SIMPLE under the shipped env; Ring/LL128 measured fastest "
            "(per_size: only "
            "the tuner plugin applies it)");
  EXPECT_EQ(observed_choice_at(o, "AllReduce", 262144), "TREE/LL");
  EXPECT_EQ(observed_choice_at(o, "AllReduce", 4096), "");
}

TEST(NcclObserved, ComesFromTheLogAsExplainReadsIt) {
  const NcclInfoLog log = parse_nccl_info_log(
      read_file(fixture("nccl-info-logs/synthetic-2.28-tuning-2node-ib.txt")), "synthetic");
  const NcclObservation o = observation_from_log(log);
  EXPECT_EQ(o.nccl_version, "2.28.9");
  EXPECT_EQ(o.transport, "IB");
  EXPECT_EQ(o.hcas, (std::vector<std::string>{"mlx5_0:1", "mlx5_1:1"}));
  EXPECT_EQ(o.connections, 3);
  EXPECT_EQ(o.gdr_connections, 2);
  EXPECT_EQ(o.nvls_available, true);
  EXPECT_EQ(o.nvls_channels, 16);
  EXPECT_EQ(o.coll_channels, 16);
  EXPECT_EQ(o.tuner, "nccltune");
  ASSERT_EQ(o.choices.size(), 3u);
  EXPECT_EQ(o.choices[1], (ObservedChoice{"AllReduce", 1048576, "RING", "LL128"}));
  EXPECT_EQ(describe_observation(o),
            "IB, 2 devices (mlx5_0:1, mlx5_1:1), GPUDirect RDMA on 2 of 3 connections, NVLS 16 channels, 16 "
            "channels, tuner: nccltune");

  // A log without connection lines says nothing about GPUDirect RDMA.
  const NcclObservation quiet =
      observation_from_log(parse_nccl_info_log("NCCL INFO Using network IB\n", "x"));
  EXPECT_FALSE(quiet.connections.has_value());
  EXPECT_FALSE(quiet.gdr_connections.has_value());
}

TEST(NcclObserved, ShowLinesSayWhatDiffersUnderTheEnvAndWhatWarns) {
  NcclObserved observed;
  observed.defaults = socket_observation();
  observed.shipped = socket_observation();
  observed.shipped->choices.clear();  // choices alone do not make the facts differ
  observed.verdicts = {{"info", "nvls", "NVLS on"}, {"fail", "transport", "sockets"}};
  std::string lines = render_nccl_observed_lines(observed);
  EXPECT_NE(lines.find("NCCL said (defaults): Socket, 1 device (eth0)"), std::string::npos) << lines;
  EXPECT_EQ(lines.find("NCCL said (with env)"), std::string::npos) << lines;
  EXPECT_NE(lines.find("fail  transport: sockets"), std::string::npos) << lines;
  EXPECT_EQ(lines.find("NVLS on"), std::string::npos) << lines;  // info verdicts stay in the file
  observed.shipped->coll_channels = 16;
  lines = render_nccl_observed_lines(observed);
  EXPECT_NE(lines.find("NCCL said (with env): Socket, 1 device (eth0), GPUDirect RDMA on 0 of 4 connections, "
                       "NVLS unavailable, 16 channels"),
            std::string::npos)
      << lines;
}

TEST(NcclObserved, LoggedChoicesPerSizeInNcclAlgoSpelling) {
  const NcclInfoLog log = parse_nccl_info_log(
      "NCCL INFO AllReduce: 1024 Bytes -> Algo NVLS_TREE proto SIMPLE channel{Lo..Hi}={0..1}\n"
      "NCCL INFO AllGather: 4096 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..1}\n"
      "NCCL INFO AllReduce: 8388608 Bytes -> Algo COLLNET_DIRECT proto LL128 channel{Lo..Hi}={0..1}\n"
      "NCCL INFO AllReduce: 65536 Bytes -> Algo WARP proto LL channel{Lo..Hi}={0..1}\n",
      "log");
  const auto choices =
      logged_choices_at(log, std::vector<std::string>(4, "all_reduce"), {1024, 4096, 65536, 8388608});
  ASSERT_EQ(choices.size(), 4u);
  EXPECT_EQ(choices[0], (NcclChoice{"NVLSTree", "Simple"}));
  EXPECT_FALSE(choices[1].has_value());  // AllGather's line
  EXPECT_FALSE(choices[2].has_value());  // not an algorithm NCCL_ALGO names
  EXPECT_EQ(choices[3], (NcclChoice{"CollNetDirect", "LL128"}));
}

TEST(NcclObserved, WithSplitCommunicatorsOnlyASizeChosenAlikeIsKnown) {
  // The world and a rail at 1M chose differently; at 4K alike. NCCL's lines do not say whose.
  const NcclInfoLog log = one_choice_per_size(parse_nccl_info_log(
      "NCCL INFO AllReduce: 4096 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..1}\n"
      "NCCL INFO AllReduce: 1048576 Bytes -> Algo RING proto SIMPLE channel{Lo..Hi}={0..1}\n"
      "NCCL INFO AllReduce: 1048576 Bytes -> Algo TREE proto SIMPLE channel{Lo..Hi}={0..1}\n"
      "NCCL INFO AllReduce: 4096 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..1}\n",
      "log"));
  const auto choices = logged_choices_at(log, {"all_reduce", "all_reduce"}, {4096, 1048576});
  EXPECT_EQ(choices[0], (NcclChoice{"Ring", "LL"}));
  EXPECT_FALSE(choices[1].has_value());
}

TEST(NcclObserved, NcclModelRoundTripsThroughTheProfile) {
  NcclObserved observed;
  observed.defaults = socket_observation();
  observed.nccl_model["all_reduce"] = {{"TREE", "LL", 32.5, 11.03}, {"RING", "SIMPLE", 182.7, 47.95}};
  observed.nccl_model["all_gather"] = {{"PAT", "SIMPLE", 38.4, std::nullopt}};  // ranks unknown
  const std::string yaml = profile_to_yaml(profile_with(observed));
  EXPECT_NE(yaml.find("    nccl_model:\n      \"all_gather\":\n"
                      "        - {algo: \"PAT\", proto: \"SIMPLE\", latency_us: 38.4}\n"),
            std::string::npos)
      << yaml;
  EXPECT_NE(yaml.find("{algo: \"RING\", proto: \"SIMPLE\", latency_us: 182.7, busbw: 47.95}"), std::string::npos)
      << yaml;
  const Result<Profile> back = parse_profile(yaml, "written");
  ASSERT_TRUE(back) << back.error() << "\n" << yaml;
  EXPECT_EQ(back->provenance.nccl_observed, observed);

  // Jobs read no provenance, so the model costs them nothing.
  const Result<Profile> for_jobs = parse_profile(yaml, "written", ProfileParts::for_jobs);
  ASSERT_TRUE(for_jobs) << for_jobs.error();
  EXPECT_TRUE(for_jobs->provenance.nccl_observed.nccl_model.empty());
}

TEST(NcclObserved, NcclModelReadsStrictlyAndNamesTheField) {
  const std::string pair = "[{algo: RING, proto: SIMPLE, latency_us: 1.5, busbw: 40}]";
  EXPECT_EQ(error_of(profile_yaml("    nccl_model: {all_reduce: " + pair + "}\n")), "(parsed)");
  EXPECT_NE(error_of(profile_yaml("    nccl_model: {allreduce: " + pair + "}\n"))
                .find("p.yaml:6: provenance.nccl_observed.nccl_model: unknown collective 'allreduce'"),
            std::string::npos);
  EXPECT_NE(error_of(profile_yaml("    nccl_model: {all_reduce: [{algo: RING, proto: LL, colour: red}]}\n"))
                .find("provenance.nccl_observed.nccl_model.all_reduce[0]: unknown key 'colour'"),
            std::string::npos);
  EXPECT_NE(error_of(profile_yaml("    nccl_model: {all_reduce: [{algo: RING, proto: LL, busbw: fast}]}\n"))
                .find("provenance.nccl_observed.nccl_model.all_reduce[0].busbw: must be a finite number"),
            std::string::npos);
  EXPECT_NE(error_of(profile_yaml("    nccl_model: {all_reduce: [{algo: RING, proto: LL, latency_us: -1}]}\n"))
                .find("provenance.nccl_observed.nccl_model.all_reduce[0].latency_us: must be a finite number "
                      "from 0"),
            std::string::npos);
  EXPECT_NE(error_of(profile_yaml("    nccl_model: {all_reduce: [{algo: RING}]}\n"))
                .find("provenance.nccl_observed.nccl_model.all_reduce[0]: algo and proto are required"),
            std::string::npos);
  EXPECT_NE(error_of(profile_yaml("    nccl_model: {all_reduce: {algo: RING}}\n"))
                .find("provenance.nccl_observed.nccl_model.all_reduce"),
            std::string::npos);
  EXPECT_NE(error_of(profile_yaml("    nccl_model: [all_reduce]\n")).find("provenance.nccl_observed.nccl_model"),
            std::string::npos);
}

TEST(NcclObserved, NcclModelIsTheDefaultsFirstTableForTheTunedCollectives) {
  const NcclInfoLog log = parse_nccl_info_log(
      read_file(fixture("nccl-info-logs/synthetic-2.28-tuning-table-8node-pat.txt")), "synthetic");
  NcclAccount account;
  account.add(Env{}, {log});
  Profile p = profile_with({});
  p.shape.ranks = 8;
  p.collectives["all_reduce"];
  p.collectives["all_gather"];
  p.collectives["reduce_scatter"].guard = true;  // measured, not tuned: no model
  p.collectives["alltoall"];                     // no row in NCCL's table
  const NcclObserved observed = nccl_observed(account, p);
  ASSERT_EQ(observed.nccl_model.size(), 2u);
  // Tree and Ring, three protocols each; CollNet (disabled: bandwidth 0.0) left out.
  const std::vector<ModelPair>& all_reduce = observed.nccl_model.at("all_reduce");
  ASSERT_EQ(all_reduce.size(), 6u);
  EXPECT_EQ(all_reduce[5], (ModelPair{"RING", "SIMPLE", 182.7, 47.95}));  // 27.4 x 2 x 7/8, rounded
  const std::vector<ModelPair>& all_gather = observed.nccl_model.at("all_gather");
  ASSERT_EQ(all_gather.size(), 4u);
  EXPECT_EQ(all_gather[3], (ModelPair{"PAT", "SIMPLE", 38.4, 31.5}));  // 36.0 x 7/8
  EXPECT_EQ(model_pair_for(all_reduce, "RING/SIMPLE"), &all_reduce[5]);
  EXPECT_EQ(model_pair_for(all_reduce, "Ring/Simple"), &all_reduce[5]);
  EXPECT_EQ(model_pair_for(all_reduce, "NVLS/SIMPLE"), nullptr);
  EXPECT_EQ(model_pair_for(all_reduce, ""), nullptr);

  // The shipped env's tables are not NCCL's defaults: no model from them alone.
  NcclAccount shipped_only;
  shipped_only.add(p.env, {log});
  EXPECT_TRUE(nccl_observed(shipped_only, p).nccl_model.empty());
}

// A default three-shape tune's account: the world's says what the world's NCCL did (NVLS with 16
// channels) and warns of nothing on an NVSwitch node; the rail's (one GPU per node, where NCCL
// cannot run NVLS) is its own, with no NVLS verdict; and all of it reads back from the profile.
TEST(NcclObserved, EachCommunicatorsAccountStaysItsOwn) {
  const std::string text = read_file(fixture("nccl-info-logs/fake-2.28-world-rail-node-2node.txt"));
  const std::vector<NcclInfoLog> summaries = node_logs_by_communicator({{"rank 0", text}});
  NcclAccount account;
  NodeTopology node;
  node.nvswitch = true;
  node.gpus.resize(2);
  for (Gpu& gpu : node.gpus) gpu.sm = 90;
  account.node = node;
  account.split_comms = true;
  const NcclInfoLog world_trial = account.add(Env{}, summaries);
  EXPECT_EQ(world_trial.nvls_available, true);
  Profile p = profile_with({});
  p.shape.ranks = 4;
  p.env = {};
  p.collectives["all_reduce"];
  const NcclObserved observed = nccl_observed(account, p);
  ASSERT_TRUE(observed.defaults);
  EXPECT_EQ(observed.defaults->nvls_available, true);
  EXPECT_EQ(observed.defaults->nvls_channels, 16);
  EXPECT_EQ(jobs_observation(observed), &*observed.defaults);  // the daemon's and the metrics'
  for (const ObservedVerdict& v : observed.verdicts) EXPECT_NE(v.level + v.check, "warnnvls") << v.message;
  ASSERT_EQ(observed.comms.size(), 2u);
  EXPECT_EQ(observed.comms[0].comm, "rail");  // the worker's order
  EXPECT_EQ(observed.comms[1].comm, "node");
  ASSERT_TRUE(observed.comms[0].defaults);
  EXPECT_EQ(observed.comms[0].defaults->nvls_available, false);
  EXPECT_TRUE(observed.comms[0].defaults->choices.empty());
  for (const ObservedVerdict& v : observed.comms[0].verdicts) EXPECT_NE(v.check, "nvls") << v.message;
  ASSERT_TRUE(observed.comms[1].defaults);
  EXPECT_EQ(observed.comms[1].defaults->nvls_available, true);
  EXPECT_EQ(observed.comms[1].defaults->coll_channels, 24);

  const std::string lines = render_nccl_observed_lines(observed);
  EXPECT_EQ(lines.find("fabric manager"), std::string::npos) << lines;
  EXPECT_NE(lines.find("NCCL said (defaults): IB"), std::string::npos) << lines;
  EXPECT_NE(lines.find("NVLS 16 channels"), std::string::npos) << lines;
  EXPECT_NE(lines.find("NCCL said (rail): "), std::string::npos) << lines;

  const std::string yaml = profile_to_yaml(profile_with(observed));
  const Result<Profile> back = parse_profile(yaml, "written");
  ASSERT_TRUE(back) << back.error() << "\n" << yaml;
  EXPECT_EQ(back->provenance.nccl_observed, observed);
  EXPECT_LT(yaml.find("    defaults:"), yaml.find("    comms:"));  // the world's first

  // Read as one communicator, as before, the rail's "not available" was the world's, and an
  // NVSwitch node's NVLS looked broken.
  NcclInfoLogReader merged;
  for (const NcclInfoLog& s : summaries) merged.add(s);
  EXPECT_EQ(merged.result().nvls_available, false);
}

TEST(NcclObserved, CommsReadStrictly) {
  EXPECT_NE(error_of(profile_yaml("    comms: [rail]\n")).find("provenance.nccl_observed.comms"),
            std::string::npos);
  EXPECT_NE(error_of(profile_yaml("    comms:\n      rail: {colour: 1}\n")).find("provenance.nccl_observed.comms.rail"),
            std::string::npos);
  const Result<Profile> ok = parse_profile(
      profile_yaml("    comms:\n      rail:\n        verdicts: [{level: info, check: gdr, message: m}]\n"), "p");
  ASSERT_TRUE(ok) << ok.error();
  ASSERT_EQ(ok->provenance.nccl_observed.comms.size(), 1u);
  EXPECT_EQ(ok->provenance.nccl_observed.comms[0].verdicts.size(), 1u);
}
