// Rendering a profile's env: each format's exact text, NCCL's per-collective syntax from 2.24, and
// names or values that must never reach a shell or an env file.
#include "node/env_format.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

using namespace nccltune;

namespace {

Profile sample(const std::string& nccl_version = "2.28.9") {
  Profile profile;
  profile.shape.node_type_key = "h100-80gb-hbm3.8gpu.nvswitch.8xib400.pix.nccl2.28";
  profile.shape.nodes = 2;
  profile.shape.gpus_per_node = 8;
  profile.shape.ranks = 16;
  profile.shape.nccl_version = nccl_version;
  profile.env = {{"NCCL_NVLS_ENABLE", "1"}, {"NCCL_ALGO", "NVLS,Tree"}, {"NCCL_PROTO", "^LL128"}};
  profile.collectives["all_reduce"].per_size = {{0, 65536, "Tree", "LL", 0},
                                                {65537, 16777216, "Ring", "LL128", 0},
                                                {16777217, 17179869184, "NVLS", "Simple", 24}};
  return profile;
}

std::string rendered(const Profile& profile, EnvFormat format, const std::vector<std::string>& allow = {}) {
  const EnvEmission emission = render_env(profile, format, allow);
  EXPECT_TRUE(emission.warnings.empty()) << emission.warnings.front();
  return emission.text;
}

}  // namespace

TEST(EnvFormat, Names) {
  for (const char* name : {"sh", "slurm", "systemd", "nccl-conf", "json", "tuner-csv"}) {
    const auto format = parse_env_format(name);
    ASSERT_TRUE(format.has_value()) << name;
    EXPECT_EQ(to_string(*format), name);
  }
  EXPECT_FALSE(parse_env_format("bash").has_value());
  EXPECT_FALSE(parse_env_format("SH").has_value());
  EXPECT_FALSE(parse_env_format("").has_value());
}

TEST(EnvFormat, EachFormatScopedToAllreduceFromNccl224) {
  const Profile profile = sample("2.28.9");
  EXPECT_EQ(rendered(profile, EnvFormat::sh),
            "export NCCL_ALGO='allreduce:NVLS,Tree'\n"
            "export NCCL_NVLS_ENABLE='1'\n"
            "export NCCL_PROTO='allreduce:^LL128'\n");
  EXPECT_EQ(rendered(profile, EnvFormat::slurm),
            "export NCCL_ALGO=allreduce:NVLS,Tree\n"
            "export NCCL_NVLS_ENABLE=1\n"
            "export NCCL_PROTO=allreduce:^LL128\n");
  const std::string plain =
      "NCCL_ALGO=allreduce:NVLS,Tree\nNCCL_NVLS_ENABLE=1\nNCCL_PROTO=allreduce:^LL128\n";
  EXPECT_EQ(rendered(profile, EnvFormat::systemd), plain);
  EXPECT_EQ(rendered(profile, EnvFormat::nccl_conf), plain);
  const auto json = nlohmann::json::parse(rendered(profile, EnvFormat::json));
  EXPECT_EQ(json.at("env"), nlohmann::json({{"NCCL_ALGO", "allreduce:NVLS,Tree"},
                                            {"NCCL_NVLS_ENABLE", "1"},
                                            {"NCCL_PROTO", "allreduce:^LL128"}}));
}

TEST(EnvFormat, GlobalValuesBeforeNccl224) {
  for (const char* version : {"2.23.4", "2.18", "", "unknown"}) {
    EXPECT_EQ(rendered(sample(version), EnvFormat::slurm),
              "export NCCL_ALGO=NVLS,Tree\nexport NCCL_NVLS_ENABLE=1\nexport NCCL_PROTO=^LL128\n")
        << version;
  }
  EXPECT_EQ(rendered(sample("2.24.3"), EnvFormat::systemd).substr(0, 30), "NCCL_ALGO=allreduce:NVLS,Tree\n");
}

