// What `nccltune env` says on stderr when it serves nothing, and when it serves a profile without
// knowing the job's GPUs per node: one line each, naming what it tried for the node type
// (--shape, the node state file, a read of the machine or of --from) and the flag that fixes it.
#include "node/env_grounds.h"

#include <gtest/gtest.h>

#include <string>

using namespace nccltune;

namespace {

const std::string kKey = "h100-80gb-hbm3.8gpu.nvswitch.8xib400.pix.nccl2.28";

NothingServed nothing_for(const NodeTypeAttempt& attempt, const JobShape& job) {
  NothingServed n;
  n.attempt = attempt;
  n.key = kKey;
  n.store = "/shared/profiles";
  n.job = job;
  return n;
}

bool holds(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST(EnvGrounds, EachStepTriedForTheNodeTypeIsNamed) {
  const NodeTypeAttempt shape{kKey, "/run/nccltune/node.yaml", false, ""};
  const NodeTypeAttempt state{"", "/run/nccltune/node.yaml", true, ""};
  const NodeTypeAttempt machine{"", "/run/nccltune/node.yaml", false, ""};
  const NodeTypeAttempt from{"", "/run/nccltune/node.yaml", false, "/snapshots/n1"};
  EXPECT_EQ(describe_node_type_source(shape), "--shape");
  EXPECT_EQ(describe_node_type_source(state), "the node state /run/nccltune/node.yaml");
  EXPECT_EQ(describe_node_type_source(machine), "a read of this machine");
  EXPECT_EQ(describe_node_type_source(from), "a read of --from /snapshots/n1");
  const std::string login = why_nothing_served(nothing_for(machine, {2, 8}));
  EXPECT_TRUE(
      holds(login, "(no --shape, no node state at /run/nccltune/node.yaml, then a read of this machine)"))
      << login;
  EXPECT_TRUE(holds(why_nothing_served(nothing_for(state, {2, 8})), "(no --shape, from the node state "));
  EXPECT_TRUE(holds(why_nothing_served(nothing_for(from, {2, 8})), "then a read of --from /snapshots/n1)"));
  const std::string unreadable = cannot_work_out_node_type(machine, "no GPU found");
  EXPECT_EQ(unreadable.find('\n'), std::string::npos);
  EXPECT_TRUE(holds(unreadable, "then a read of this machine): no GPU found: pass --shape KEY"))
      << unreadable;
}

TEST(EnvGrounds, TheFlagThatFixesItFollowsTheCause) {
  const NodeTypeAttempt machine{"", "/run/nccltune/node.yaml", false, ""};
  // The store has nothing for this node type (a login node reads a type no tune wrote): --shape,
  // with the types the store holds.
  NothingServed other_type = nothing_for(machine, {2, 8});
  other_type.store_keys = {"a100.8gpu", kKey};
  const std::string type_line = why_nothing_served(other_type);
  EXPECT_TRUE(holds(type_line, "/shared/profiles holds no profile for this node type (it holds a100.8gpu, " +
                                   kKey + "): pass --shape KEY"))
      << type_line;
  // The node type is there, not the count: --nodes, or tune that count.
  NothingServed other_count = nothing_for(machine, {1, 8});
  other_count.stored_counts = {2, 8};
  const std::string count_line = why_nothing_served(other_count);
  EXPECT_TRUE(holds(count_line, "profiles for 2, 8 nodes, none of which serves 1 node")) << count_line;
  EXPECT_TRUE(holds(count_line, "pass --nodes N")) << count_line;
  EXPECT_TRUE(holds(count_line, "nccltune tune --node-counts 1")) << count_line;
  // A profile tuned for other GPUs per node: --gpus-per-node with the profile's.
  NothingServed unfit = nothing_for(machine, {2, 4});
  unfit.stored_counts = {2};
  unfit.unfit_file = "/shared/profiles/" + kKey + "/2n.yaml";
  unfit.unfit_gpus_per_node = 8;
  const std::string unfit_line = why_nothing_served(unfit);
  EXPECT_TRUE(holds(unfit_line, "2n.yaml is tuned for 8 GPUs per node, not 4: pass --gpus-per-node 8"))
      << unfit_line;
  EXPECT_TRUE(holds(why_nothing_served(nothing_for(machine, {2, 0})), "a job without GPUs gets no profile"));
  for (const std::string& line : {type_line, count_line, unfit_line})
    EXPECT_EQ(line.find('\n'), std::string::npos) << line;
}

TEST(EnvGrounds, GpusPerNodeUnknownServesTheProfileAsTunedAndSaysSo) {
  const std::string line = served_with_gpus_per_node_unknown("/s/k/2n.yaml", 8);
  EXPECT_TRUE(holds(line, "no --gpus-per-node, SLURM_GPUS_ON_NODE or SLURM_NTASKS_PER_NODE")) << line;
  EXPECT_TRUE(holds(line, "serving /s/k/2n.yaml as tuned, for 8 GPUs per node")) << line;
  EXPECT_TRUE(holds(line, "pass --gpus-per-node G")) << line;
}
