// The one check of what a profile serves to jobs (served_env_problem), as every reader applies it:
// the names of NCCL's variables (by the profile's NCCL version), NCCL_ALGO / NCCL_PROTO lists as
// NCCL parses them, and the values; the whole parse and the parse for jobs refuse alike.
#include <gtest/gtest.h>

#include <string>

#include "profile/env_names.h"
#include "profile/nccl_names.h"
#include "profile/profile.h"

using namespace nccltune;

namespace {

const std::string kServedHead =
    "schema: nccltune/profile/v2\n"
    "shape: {key: \"h100.8gpu.nccl2.28\", nodes: 2, gpus_per_node: 8, nccl_version: \"2.28.9\"}\n";

// The error both reads give `text` (one line, naming the file), which must be the same.
std::string refusal(const std::string& text) {
  Result<Profile> whole = parse_profile(text, "2n.yaml");
  Result<Profile> lean = parse_profile(text, "2n.yaml", ProfileParts::for_jobs);
  EXPECT_FALSE(whole.ok()) << text;
  EXPECT_FALSE(lean.ok()) << text;
  if (whole.ok() || lean.ok()) return {};
  EXPECT_EQ(lean.error(), whole.error());
  EXPECT_EQ(whole.error().find('\n'), std::string::npos) << whole.error();
  return whole.error();
}

}  // namespace

TEST(ServedEnv, KnownVariablesByNcclVersion) {
  EXPECT_TRUE(is_known_nccl_variable("NCCL_MIN_NCHANNELS"));
  EXPECT_TRUE(is_known_nccl_variable("NCCL_ALGO", 22809));
  EXPECT_FALSE(is_known_nccl_variable("NCCL_MIN_NCHANELS"));
  EXPECT_FALSE(is_known_nccl_variable("NCCL_LL_THRESHOLD"));  // gone long before 2.18
  EXPECT_FALSE(is_known_nccl_variable("nccl_algo"));
  // NCCL_CTA_POLICY came with 2.27, NCCL_NETDEVS_POLICY with 2.28.
  EXPECT_TRUE(is_known_nccl_variable("NCCL_CTA_POLICY", 22703));
  EXPECT_FALSE(is_known_nccl_variable("NCCL_CTA_POLICY", 22605));
  EXPECT_TRUE(is_known_nccl_variable("NCCL_NETDEVS_POLICY", 22809));
  EXPECT_FALSE(is_known_nccl_variable("NCCL_NETDEVS_POLICY", 22304));
  // A release the table does not cover: any name it knows.
  EXPECT_TRUE(is_known_nccl_variable("NCCL_NETDEVS_POLICY", 23500));
  EXPECT_TRUE(is_known_nccl_variable("NCCL_NETDEVS_POLICY", 0));
}

TEST(ServedEnv, ProfileNcclVersion) {
  EXPECT_EQ(profile_nccl_version("2.28.9", "x.nccl2.24"), 22809);
  EXPECT_EQ(profile_nccl_version("", "h100.8gpu.nvswitch.nccl2.24"), 22400);
  EXPECT_EQ(profile_nccl_version("", "h100.8gpu"), 0);
  EXPECT_EQ(profile_nccl_version("two", "x.nccl2.24"), 0);
}

TEST(ServedEnv, ListsAsNcclParsesThem) {
  EXPECT_EQ(nccl_list_problem("NCCL_ALGO", "Ring,Tree"), std::nullopt);
  EXPECT_EQ(nccl_list_problem("NCCL_ALGO", "^NVLS"), std::nullopt);
  EXPECT_EQ(nccl_list_problem("NCCL_ALGO", "allgather:Ring;reducescatter:Ring;allreduce:Tree,Ring"), std::nullopt);
  EXPECT_EQ(nccl_list_problem("NCCL_PROTO", "Simple;AllReduce:^LL", 22809), std::nullopt);
  EXPECT_TRUE(nccl_list_problem("NCCL_ALGO", "Rign"));
  EXPECT_TRUE(nccl_list_problem("NCCL_ALGO", "allreduce:Rign"));  // no ';': still a scoped list
  EXPECT_TRUE(nccl_list_problem("NCCL_ALGO", "allgather:Rign;allreduce:Ring"));
  EXPECT_TRUE(nccl_list_problem("NCCL_ALGO", "allreduce:Ring;Tree"));  // a plain entry after the first
  EXPECT_TRUE(nccl_list_problem("NCCL_ALGO", "alltoall:Ring"));
  EXPECT_TRUE(nccl_list_problem("NCCL_ALGO", "allreduce:Ring;allreduce:Tree"));
  EXPECT_TRUE(nccl_list_problem("NCCL_ALGO", "allreduce:Ring;"));
  EXPECT_TRUE(nccl_list_problem("NCCL_ALGO", "allreduce:"));
  EXPECT_TRUE(nccl_list_problem("NCCL_ALGO", ":Ring"));
  EXPECT_TRUE(nccl_list_problem("NCCL_ALGO", "allreduce:Ring:Tree"));
  EXPECT_TRUE(nccl_list_problem("NCCL_PROTO", "allreduce:Ring"));
  EXPECT_TRUE(nccl_list_problem("NCCL_ALGO", "Ring,,Tree"));
  // NCCL before 2.24 reads no per-function lists.
  EXPECT_TRUE(nccl_list_problem("NCCL_ALGO", "allreduce:Ring", 22304));
  EXPECT_EQ(nccl_list_problem("NCCL_ALGO", "Ring", 22304), std::nullopt);
}