TEST(EnvFormat, AlreadyScopedValuesAreKept) {
  Profile profile = sample();
  profile.env = {{"NCCL_ALGO", "allreduce:Ring"}};
  EXPECT_EQ(rendered(profile, EnvFormat::systemd), "NCCL_ALGO=allreduce:Ring\n");
}

TEST(EnvFormat, NothingToSet) {
  Profile profile = sample();
  profile.env.clear();
  profile.keep_defaults = true;
  for (EnvFormat format : {EnvFormat::sh, EnvFormat::slurm, EnvFormat::systemd, EnvFormat::nccl_conf})
    EXPECT_EQ(rendered(profile, format), "") << to_string(format);
  EXPECT_EQ(rendered(profile, EnvFormat::json), "{\"env\":{},\"profiles\":[],\"withheld\":[],\"kept\":[]}\n");
}

TEST(EnvFormat, UnsafeNamesAndValuesAreDroppedWithAWarning) {
  Profile profile = sample("2.22");
  profile.env = {{"NCCL_OK", "1"},
                 {"LD_PRELOAD", "evil.so"},
                 {"NCCL_X;touch", "1"},
                 {"nccl_lower", "1"},
                 {"NCCL_CMD", "$(touch /tmp/canary)"},
                 {"NCCL_TICK", "`id`"},
                 {"NCCL_QUOTE", "a'b"},
                 {"NCCL_NEWLINE", "1\nexport X=2"},
                 {"NCCL_EMPTY", ""},
                 {"NCCL_LONG", std::string(1025, 'a')},
                 {"NCCL_SPACE", "a b"},
                 {"NCCL_HIGH", "\xc3\xa9"}};
  for (EnvFormat format :
       {EnvFormat::sh, EnvFormat::slurm, EnvFormat::systemd, EnvFormat::nccl_conf, EnvFormat::json}) {
    const EnvEmission emission = render_env(profile, format, {});
    EXPECT_EQ(emission.warnings.size(), 11u) << to_string(format);
    EXPECT_EQ(emission.text.find("touch"), std::string::npos) << emission.text;
    EXPECT_EQ(emission.text.find("LD_PRELOAD"), std::string::npos) << emission.text;
    for (const std::string& warning : emission.warnings)
      EXPECT_EQ(warning.find('\n'), std::string::npos) << warning;
  }
  EXPECT_EQ(render_env(profile, EnvFormat::sh, {}).text, "export NCCL_OK='1'\n");
}

TEST(EnvFormat, AdminAllowedNames) {
  Profile profile = sample("2.22");
  profile.env = {{"UCX_TLS", "rc,sm"}, {"NCCL_DEBUG", "WARN"}};
  const EnvEmission without = render_env(profile, EnvFormat::slurm, {});
  EXPECT_EQ(without.text, "export NCCL_DEBUG=WARN\n");
  ASSERT_EQ(without.warnings.size(), 1u);
  EXPECT_NE(without.warnings[0].find("UCX_TLS"), std::string::npos);
  EXPECT_EQ(rendered(profile, EnvFormat::slurm, {"UCX_TLS"}),
            "export NCCL_DEBUG=WARN\nexport UCX_TLS=rc,sm\n");
  // An allowed name must still be a plain upper-case name, and have a safe value.
  profile.env = {{"UCX_NET_DEVICES", "mlx5_0:1"}, {"bad name", "1"}};
  EXPECT_EQ(render_env(profile, EnvFormat::slurm, {"UCX_NET_DEVICES", "bad name"}).text,
            "export UCX_NET_DEVICES=mlx5_0:1\n");
  profile.env = {{"UCX_TLS", "rc sm"}};
  EXPECT_EQ(render_env(profile, EnvFormat::slurm, {"UCX_TLS"}).text, "");
}

