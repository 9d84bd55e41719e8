#include "daemon/daemon_config.h"

#include <gtest/gtest.h>

#include <string>

#include "test_files.h"

using namespace nccltune;
using namespace std::chrono_literals;
using nccltune::test_support::fixture;

namespace {

std::string error_of(const std::string& yaml) {
  const auto config = parse_daemon_config(yaml, "/etc/nccltune/nccltune.yaml");
  EXPECT_FALSE(config) << yaml;
  return config ? std::string() : config.error();
}

}  // namespace

TEST(DaemonConfig, EmptyOrMissingGivesTheDefaults) {
  EXPECT_EQ(*parse_daemon_config("", "f"), DaemonConfig{});
  EXPECT_EQ(*parse_daemon_config("env:\n  store: /x\n", "f"), DaemonConfig{});
  const auto missing = read_node_config_text("/nonexistent/nccltune.yaml");
  ASSERT_TRUE(missing) << missing.error();
  EXPECT_EQ(*missing, "");
}

TEST(DaemonConfig, AConfigThatIsNotAFileIsAnErrorNamingIt) {
  const std::string not_a_file = fixture("nodes").string();
  const auto directory = read_node_config_text(not_a_file);
  ASSERT_FALSE(directory);
  EXPECT_EQ(directory.error(), not_a_file + ": is a directory, not a regular file");
}

TEST(DaemonConfig, ReadsEveryKey) {
  const auto config = parse_daemon_config(R"(
env:
  store: /srv/profiles
  whatever_env_reads: 1
daemon:
  interval: 1h30m
  runtime_dir: /run/x
  state_dir: /var/lib/x
  metrics_dir: ""
  nccl_conf: {manage: true, path: /etc/nccl-test.conf}
  expect: /etc/nccltune/expect.yaml
  fleet_survey: /shared/nccltune/fleet.json
  inspector: {dir: /var/lib/node_exporter/nccl_inspector, drift_ratio: 0.8, drift_intervals: 5}
  nvml_lib: /opt/libnvidia-ml.so.1
  nccl_lib: /opt/torch/lib/libnccl.so.2
  cuda_lib: libcuda.so.1
)",
                                          "f");
  ASSERT_TRUE(config) << config.error();
  EXPECT_EQ(config->interval, 90min);
  EXPECT_EQ(config->runtime_dir, "/run/x");
  EXPECT_EQ(config->state_dir, "/var/lib/x");
  EXPECT_TRUE(config->metrics_dir.empty());
  EXPECT_TRUE(config->manage_nccl_conf);
  EXPECT_EQ(config->nccl_conf, "/etc/nccl-test.conf");
  EXPECT_EQ(config->expect, "/etc/nccltune/expect.yaml");
  EXPECT_EQ(config->fleet_survey, "/shared/nccltune/fleet.json");
  EXPECT_EQ(config->inspector_dir, "/var/lib/node_exporter/nccl_inspector");
  EXPECT_DOUBLE_EQ(config->inspector_drift_ratio, 0.8);
  EXPECT_EQ(config->inspector_drift_intervals, 5);
  EXPECT_EQ(config->nvml_lib, "/opt/libnvidia-ml.so.1");
  EXPECT_EQ(config->nccl_lib, "/opt/torch/lib/libnccl.so.2");
}

TEST(DaemonConfig, ErrorsNameTheFileTheLineAndTheKey) {
  EXPECT_EQ(error_of("daemon:\n  interval: 5m\n  intervall: 6m\n"),
            "/etc/nccltune/nccltune.yaml:3: daemon: unknown key 'intervall'");
  EXPECT_EQ(
      error_of("daemon:\n  interval: soon\n"),
      "/etc/nccltune/nccltune.yaml:2: daemon.interval: 'soon' is not a duration such as 90s, 5m or 1h30m");
  EXPECT_EQ(error_of("daemon:\n  runtime_dir: run/nccltune\n"),
            "/etc/nccltune/nccltune.yaml:2: daemon.runtime_dir: must be an absolute path");
  EXPECT_EQ(error_of("daemon:\n  fleet_survey: shared/fleet.json\n"),
            "/etc/nccltune/nccltune.yaml:2: daemon.fleet_survey: must be an absolute path");
  EXPECT_EQ(error_of("daemon:\n  nccl_conf: {manage: yes}\n"),
            "/etc/nccltune/nccltune.yaml:2: daemon.nccl_conf.manage: must be true or false");
  EXPECT_EQ(error_of("daemon:\n  nccl_conf: {manage: true, mode: 644}\n"),
            "/etc/nccltune/nccltune.yaml:2: daemon.nccl_conf: unknown key 'mode'");
  EXPECT_EQ(error_of("daemon:\n  inspector: {dir: nccl_inspector}\n"),
            "/etc/nccltune/nccltune.yaml:2: daemon.inspector.dir: must be an absolute path");
  EXPECT_EQ(error_of("daemon:\n  inspector: {drift_ratio: 1.5}\n"),
            "/etc/nccltune/nccltune.yaml:2: daemon.inspector.drift_ratio: must be in (0, 1]");
  EXPECT_EQ(error_of("daemon:\n  inspector: {dir: /x, interval: 5}\n"),
            "/etc/nccltune/nccltune.yaml:2: daemon.inspector: unknown key 'interval'");
  EXPECT_NE(error_of("daemon:\n  inspector: {drift_intervals: 0}\n").find("daemon.inspector.drift_intervals"),
            std::string::npos);
  EXPECT_EQ(error_of("deamon:\n  interval: 5m\n"), "/etc/nccltune/nccltune.yaml:1: unknown key 'deamon'");
  EXPECT_EQ(error_of("daemon: 5m\n"), "/etc/nccltune/nccltune.yaml:1: daemon: must be a map");
  EXPECT_NE(error_of("daemon: [\n").find("/etc/nccltune/nccltune.yaml:"), std::string::npos);
}

TEST(DaemonConfig, TheShippedConfigDocumentsTheDefaults) {
  const std::string file = fixture("../../configs/nccltune.yaml").string();
  const auto text = read_node_config_text(file);
  ASSERT_TRUE(text) << text.error();
  const auto config = parse_daemon_config(*text, file);
  ASSERT_TRUE(config) << config.error();
  EXPECT_EQ(*config, DaemonConfig{});
  EXPECT_EQ(config->metrics_dir, "/var/lib/prometheus/node-exporter");  // Debian's node exporter
  EXPECT_TRUE(config->fleet_survey.empty());
  EXPECT_TRUE(config->inspector_dir.empty());  // Inspector is off unless switched on
}

TEST(DaemonConfig, Intervals) {
  EXPECT_EQ(*parse_interval("90s"), 90s);
  EXPECT_EQ(*parse_interval("5m"), 5min);
  EXPECT_EQ(*parse_interval("1h30m"), 90min);
  EXPECT_EQ(*parse_interval("24h"), 24h);
  for (const char* bad : {"", "5", "m", "5x", "-5m", "0s", "25h", "1h 5m", "5m30"})
    EXPECT_FALSE(parse_interval(bad)) << bad;
}
