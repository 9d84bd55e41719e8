// NCCL Inspector for a job that asks: off unless the node config names the plugin; the variables
// Inspector's README gives (plugin, enable, the job's own dump directory; Prometheus output with
// its 30 s interval), each line quoted as its format needs; hostile paths and job ids refused with
// one line naming where they came from.
#include "node/inspector_env.h"

#include <gtest/gtest.h>

#include <string>

#include "node/env_config.h"

using namespace nccltune;

namespace {

InspectorConfig json_inspector() {
  InspectorConfig config;
  config.plugin = "/opt/nccl/libnccl-profiler-inspector.so";
  config.dump_dir = "/shared/inspector";
  return config;
}

std::string inspector_text(const InspectorConfig& config, EnvFormat format,
                           std::string_view job_id = "4242") {
  auto settings = inspector_env(config, job_id, "SLURM_JOB_ID");
  EXPECT_TRUE(settings) << settings.error();
  if (!settings) return "";
  auto text = render_inspector_env(*settings, format);
  EXPECT_TRUE(text) << text.error();
  return text ? *text : "";
}

std::string config_error(const std::string& yaml) {
  const Result<EnvConfig> config = parse_env_config(yaml, "nccltune.yaml");
  EXPECT_FALSE(config.ok()) << yaml;
  if (config.ok()) return "";
  EXPECT_EQ(config.error().find('\n'), std::string::npos);
  return config.error();
}

}  // namespace

TEST(InspectorEnv, IsOffUnlessTheConfigNamesThePlugin) {
  for (const char* yaml : {"", "env:\n", "env: {inspector: }\n", "env:\n  inspector: {plugin: ''}\n"}) {
    const Result<EnvConfig> config = parse_env_config(yaml, "nccltune.yaml");
    ASSERT_TRUE(config.ok()) << config.error();
    EXPECT_FALSE(config->inspector.enabled()) << yaml;
    EXPECT_FALSE(config->inspector.every_job) << yaml;
  }
  auto off = inspector_env(InspectorConfig{}, "1", "SLURM_JOB_ID");
  ASSERT_FALSE(off);
  EXPECT_EQ(off.error(), "env.inspector.plugin: not set in the node config, so Inspector stays off");
}

TEST(InspectorEnv, ReadsEveryKeyOfTheConfig) {
  const Result<EnvConfig> config = parse_env_config(
      "env:\n  inspector:\n    plugin: /opt/nccl/libnccl-profiler-inspector.so\n    dump_dir: "
      "/var/lib/node_exporter/"
      "nccl_inspector\n    output: prometheus\n    interval_s: 60\n    jobs: all\n",
      "nccltune.yaml");
  ASSERT_TRUE(config.ok()) << config.error();
  EXPECT_TRUE(config->inspector.enabled());
  EXPECT_EQ(config->inspector.plugin, "/opt/nccl/libnccl-profiler-inspector.so");
  EXPECT_EQ(config->inspector.dump_dir, "/var/lib/node_exporter/nccl_inspector");
  EXPECT_EQ(config->inspector.output, InspectorOutput::prometheus);
  EXPECT_EQ(config->inspector.interval_s, 60);
  EXPECT_TRUE(config->inspector.every_job);
}