TEST(EnvFormat, DeniedNamesAreNeverEmittedEvenWhenAllowed) {
  Profile profile = sample("2.22");
  const std::vector<std::string> denied = {"NCCL_NET_PLUGIN", "NCCL_TUNER_PLUGIN",    "NCCL_DEBUG_FILE",
                                           "NCCL_TOPO_FILE",  "NCCL_GRAPH_DUMP_FILE", "NCCL_GIN_PLUGIN",
                                           "NCCL_CONF_FILE",  "LD_PRELOAD",           "PATH",
                                           "BASH_ENV",        "GLIBC_TUNABLES",       "IFS"};
  profile.env = {{"NCCL_OK", "1"}};
  for (const std::string& name : denied) profile.env[name] = "x";
  for (EnvFormat format :
       {EnvFormat::sh, EnvFormat::slurm, EnvFormat::systemd, EnvFormat::nccl_conf, EnvFormat::json}) {
    const EnvEmission emission = render_env(profile, format, denied);
    EXPECT_EQ(emission.warnings.size(), denied.size()) << to_string(format);
    for (const std::string& name : denied)
      EXPECT_EQ(emission.text.find(name), std::string::npos) << emission.text;
    EXPECT_NE(emission.text.find("NCCL_OK"), std::string::npos) << emission.text;
  }
  const EnvEmission sh = render_env(profile, EnvFormat::sh, denied);
  EXPECT_EQ(sh.text, "export NCCL_OK='1'\n");
  EXPECT_NE(sh.warnings.front().find("loads code"), std::string::npos) << sh.warnings.front();
}

TEST(EnvFormat, TunerCsvWarnsOnceAboutTheExamplePluginsOneChannel) {
  for (const Profile& profile : {sample(), Profile{}}) {
    const EnvEmission emission = render_env(profile, EnvFormat::tuner_csv, {});
    ASSERT_EQ(emission.warnings.size(), 1u);
    EXPECT_NE(emission.warnings[0].find("on 1 channel"), std::string::npos) << emission.warnings[0];
    EXPECT_NE(emission.warnings[0].find("libnccl-tuner-nccltune.so"), std::string::npos)
        << emission.warnings[0];
  }
  EXPECT_TRUE(render_env(sample(), EnvFormat::sh, {}).warnings.empty());
}

TEST(EnvFormat, TunerCsvFollowsTheExamplePlugin) {
  const EnvEmission emission = render_env(sample(), EnvFormat::tuner_csv, {});
  EXPECT_EQ(emission.warnings.size(), 1u);  // the one-channel warning only
  const std::string& csv = emission.text;
  // collective_type,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks
  const std::string rows =
      "allreduce,0,65536,tree,ll,-1,-1,-1\n"
      "allreduce,65537,16777216,ring,ll128,-1,-1,-1\n"
      "allreduce,16777217,17179869184,nvls,simple,24,-1,-1\n";
  ASSERT_GE(csv.size(), rows.size());
  EXPECT_EQ(csv.substr(csv.size() - rows.size()), rows);
  // Everything before the rows is comments, which the plugin skips.
  for (std::size_t at = 0; at < csv.size() - rows.size(); at = csv.find('\n', at) + 1)
    EXPECT_EQ(csv[at], '#') << csv;
}

TEST(EnvFormat, TunerCsvSkipsWhatThePluginCannotSay) {
  Profile profile = sample();
  profile.collectives["all_reduce"].per_size = {
      {0, 1023, "", "", 0},  // NCCL's own choice: no line, no warning
      {1024, 65535, "NVLSTree", "Simple", 0},
      {65536, 1048575, "Ring,Tree", "LL", 0},  // a list: the plugin takes one name
      {1048576, 2097151, "Ring", "", 0},
      {2097152, 4194303, "CollNetDirect", "simple", 0}};
  const EnvEmission emission = render_env(profile, EnvFormat::tuner_csv, {});
  EXPECT_EQ(emission.warnings.size(), 3u);  // two ranges, and the one-channel warning
  EXPECT_NE(emission.text.find("allreduce,1024,65535,nvls_tree,simple,-1,-1,-1\n"), std::string::npos);
  EXPECT_NE(emission.text.find("allreduce,2097152,4194303,collnet_direct,simple,-1,-1,-1\n"),
            std::string::npos);
  EXPECT_EQ(emission.text.find("allreduce,0,"), std::string::npos);
  EXPECT_EQ(emission.text.find("65536"), std::string::npos);
  EXPECT_EQ(emission.text.find("1048576"), std::string::npos);
}