TEST(ServedEnv, ServedEnvProblem) {
  EXPECT_EQ(served_env_problem("NCCL_MIN_NCHANNELS", "32", 22809), std::nullopt);
  EXPECT_EQ(served_env_problem("NCCL_MIN_NCHANELS", "32", 22809).value_or(""),
            "'NCCL_MIN_NCHANELS' is no variable NCCL reads (a misspelled name?)");
  EXPECT_EQ(served_env_problem("NCCL_NETDEVS_POLICY", "AUTO", 22605).value_or(""),
            "'NCCL_NETDEVS_POLICY' is no variable NCCL 2.26 reads (a misspelled name?)");
  EXPECT_TRUE(served_env_problem("NCCL_MIN_NCHANNELS", "3two", 22809));
  EXPECT_TRUE(served_env_problem("NCCL_ALGO", "Rign", 22809));
  EXPECT_TRUE(served_env_problem("LD_PRELOAD", "x", 22809));
}

TEST(ServedEnv, MisspelledAlgorithmIsRefusedByEveryRead) {
  EXPECT_EQ(refusal(kServedHead + "env:\n  NCCL_ALGO: \"Rign\"\n"),
            "2n.yaml:4: env.NCCL_ALGO: 'Rign' is not a valid NCCL_ALGO value (a list of Tree, Ring, "
            "CollNetDirect, CollNetChain, NVLS, NVLSTree, PAT, optionally after ^)");
  EXPECT_NE(refusal(kServedHead + "env:\n  NCCL_ALGO: \"allgather:Rign;reducescatter:Ring\"\n")
                .rfind("2n.yaml:4: env.NCCL_ALGO: 'allgather:Rign;reducescatter:Ring': ", 0),
            std::string::npos);
  EXPECT_NE(refusal(kServedHead + "env:\n  NCCL_PROTO: \"allreduce:LL;broadcast:Simple;LL128\"\n")
                .find("without a function after the first"),
            std::string::npos);
}

TEST(ServedEnv, UnknownVariableIsRefusedByEveryRead) {
  EXPECT_EQ(refusal(kServedHead + "env:\n  NCCL_MIN_NCHANELS: \"32\"\n"),
            "2n.yaml:4: env.NCCL_MIN_NCHANELS: 'NCCL_MIN_NCHANELS' is no variable NCCL reads (a "
            "misspelled name?)");
  // Known to NCCL, but not to the one the profile was tuned with.
  EXPECT_EQ(refusal("schema: nccltune/profile/v2\nshape: {key: \"h100.nccl2.26\", nodes: 1}\nenv:\n"
                    "  NCCL_NETDEVS_POLICY: AUTO\n"),
            "2n.yaml:4: env.NCCL_NETDEVS_POLICY: 'NCCL_NETDEVS_POLICY' is no variable NCCL 2.26 reads (a "
            "misspelled name?)");
  // withheld is served too (the plugin may apply it).
  EXPECT_NE(refusal("schema: nccltune/profile/v3\nshape: {key: k, nodes: 1, gpus_per_node: 8}\nenv: {}\n"
                    "withheld:\n  - {env: {NCCL_PROTOCOL: LL}, why: x}\n"
                    "communicators:\n  - {nodes: 1, ranks_per_node: 8, role: world}\n")
                .find("'NCCL_PROTOCOL' is no variable NCCL reads"),
            std::string::npos);
}

TEST(ServedEnv, FailedTrialsKeepWhatWasTried) {
  // A failed trial's env is not served: what NCCL refused may be recorded there.
  EXPECT_TRUE(parse_profile(kServedHead + "env: {}\nfailed:\n  - {env: {NCCL_ALGO: Rign}, outcome: init_error}\n",
                            "2n.yaml")
                  .ok());
}