TEST(InspectorEnv, RefusesABadConfigWithTheLineAndTheKey) {
  EXPECT_EQ(
      config_error("env:\n  inspector:\n    plugin: \"/opt/x.so; touch /tmp/canary\"\n    dump_dir: /d\n"),
      "nccltune.yaml:3: env.inspector.plugin: '/opt/x.so; touch /tmp/canary' is not an absolute path of "
      "[A-Za-z0-9_./+-] without a .. part");
  EXPECT_EQ(config_error("env:\n  inspector:\n    plugin: /p.so\n    dump_dir: \"/d/$(id)\"\n"),
            "nccltune.yaml:4: env.inspector.dump_dir: '/d/$(id)' is not an absolute path of [A-Za-z0-9_./+-] "
            "without a .. part");
  EXPECT_NE(config_error("env:\n  inspector:\n    plugin: relative/p.so\n    dump_dir: /d\n")
                .find("env.inspector.plugin: 'relative/p.so' is not an absolute path"),
            std::string::npos);
  EXPECT_NE(config_error("env:\n  inspector:\n    plugin: /p.so\n    dump_dir: /shared/../etc\n")
                .find("env.inspector.dump_dir: '/shared/../etc'"),
            std::string::npos);
  EXPECT_EQ(config_error("env:\n  inspector:\n    plugin: /p.so\n"),
            "nccltune.yaml:3: env.inspector.dump_dir: missing: where the jobs' Inspector files go");
  EXPECT_EQ(config_error("env:\n  inspector:\n    plugin: /p.so\n    dump_dir: /d\n    output: csv\n"),
            "nccltune.yaml:5: env.inspector.output: 'csv' is not json or prometheus");
  EXPECT_EQ(
      config_error("env:\n  inspector:\n    plugin: /p.so\n    dump_dir: /d\n    output: prometheus\n    "
                   "interval_s: 5\n"),
      "nccltune.yaml:6: env.inspector.interval_s: 5 is below Inspector's 30 s minimum for prometheus output");
  EXPECT_EQ(config_error("env:\n  inspector:\n    plugin: /p.so\n    dump_dir: /d\n    jobs: some\n"),
            "nccltune.yaml:5: env.inspector.jobs: 'some' is not opt-in or all");
  EXPECT_NE(config_error("env:\n  inspector:\n    plugin: /p.so\n    dump_dir: /d\n    verbose: 1\n")
                .find("verbose"),
            std::string::npos);
}

TEST(InspectorEnv, GivesTheJobItsOwnDirectoryInEveryEnvFormat) {
  EXPECT_EQ(inspector_text(json_inspector(), EnvFormat::sh),
            "# nccltune inspector: NCCL Inspector on for this job (profiling costs it time)\n"
            "export NCCL_PROFILER_PLUGIN='/opt/nccl/libnccl-profiler-inspector.so'\n"
            "export NCCL_INSPECTOR_ENABLE='1'\n"
            "export NCCL_INSPECTOR_DUMP_DIR='/shared/inspector/4242'\n"
            "export NCCL_INSPECTOR_DUMP_THREAD_INTERVAL_MICROSECONDS='1000000'\n");
  EXPECT_EQ(inspector_text(json_inspector(), EnvFormat::slurm),
            "# nccltune inspector: NCCL Inspector on for this job (profiling costs it time)\n"
            "export NCCL_PROFILER_PLUGIN=/opt/nccl/libnccl-profiler-inspector.so\n"
            "export NCCL_INSPECTOR_ENABLE=1\n"
            "export NCCL_INSPECTOR_DUMP_DIR=/shared/inspector/4242\n"
            "export NCCL_INSPECTOR_DUMP_THREAD_INTERVAL_MICROSECONDS=1000000\n");
  EXPECT_EQ(inspector_text(json_inspector(), EnvFormat::systemd),
            "NCCL_PROFILER_PLUGIN=/opt/nccl/libnccl-profiler-inspector.so\n"
            "NCCL_INSPECTOR_ENABLE=1\n"
            "NCCL_INSPECTOR_DUMP_DIR=/shared/inspector/4242\n"
            "NCCL_INSPECTOR_DUMP_THREAD_INTERVAL_MICROSECONDS=1000000\n");
  InspectorConfig trailing = json_inspector();
  trailing.dump_dir = "/shared/inspector/";
  EXPECT_NE(
      inspector_text(trailing, EnvFormat::systemd).find("NCCL_INSPECTOR_DUMP_DIR=/shared/inspector/4242\n"),
      std::string::npos);
  InspectorConfig periodic = json_inspector();
  periodic.interval_s = 5;
  EXPECT_NE(inspector_text(periodic, EnvFormat::systemd)
                .find("NCCL_INSPECTOR_DUMP_THREAD_INTERVAL_MICROSECONDS=5000000\n"),
            std::string::npos);
  // Without an interval Inspector 2.30.7 writes nothing at all: every second unless set.
  EXPECT_NE(inspector_text(json_inspector(), EnvFormat::systemd)
                .find("NCCL_INSPECTOR_DUMP_THREAD_INTERVAL_MICROSECONDS=1000000\n"),
            std::string::npos);
}