// The job's own settings win: a name the job's environment sets (even to "") is left out of every
// format and listed in `kept`, with both values, for the one stderr line each.
TEST(EnvFormat, TheJobsOwnValueWinsInEveryFormat) {
  const Profile profile = sample("2.28.9");
  const JobOwnEnv own = {{"NCCL_ALGO", "Ring"}, {"NCCL_PROTO", ""}, {"NCCL_IB_HCA", "mlx5_0"}};
  const EnvOrigin origin{{"/store/k/2n.yaml"}, {}};
  EXPECT_EQ(render_env(profile, EnvFormat::sh, {}, origin, own).text,
            "# nccltune profile: /store/k/2n.yaml\nexport NCCL_NVLS_ENABLE='1'\n");
  EXPECT_EQ(render_env(profile, EnvFormat::slurm, {}, origin, own).text,
            "# nccltune profile: /store/k/2n.yaml\nexport NCCL_NVLS_ENABLE=1\n");
  EXPECT_EQ(render_env(profile, EnvFormat::systemd, {}, origin, own).text, "NCCL_NVLS_ENABLE=1\n");
  EXPECT_EQ(render_env(profile, EnvFormat::nccl_conf, {}, origin, own).text, "NCCL_NVLS_ENABLE=1\n");
  const auto json = nlohmann::json::parse(render_env(profile, EnvFormat::json, {}, origin, own).text);
  EXPECT_EQ(json.at("env"), nlohmann::json({{"NCCL_NVLS_ENABLE", "1"}}));
  EXPECT_EQ(json.at("kept"),
            nlohmann::json::parse(R"([{"name": "NCCL_ALGO", "own": "Ring", "profile": "allreduce:NVLS,Tree"},
                                                        {"name": "NCCL_PROTO", "own": "", "profile": "allreduce:^LL128"}])"));
  // tuner-csv sets no variable: the rows are the same with or without the job's own.
  EXPECT_EQ(render_env(profile, EnvFormat::tuner_csv, {}, origin, own).text,
            render_env(profile, EnvFormat::tuner_csv, {}, origin).text);

  for (EnvFormat format :
       {EnvFormat::sh, EnvFormat::slurm, EnvFormat::systemd, EnvFormat::nccl_conf, EnvFormat::json}) {
    const EnvEmission emission = render_env(profile, format, {}, origin, own);
    ASSERT_EQ(emission.kept.size(), 2u) << to_string(format);
    EXPECT_EQ(emission.kept[0].name, "NCCL_ALGO");
    EXPECT_EQ(emission.kept[0].own_value, "Ring");
    EXPECT_EQ(emission.kept[0].profile_value, "allreduce:NVLS,Tree");
    EXPECT_TRUE(emission.warnings.empty()) << to_string(format);
  }
  // Without the job's own values nothing is kept back.
  EXPECT_TRUE(render_env(profile, EnvFormat::sh, {}, origin).kept.empty());
}

TEST(EnvFormat, KeptLineNamesTheVariableAndBothValuesPrintably) {
  EXPECT_EQ(describe_kept({"NCCL_MIN_NCHANNELS", "8", "32"}),
            "NCCL_MIN_NCHANNELS='8' is set by the job: left as it is, not the profile's '32'");
  // The job's value is whatever its environment holds: shown on one line, never raw.
  const std::string line = describe_kept({"NCCL_ALGO", "a\nexport X=$(id)\x1b[2J", "Ring"});
  EXPECT_EQ(line.find('\n'), std::string::npos) << line;
  EXPECT_EQ(line.find('\x1b'), std::string::npos) << line;
}
