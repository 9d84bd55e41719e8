// The env: section of /etc/nccltune/nccltune.yaml.
#include "node/env_config.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "test_files.h"

using namespace nccltune;
using nccltune::test_support::fixture;

namespace {

std::string rejection(const std::string& text) {
  const Result<EnvConfig> config = parse_env_config(text, "nccltune.yaml");
  EXPECT_FALSE(config.ok()) << text;
  if (config.ok()) return {};
  EXPECT_EQ(config.error().rfind("nccltune.yaml:", 0), 0u) << config.error();
  EXPECT_EQ(config.error().find('\n'), std::string::npos) << config.error();
  return config.error();
}

}  // namespace

TEST(EnvConfig, Defaults) {
  for (const char* text : {"", "daemon: {interval: 5m}\n", "env:\n", "env: {}\n"}) {
    const Result<EnvConfig> config = parse_env_config(text, "nccltune.yaml");
    ASSERT_TRUE(config.ok()) << config.error();
    EXPECT_EQ(config->store, std::filesystem::path("/shared/nccltune/profiles")) << text;
    EXPECT_TRUE(config->prefer_below);
    EXPECT_TRUE(config->allow_names.empty());
    EXPECT_FALSE(config->nccl_compatible);
  }
}

TEST(EnvConfig, EveryKey) {
  const Result<EnvConfig> config = parse_env_config(
      "env:\n  store: /srv/profiles\n  prefer: above\n  allow_names: [UCX_TLS, NCCL_X, UCX_TLS]\n"
      "daemon:\n  interval: 5m\n  whatever_the_daemon_reads: 1\n",
      "nccltune.yaml");
  ASSERT_TRUE(config.ok()) << config.error();
  EXPECT_EQ(config->store, std::filesystem::path("/srv/profiles"));
  EXPECT_FALSE(config->prefer_below);
  EXPECT_EQ(config->allow_names, (std::vector<std::string>{"UCX_TLS", "NCCL_X"}));
}

TEST(EnvConfig, NcclCompatibleRange) {
  const Result<EnvConfig> range = parse_env_config("env:\n  nccl_compatible: 2.27-2.29\n", "nccltune.yaml");
  ASSERT_TRUE(range.ok()) << range.error();
  ASSERT_TRUE(range->nccl_compatible);
  EXPECT_EQ(range->nccl_compatible->low, 227);
  EXPECT_EQ(range->nccl_compatible->high, 229);
  EXPECT_TRUE(range->nccl_compatible->holds(228));
  EXPECT_FALSE(range->nccl_compatible->holds(230));
  const Result<EnvConfig> one = parse_env_config("env: {nccl_compatible: '2.28'}\n", "nccltune.yaml");
  ASSERT_TRUE(one.ok()) << one.error();
  EXPECT_EQ(one->nccl_compatible->low, 228);
  EXPECT_EQ(one->nccl_compatible->high, 228);
  const Result<EnvConfig> none = parse_env_config("env: {nccl_compatible: ''}\n", "nccltune.yaml");
  ASSERT_TRUE(none.ok()) << none.error();
  EXPECT_FALSE(none->nccl_compatible);
  for (const char* bad :
       {"2.29-2.27", "2", "2.28.9", "two.28", "2.28-", "-2.28", "2.100", "2.28-3.x", "[2.27]"})
    EXPECT_NE(
        rejection(std::string("env:\n  nccl_compatible: ") + bad + "\n").find(":2: env.nccl_compatible"),
        std::string::npos)
        << bad;
}

TEST(EnvConfig, ErrorsNameLineAndField) {
  EXPECT_EQ(rejection("env:\n  store: /srv\n  prefr: below\n"), "nccltune.yaml:3: env: unknown key 'prefr'");
  EXPECT_NE(rejection("env:\n  prefer: sideways\n").find(":2: env.prefer:"), std::string::npos);
  EXPECT_NE(rejection("env:\n  store: relative/dir\n").find(":2: env.store:"), std::string::npos);
  EXPECT_NE(rejection("env:\n  store: [a]\n").find("env.store"), std::string::npos);
  EXPECT_NE(rejection("env:\n  allow_names: [UCX_TLS, 'bad name']\n").find(":2: env.allow_names[1]"),
            std::string::npos);
  EXPECT_NE(rejection("env:\n  allow_names: [lower]\n").find("env.allow_names[0]"), std::string::npos);
  EXPECT_NE(rejection("env:\n  allow_names: UCX_TLS\n").find("env.allow_names"), std::string::npos);
  EXPECT_NE(rejection("env: [1, 2]\n").find("env"), std::string::npos);
  rejection("- just\n- a list\n");
  rejection("env: {store: /a\n");
}

TEST(EnvConfig, DeniedNamesCannotBeAllowed) {
  const std::string error = rejection("env:\n  allow_names: [UCX_TLS, LD_PRELOAD]\n");
  EXPECT_NE(error.find(":2: env.allow_names[1]: 'LD_PRELOAD' loads code"), std::string::npos) << error;
  EXPECT_NE(rejection("env:\n  allow_names: [NCCL_NET_PLUGIN]\n").find("env.allow_names[0]"),
            std::string::npos);
  EXPECT_NE(rejection("env:\n  allow_names: [GLIBC_TUNABLES]\n").find("env.allow_names[0]"),
            std::string::npos);
}

TEST(EnvConfig, TheShippedExampleParses) {
  const auto config = read_env_config(fixture("../../configs/nccltune.yaml"));
  ASSERT_TRUE(config.ok()) << config.error();
  EXPECT_EQ(config->store, std::filesystem::path("/shared/nccltune/profiles"));
  EXPECT_FALSE(config->inspector.enabled()) << "profiling costs jobs time: off as shipped";
  EXPECT_FALSE(config->inspector.every_job);
}

TEST(EnvConfig, MissingFileMeansDefaults) {
  const auto config = read_env_config("/nonexistent/nccltune.yaml");
  ASSERT_TRUE(config.ok()) << config.error();
  EXPECT_TRUE(config->prefer_below);
  const auto directory = read_env_config(std::filesystem::temp_directory_path());
  EXPECT_FALSE(directory.ok());
}