// Prometheus textfiles go where node_exporter reads them, shared by every job (their labels name
// the job), every 30 s: without an interval Inspector would write them at teardown only.
TEST(InspectorEnv, PrometheusOutputGoesToTheDirectoryAsItIsEvery30Seconds) {
  InspectorConfig config = json_inspector();
  config.output = InspectorOutput::prometheus;
  config.dump_dir = "/var/lib/node_exporter/nccl_inspector";
  EXPECT_EQ(inspector_text(config, EnvFormat::systemd, ""),
            "NCCL_PROFILER_PLUGIN=/opt/nccl/libnccl-profiler-inspector.so\n"
            "NCCL_INSPECTOR_ENABLE=1\n"
            "NCCL_INSPECTOR_DUMP_DIR=/var/lib/node_exporter/nccl_inspector\n"
            "NCCL_INSPECTOR_PROM_DUMP=1\n"
            "NCCL_INSPECTOR_DUMP_THREAD_INTERVAL_MICROSECONDS=30000000\n");
  config.interval_s = 120;
  EXPECT_NE(inspector_text(config, EnvFormat::systemd).find("INTERVAL_MICROSECONDS=120000000\n"),
            std::string::npos);
}

TEST(InspectorEnv, RefusesAHostileOrMissingJobId) {
  for (const char* id :
       {"1; touch /tmp/canary", "$(id)", "`id`", "../../etc", "..", ".hidden", "a/b", "a b", "x'y", "1\n2",
        "0123456789012345678901234567890123456789012345678901234567890123456789"}) {
    auto settings = inspector_env(json_inspector(), id, "SLURM_JOB_ID");
    ASSERT_FALSE(settings) << id;
    EXPECT_EQ(settings.error().rfind("SLURM_JOB_ID: '", 0), 0u) << settings.error();
    EXPECT_EQ(settings.error().find('\n'), std::string::npos) << settings.error();
  }
  auto none = inspector_env(json_inspector(), "", "--job-id");
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error(), "--job-id: no job id, so no directory of the job's own for Inspector's files");
  for (const char* id : {"4242", "train-7", "job_1.2"}) EXPECT_TRUE(is_safe_job_id(id)) << id;
}

// A config built in code (not read from a file) is checked again before a line is made.
TEST(InspectorEnv, RefusesAHostilePathFromAnyWhere) {
  for (const char* path : {"/opt/x.so'; touch /tmp/canary; '", "/opt/$(id).so", "/opt/x .so", "/opt/../x.so",
                           "opt/x.so", "/", "/opt/x.so\nexport LD_PRELOAD=/x"}) {
    EXPECT_FALSE(is_safe_inspector_path(path)) << path;
    InspectorConfig config = json_inspector();
    config.plugin = path;
    auto settings = inspector_env(config, "1", "SLURM_JOB_ID");
    ASSERT_FALSE(settings) << path;
    EXPECT_EQ(settings.error().rfind("env.inspector.plugin: '", 0), 0u) << settings.error();
    config = json_inspector();
    config.dump_dir = path;
    settings = inspector_env(config, "1", "SLURM_JOB_ID");
    ASSERT_FALSE(settings) << path;
    EXPECT_EQ(settings.error().rfind("env.inspector.dump_dir: '", 0), 0u) << settings.error();
  }
  EXPECT_TRUE(is_safe_inspector_path("/opt/nccl-2.30.7+cuda12/lib/libnccl-profiler-inspector.so"));
  auto refused = render_inspector_env({{"NCCL_INSPECTOR_DUMP_DIR", "/d/'x'"}}, EnvFormat::sh);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error(), "NCCL_INSPECTOR_DUMP_DIR: '/d/'x'' refused");
}

// Inspector reads its variables with getenv: nccl.conf and JSON cannot give them to it.
TEST(InspectorEnv, OnlyTheFormatsThatSetTheEnvironmentCarryIt) {
  auto settings = inspector_env(json_inspector(), "1", "SLURM_JOB_ID");
  ASSERT_TRUE(settings);
  for (EnvFormat format : {EnvFormat::nccl_conf, EnvFormat::json, EnvFormat::tuner_csv}) {
    auto text = render_inspector_env(*settings, format);
    ASSERT_FALSE(text);
    EXPECT_NE(text.error().find("only sh, slurm and systemd set them"), std::string::npos) << text.error();
  }
}
