// A `corrupt` fault that names NCCL_ALGO / NCCL_PROTO corrupts whenever that pair runs, whoever
// picked it: the environment's lists, NCCL's cost model or a tuner plugin (tests/fake-gpu/README.md).
// A fake that read the names against the environment only would let a plugin force a corrupting
// pair unseen, and the tuner would ship it as a per-size choice.
#include <gtest/gtest.h>

#include <string>

#include "comm_model.h"
#include "fake_model.h"

using namespace nccltune;
using namespace nccltune::fake;

namespace {

FakeModel model_with_faults(const std::string& faults) {
  Result<FakeModel> model = parse_fake_model(
      "schema: nccltune/fake-model/v1\n"
      "algos: {Ring: {LL: {lat_us: 5, busbw_gbps: 10}, Simple: {lat_us: 10, busbw_gbps: 100}},\n"
      "        Tree: {LL128: {lat_us: 8, busbw_gbps: 50}}}\n"
      "default: [{algo: Ring, proto: Simple}]\n"
      "faults:\n" +
          faults,
      "model.yaml");
  EXPECT_TRUE(model.ok()) << model.error();
  return model.ok() ? *model : FakeModel{};
}

CommModel resolve_for(const FakeModel& model, const NcclEnv& env, const std::string& op = "all_reduce") {
  Result<CommModel> comm = resolve_comm_model(model, env, 0, 4, op);
  EXPECT_TRUE(comm.ok()) << comm.error();
  return comm.ok() ? *comm : CommModel{};
}

TEST(PairFaults, ThePairCorruptsWithNothingSet) {
  const FakeModel model =
      model_with_faults("  - {when: {NCCL_ALGO: Tree, NCCL_PROTO: LL128}, fault: corrupt}\n");
  const CommModel comm = resolve_for(model, {});
  EXPECT_TRUE(corrupts(comm, {"Tree", "LL128"}));
  EXPECT_FALSE(corrupts(comm, {"Ring", "Simple"}));
  EXPECT_FALSE(corrupts(comm, {"Ring", "LL"}));
}

TEST(PairFaults, OneNameMatchesEveryPairOfIt) {
  const CommModel comm =
      resolve_for(model_with_faults("  - {when: {NCCL_PROTO: [LL, LL128]}, fault: corrupt}\n"), {});
  EXPECT_TRUE(corrupts(comm, {"Ring", "LL"}));
  EXPECT_TRUE(corrupts(comm, {"Tree", "LL128"}));
  EXPECT_FALSE(corrupts(comm, {"Ring", "Simple"}));
}

TEST(PairFaults, TheRestOfWhenIsReadAgainstTheEnvironment) {
  const FakeModel model =
      model_with_faults("  - {when: {NCCL_ALGO: Tree, NCCL_NET_GDR_LEVEL: SYS}, fault: corrupt}\n");
  EXPECT_FALSE(corrupts(resolve_for(model, {}), {"Tree", "LL128"}));
  EXPECT_TRUE(corrupts(resolve_for(model, {{"NCCL_NET_GDR_LEVEL", "SYS"}}), {"Tree", "LL128"}));
}

TEST(PairFaults, UnsetIsAnEnvironmentCondition) {
  // `null` means "NCCL_PROTO unset": no pair is named, the fault holds at init as before.
  const FakeModel model = model_with_faults("  - {when: {NCCL_PROTO: null}, fault: corrupt}\n");
  EXPECT_TRUE(corrupts(resolve_for(model, {}), {"Ring", "Simple"}));
  EXPECT_FALSE(corrupts(resolve_for(model, {{"NCCL_PROTO", "Simple"}}), {"Ring", "Simple"}));
}

TEST(PairFaults, SendRecvReadsTheEnvironment) {
  // alltoall has no cost table in NCCL: its `when` is the environment's, as before.
  const FakeModel model = model_with_faults("  - {when: {NCCL_PROTO: LL}, fault: corrupt}\n");
  EXPECT_FALSE(corrupts(resolve_for(model, {}, "alltoall"), {"Ring", "LL"}));
  EXPECT_TRUE(corrupts(resolve_for(model, {{"NCCL_PROTO", "LL"}}, "alltoall"), {"Ring", "Simple"}));
}

}  // namespace
