// nccl-tests logs as people keep them in 2025-26: a shell session's prompt and a script's echo
// around the command, a head cut off, NCCL's INFO lines in between.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "collectives/nccl_tests_log.h"
#include "nccl_tests_fixtures.h"

using namespace nccltune;
using nccltune::test_support::has_note;
using nccltune::test_support::read_nccl_tests_fixture;

namespace {

NcclTestsLog read_shell_fixture(const std::string& name) {
  Result<NcclTestsLog> log = read_nccl_tests_log(read_nccl_tests_fixture(name), name);
  EXPECT_TRUE(log.ok()) << log.error();
  return log.ok() ? log.value() : NcclTestsLog{};
}

}  // namespace

TEST(NcclTestsLogShell, PromptIsNotPartOfTheCommandAndAnEchoIsNotTheCommand) {
  const NcclTestsLog log = read_shell_fixture("all-reduce-prompt-echo-session.txt");
  const std::vector<std::string> argv = {"mpirun", "-np", "2", "/opt/nccl-tests/build/all_reduce_perf",
                                         "-b",     "8",   "-e", "1G",
                                         "-f",     "2",   "-g", "1"};
  EXPECT_EQ(log.bench.context.argv, argv);
  EXPECT_EQ(log.bench.ranks, 2);  // mpirun -np 2, read once the prompt is gone
  EXPECT_TRUE(has_note(log, "ranks 2 from the command line"));
  EXPECT_EQ(log.bench.op, "all_reduce");
  EXPECT_FALSE(log.op_assumed);
}

TEST(NcclTestsLogShell, ShellTraceAndPromptWordsAreDropped) {
  const std::string table =
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   "
      "busbw #wrong\n"
      "     1048576        262144     float     sum      -1    272.8    3.84    3.84      0    272.6    3.85    "
      "3.85      0\n";
  for (const std::string prompt : {"+ ", "++ ", "$ ", "[ubuntu@gpu-01 nccl-tests]$ ", "(venv) user@host:~/nccl-tests$ "}) {
    const Result<NcclTestsLog> log =
        read_nccl_tests_log(prompt + "mpirun -np 4 ./build/all_gather_perf -b 1M -e 1M\n" + table, "session");
    ASSERT_TRUE(log.ok()) << prompt;
    ASSERT_FALSE(log->bench.context.argv.empty()) << prompt;
    EXPECT_EQ(log->bench.context.argv.front(), "mpirun") << prompt;
    EXPECT_EQ(log->bench.op, "all_gather") << prompt;
    EXPECT_EQ(log->bench.ranks, 4) << prompt;
  }
  // The words of a sentence before the program are not a command: no argv, and the op is assumed.
  const Result<NcclTestsLog> echoed =
      read_nccl_tests_log("Running ./build/all_gather_perf on 4 GPUs\n" + table, "echo");
  ASSERT_TRUE(echoed.ok());
  EXPECT_TRUE(echoed->bench.context.argv.empty());
  EXPECT_TRUE(echoed->op_assumed);
}

TEST(NcclTestsLogShell, ConcludedLineNamesTheOpWhenTheHeadIsCutOff) {
  const NcclTestsLog log = read_shell_fixture("all-reduce-2.29.2-g7e-head-cut.txt");
  EXPECT_EQ(log.bench.op, "all_reduce");
  EXPECT_FALSE(log.op_assumed);  // "# Collective test concluded: all_reduce_perf" says it
  EXPECT_FALSE(has_note(log, "op all_reduce assumed"));
  EXPECT_EQ(log.bench.rows.size(), 28u);
  EXPECT_EQ(log.bench.avg_busbw, 4.26966);
}

TEST(NcclTestsLogShell, CudaDriverVersionFromNcclInfoLine) {
  const NcclTestsLog log = read_shell_fixture("all-reduce-2.29.2-g7e-efa-info-lines.txt");
  EXPECT_EQ(log.bench.context.cuda_driver, "12.8");  // "NCCL INFO cudaDriverVersion 12080"
  EXPECT_EQ(log.bench.context.nccl_version, "2.29.2");
  EXPECT_EQ(log.bench.ranks, 2);
  EXPECT_EQ(log.bench.nodes, 2);
  EXPECT_EQ(log.bench.rows.size(), 28u);
}

TEST(NcclTestsLogShell, RankCountFromTheTunerPluginsInitLine) {
  const NcclTestsLog log = read_shell_fixture("all-reduce-example-tuner-init-head-cut.txt");
  EXPECT_EQ(log.bench.ranks, 2);
  EXPECT_EQ(log.bench.nodes, 2);
  EXPECT_TRUE(has_note(log, "from the tuner plugin's 'Initializing tuner for 2 nodes, 2 ranks' line"));
  EXPECT_TRUE(check_bus_bandwidth(log.bench, log.time_step_us).empty());  // 2 ranks is what the busbw says
  // The pre-2.28 words, without the NVL domains.
  const Result<NcclTestsLog> older = read_nccl_tests_log(
      "host:1:2 [0] NCCL INFO Initializing tuner for 4 nodes, 32 ranks \n"
      "#       size         count      type   redop    root     time   algbw   busbw #wrong\n"
      "     1048576        262144     float     sum      -1    272.8    3.84    7.44      0\n",
      "older");
  ASSERT_TRUE(older.ok());
  EXPECT_EQ(older->bench.ranks, 32);
  EXPECT_EQ(older->bench.nodes, 4);
}
