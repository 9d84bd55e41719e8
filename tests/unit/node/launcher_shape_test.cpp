// The job's shape as its launcher says it, for the env plugin: each launcher's variables, their
// order, and the one-line errors that leave a job without a profile.
#include "node/launcher_shape.h"

#include <gtest/gtest.h>

using namespace nccltune;

namespace {

using Environment = std::map<std::string, std::string>;

LauncherShape shape_of(const Environment& environment) {
  const Result<LauncherShape> shape = launcher_shape(environment);
  EXPECT_TRUE(shape.ok()) << shape.error();
  return shape.ok() ? *shape : LauncherShape{};
}

std::string error_of(const Environment& environment) {
  const Result<LauncherShape> shape = launcher_shape(environment);
  EXPECT_FALSE(shape.ok());
  return shape.ok() ? std::string() : shape.error();
}

}  // namespace

TEST(LauncherShape, EachLauncher) {
  const LauncherShape torchrun = shape_of({{"WORLD_SIZE", "16"}, {"LOCAL_WORLD_SIZE", "8"}});
  EXPECT_EQ(torchrun.job, (JobShape{2, 8}));
  EXPECT_EQ(torchrun.source, "torchrun");
  const LauncherShape ompi = shape_of({{"OMPI_COMM_WORLD_SIZE", "32"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "4"}});
  EXPECT_EQ(ompi.job, (JobShape{8, 4}));
  EXPECT_EQ(ompi.source, "Open MPI");
  const LauncherShape pmi = shape_of({{"PMI_SIZE", "8"}, {"MPI_LOCALNRANKS", "8"}});
  EXPECT_EQ(pmi.job, (JobShape{1, 8}));
  EXPECT_EQ(pmi.source, "PMI");
  const LauncherShape slurm = shape_of({{"SLURM_JOB_NUM_NODES", "4"}, {"SLURM_GPUS_ON_NODE", "8"}});
  EXPECT_EQ(slurm.job, (JobShape{4, 8}));
  EXPECT_EQ(slurm.source, "Slurm");
  const LauncherShape own = shape_of({{"NCCLTUNE_NODES", "3"}, {"NCCLTUNE_GPUS_PER_NODE", "2"}});
  EXPECT_EQ(own.job, (JobShape{3, 2}));
  EXPECT_EQ(own.source, "NCCLTUNE_NODES");
  // Nodes alone: the ranks per node stay unknown (every profile of that count fits).
  EXPECT_EQ(shape_of({{"NCCLTUNE_NODES", "2"}}).job, (JobShape{2, std::nullopt}));
}

TEST(LauncherShape, FirstLauncherInOrderWins) {
  // torchrun under Slurm (srun torchrun ...): Slurm's allocation says the nodes.
  Environment both = {{"SLURM_JOB_NUM_NODES", "2"},
                      {"SLURM_NTASKS_PER_NODE", "1"},
                      {"WORLD_SIZE", "16"},
                      {"LOCAL_WORLD_SIZE", "8"}};
  EXPECT_EQ(shape_of(both).source, "Slurm");
  both["NCCLTUNE_NODES"] = "2";
  both["NCCLTUNE_GPUS_PER_NODE"] = "8";
  EXPECT_EQ(shape_of(both).job, (JobShape{2, 8}));
  EXPECT_EQ(shape_of(both).source, "NCCLTUNE_NODES");
  // torchrun started by mpirun: torchrun's own variables come first.
  EXPECT_EQ(shape_of({{"WORLD_SIZE", "4"},
                      {"LOCAL_WORLD_SIZE", "2"},
                      {"OMPI_COMM_WORLD_SIZE", "2"},
                      {"OMPI_COMM_WORLD_LOCAL_SIZE", "1"}})
                .source,
            "torchrun");
  // One of a pair is not a launcher: the next one answers.
  EXPECT_EQ(shape_of({{"WORLD_SIZE", "4"}, {"PMI_SIZE", "8"}, {"MPI_LOCALNRANKS", "4"}}).job,
            (JobShape{2, 4}));
}

TEST(LauncherShape, ErrorsSayWhy) {
  EXPECT_NE(error_of({}).find("no launcher"), std::string::npos);
  EXPECT_NE(error_of({{"WORLD_SIZE", "12"}, {"LOCAL_WORLD_SIZE", "8"}})
                .find("WORLD_SIZE=12 is not a multiple of LOCAL_WORLD_SIZE=8"),
            std::string::npos);
  EXPECT_NE(error_of({{"WORLD_SIZE", "0"}, {"LOCAL_WORLD_SIZE", "8"}}).find("WORLD_SIZE"), std::string::npos);
  EXPECT_NE(error_of({{"OMPI_COMM_WORLD_SIZE", "8"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "x"}})
                .find("OMPI_COMM_WORLD_LOCAL_SIZE"),
            std::string::npos);
  EXPECT_NE(error_of({{"NCCLTUNE_NODES", "two"}}).find("NCCLTUNE_NODES"), std::string::npos);
  EXPECT_NE(
      error_of({{"NCCLTUNE_NODES", "2"}, {"NCCLTUNE_GPUS_PER_NODE", "-8"}}).find("NCCLTUNE_GPUS_PER_NODE"),
      std::string::npos);
  EXPECT_NE(error_of({{"SLURM_JOB_NUM_NODES", "2(x3)"}}).find("SLURM_JOB_NUM_NODES"), std::string::npos);
  EXPECT_NE(error_of({{"PMI_SIZE", "99999999999"}, {"MPI_LOCALNRANKS", "1"}}).find("PMI_SIZE"),
            std::string::npos);
}
