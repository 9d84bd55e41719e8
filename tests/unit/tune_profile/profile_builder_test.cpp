// The profile a tune run writes, from a strategy result built by hand: no MPI, no processes.
#include "tune_profile/profile_builder.h"

#include <gtest/gtest.h>

#include "profile/profile.h"

namespace nccltune {
namespace {

ClusterShape two_dgx_nodes() {
  ClusterShape shape;
  shape.nodes = 2;
  shape.node.gpu = "NVIDIA H100 80GB HBM3";
  shape.node.gpus = 8;
  shape.node.nvswitch = true;
  shape.node.nics = 8;
  shape.node.nic = "mlx5 InfiniBand 400 Gb/s";
  shape.node.nic_rate_gbps = 400;
  shape.node.gpu_nic_affinity = "PIX";
  shape.node.nccl_version = "2.28.9";
  shape.node.cuda_driver = "13.0";
  shape.node_type_key = node_type_key(shape.node);
  return shape;
}

// all_reduce at 1K and 1M, alltoall (a guard) at the same sizes: the confirmation's points.
StrategyResult two_collectives() {
  StrategyResult r;
  r.env = {{"NCCL_NET_GDR_LEVEL", "SYS"}};
  r.keep_defaults = false;
  r.ops = {{"all_reduce"}, {"all_reduce"}, {"alltoall"}, {"alltoall"}};
  r.sizes = {1024, 1048576, 1024, 1048576};
  r.baseline_busbw = {1.0, 100.0, 2.0, 50.0};
  r.tuned_busbw = {1.0, 121.0, 2.0, 50.0};
  r.per_size[{"all_reduce"}] = {{1024, 1024, "Tree", "LL", 0}, {1048576, 1048576, "Ring", "Simple", 0}};
  r.trials = 57;  // the budget's unit: trials and pairs
  r.counts = {41, 0, 16};
  r.failed_trials = 3;  // failed runs and pairs; the profile counts the configs, its failed list
  r.failed = {{{{"NCCL_PROTO", "LL128"}}, TrialOutcome::wrong_data, "12 wrong elements"}};
  r.noise = 0.01;
  r.confirmation = "A/B 3 rounds: confirmed";
  r.notes = {"a note"};
  return r;
}

TEST(ProfileBuilder, ShapeEnvAndProvenanceComeFromTheRun) {
  StrategyOptions strategy;
  strategy.guards = {"alltoall"};
  RunFacts run;
  run.duration_s = 12.5;
  run.date = "2026-12-02T12:00:00Z";
  const Profile p = build_profile(two_dgx_nodes(), two_collectives(), strategy, run);
  EXPECT_EQ(p.shape.node_type_key, "h100-80gb-hbm3.8gpu.nvswitch.8xib400.pix.nccl2.28");
  EXPECT_EQ(p.shape.nodes, 2);
  EXPECT_EQ(p.shape.ranks, 16);
  EXPECT_EQ(p.shape.nics_per_node, 8);
  EXPECT_EQ(p.env, (Env{{"NCCL_NET_GDR_LEVEL", "SYS"}}));
  EXPECT_FALSE(p.keep_defaults);
  EXPECT_EQ(p.provenance.trials, 41);
  EXPECT_EQ(p.provenance.pairs, 16);
  EXPECT_EQ(p.provenance.failed_trials, 1);
  EXPECT_EQ(p.provenance.hosts, 2);
  EXPECT_DOUBLE_EQ(p.provenance.duration_s, 12.5);
  EXPECT_EQ(p.provenance.date, "2026-12-02T12:00:00Z");
  EXPECT_EQ(p.provenance.objective, "balanced");
  EXPECT_EQ(p.provenance.confirmation, "A/B 3 rounds: confirmed");
  ASSERT_EQ(p.failed.size(), 1u);
  EXPECT_EQ(p.failed[0].outcome, TrialOutcome::wrong_data);
  EXPECT_EQ(p.notes, std::vector<std::string>{"a note"});
}

TEST(ProfileBuilder, EachCollectiveKeepsItsOwnPointsChoicesAndScore) {
  StrategyOptions strategy;
  strategy.guards = {"alltoall"};
  RunFacts run;
  run.peaks["all_reduce"] = LineRate{400.0, std::string("network"), std::nullopt};
  LineRate unknown;
  unknown.unknown_reason = "no GPU found";
  run.peaks["alltoall"] = unknown;
  const Profile p = build_profile(two_dgx_nodes(), two_collectives(), strategy, run);
  ASSERT_EQ(p.collectives.size(), 2u);
  const CollectiveProfile& ar = p.collectives.at("all_reduce");
  EXPECT_FALSE(ar.guard);
  EXPECT_EQ(ar.measured.min_bytes, 1024u);
  EXPECT_EQ(ar.measured.max_bytes, 1048576u);
  EXPECT_EQ(ar.results.sizes, (std::vector<std::uint64_t>{1024, 1048576}));
  EXPECT_EQ(ar.results.tuned, (std::vector<double>{1.0, 121.0}));
  EXPECT_NEAR(ar.results.speedup_geomean, 1.1, 1e-9);  // sqrt(1 x 1.21)
  EXPECT_DOUBLE_EQ(ar.results.worst_size_ratio, 1.0);
  ASSERT_EQ(ar.per_size.size(), 2u);
  EXPECT_EQ(ar.per_size[0].algo + "/" + ar.per_size[0].proto, "Tree/LL");
  EXPECT_EQ(ar.per_size[0].min_bytes, 0u);  // ranges cover every size up to the largest measured
  EXPECT_EQ(ar.per_size[1].min_bytes, 1048576u);
  EXPECT_EQ(ar.per_size[1].max_bytes, 1048576u);
  EXPECT_EQ(ar.results.peak_busbw_gbps, 400.0);
  EXPECT_EQ(ar.results.peak_bottleneck, "network");

  const CollectiveProfile& guard = p.collectives.at("alltoall");
  EXPECT_TRUE(guard.guard);
  EXPECT_TRUE(guard.per_size.empty());
  EXPECT_EQ(guard.results.baseline, (std::vector<double>{2.0, 50.0}));
  EXPECT_FALSE(guard.results.peak_busbw_gbps);
  EXPECT_EQ(guard.results.peak_bottleneck, "unknown: no GPU found");
}

TEST(ProfileBuilder, CollectiveResultSplitsThePointsInTheirOrder) {
  const StrategyResult whole = two_collectives();
  EXPECT_EQ(result_collectives(whole), (std::vector<ShapedOp>{{"all_reduce"}, {"alltoall"}}));
  const StrategyResult alltoall = collective_result(whole, {"alltoall"});
  EXPECT_EQ(alltoall.sizes, (std::vector<std::uint64_t>{1024, 1048576}));
  EXPECT_EQ(alltoall.tuned_busbw, (std::vector<double>{2.0, 50.0}));
  EXPECT_TRUE(alltoall.per_size.empty());
  EXPECT_EQ(alltoall.env, whole.env);
}

// all_reduce at 1M on the world, the rails and the nodes, and the alltoall guard on the rails.
StrategyResult three_shapes() {
  StrategyResult r;
  r.ops = {{"all_reduce"},
           {"all_reduce", CommRole::node},
           {"all_reduce", CommRole::rail},
           {"alltoall", CommRole::rail}};
  r.sizes = {1048576, 1048576, 1048576, 1048576};
  r.baseline_busbw = {100.0, 200.0, 40.0, 30.0};
  r.tuned_busbw = {110.0, 200.0, 50.0, 30.0};
  r.per_size[{"all_reduce", CommRole::rail}] = {{1048576, 1048576, "Ring", "LL128", 0}};
  return r;
}

TEST(ProfileBuilder, ASplitsCollectivesGoToTheSectionOfItsShapeRailsFirst) {
  StrategyOptions strategy;
  strategy.guards = {"alltoall"};
  strategy.comms = {CommRole::world, CommRole::rail, CommRole::node};
  RunFacts run;
  run.peaks["all_reduce"] = LineRate{400.0, std::string("network"), std::nullopt};
  const Profile p = build_profile(two_dgx_nodes(), three_shapes(), strategy, run);
  ASSERT_EQ(p.collectives.size(), 1u);  // the world's
  EXPECT_EQ(p.collectives.at("all_reduce").results.peak_busbw_gbps, 400.0);
  ASSERT_EQ(p.shapes.size(), 2u);
  EXPECT_EQ(describe_section(p.shapes[0]), "rail: 2 nodes x 1 rank");
  EXPECT_TRUE(p.shapes[0].collectives.at("alltoall").guard);
  const CollectiveProfile& rail = p.shapes[0].collectives.at("all_reduce");
  EXPECT_FALSE(rail.guard);
  EXPECT_EQ(rail.results.tuned, (std::vector<double>{50.0}));
  ASSERT_EQ(rail.per_size.size(), 1u);
  EXPECT_EQ(rail.per_size[0].algo, "Ring");
  // The peak model knows the world only.
  EXPECT_FALSE(rail.results.peak_busbw_gbps);
  EXPECT_EQ(rail.results.peak_bottleneck, "n/a: the hardware peak is modelled for the world only");
  EXPECT_EQ(describe_section(p.shapes[1]), "node: 1 node x 8 ranks");
  EXPECT_EQ(p.shapes[1].collectives.at("all_reduce").results.baseline, (std::vector<double>{200.0}));
  // It reads back as it was written: a v3 profile the strict reader takes.
  const auto back = parse_profile(profile_to_yaml(p), "p.yaml");
  ASSERT_TRUE(back) << back.error();
  EXPECT_EQ(back->shapes, p.shapes);
}

TEST(ProfileBuilder, AResultOfTheWorldAloneHasNoSections) {
  const Profile p = build_profile(two_dgx_nodes(), two_collectives(), {}, {});
  EXPECT_TRUE(p.shapes.empty());
  EXPECT_EQ(profile_to_yaml(p).rfind("schema: nccltune/profile/v2\n", 0), 0u);
}

TEST(ProfileBuilder, ARangeStartsAtItsSwitchWhoseBracketWasNarrowedBetweenTheMeasuredSizes) {
  // Tree/LL128 won at 1M, Ring/LL128 at 4M; pair mode narrowed the bracket to 1.05M-1.3M and the
  // fits cross at 1.15M: Ring/LL128's range starts there, not at 4M, and still ends at 4M, the
  // largest measured size.
  StrategyResult r;
  r.ops = {{"all_reduce"}, {"all_reduce"}, {"all_reduce"}};
  r.sizes = {256 << 10, 1 << 20, 4 << 20};
  r.baseline_busbw = r.tuned_busbw = {10.0, 20.0, 40.0};
  r.per_size[{"all_reduce"}] = {{256 << 10, 256 << 10, "Tree", "LL128", 0},
                                {1 << 20, 1 << 20, "Tree", "LL128", 0},
                                {4 << 20, 4 << 20, "Ring", "LL128", 0}};
  SizeSwitch s;
  s.lo = 1100000;
  s.hi = 1360000;
  s.bytes = 1150000;
  s.fit = "crossing";
  s.below = "Tree/LL128";
  s.above = "Ring/LL128";
  r.switches[{"all_reduce"}] = {s};
  const Profile p = build_profile(two_dgx_nodes(), r, {}, {});
  const CollectiveProfile& ar = p.collectives.at("all_reduce");
  ASSERT_EQ(ar.per_size.size(), 2u);
  EXPECT_EQ(ar.per_size[0].algo + "/" + ar.per_size[0].proto, "Tree/LL128");
  EXPECT_EQ(ar.per_size[0].max_bytes, 1149999u);
  EXPECT_EQ(ar.per_size[1].algo + "/" + ar.per_size[1].proto, "Ring/LL128");
  EXPECT_EQ(ar.per_size[1].min_bytes, 1150000u);
  EXPECT_EQ(ar.per_size[1].max_bytes, 4u << 20);
  EXPECT_EQ(ar.switches, std::vector<SizeSwitch>{s});
}

}  // namespace
}  // namespace nccltune
