// The job's shape from flags or Slurm's environment, and which profiles fit it.
#include "node/job_shape.h"

#include <gtest/gtest.h>

using namespace nccltune;

namespace {

using Environment = std::map<std::string, std::string>;

JobShape shape_of(const JobShapeFlags& flags, const Environment& environment) {
  const Result<JobShape> job = job_shape(flags, environment);
  EXPECT_TRUE(job.ok()) << job.error();
  return job.ok() ? *job : JobShape{};
}

std::string error_of(const JobShapeFlags& flags, const Environment& environment) {
  const Result<JobShape> job = job_shape(flags, environment);
  EXPECT_FALSE(job.ok());
  return job.ok() ? std::string() : job.error();
}

}  // namespace

TEST(JobShape, FromSlurm) {
  EXPECT_EQ(shape_of({}, {{"SLURM_JOB_NUM_NODES", "4"}, {"SLURM_GPUS_ON_NODE", "8"}}), (JobShape{4, 8}));
  // Without GPUs in the allocation, tasks per node stand for ranks per node.
  EXPECT_EQ(shape_of({}, {{"SLURM_JOB_NUM_NODES", "2"}, {"SLURM_NTASKS_PER_NODE", "4"}}), (JobShape{2, 4}));
  EXPECT_EQ(
      shape_of({},
               {{"SLURM_JOB_NUM_NODES", "2"}, {"SLURM_GPUS_ON_NODE", "8"}, {"SLURM_NTASKS_PER_NODE", "1"}}),
      (JobShape{2, 8}));
  EXPECT_EQ(shape_of({}, {{"SLURM_JOB_NUM_NODES", "16"}}), (JobShape{16, std::nullopt}));
  EXPECT_EQ(shape_of({}, {{"SLURM_JOB_NUM_NODES", "1"}, {"SLURM_GPUS_ON_NODE", "0"}}), (JobShape{1, 0}));
}

TEST(JobShape, FlagsWin) {
  const Environment slurm = {{"SLURM_JOB_NUM_NODES", "4"}, {"SLURM_GPUS_ON_NODE", "8"}};
  EXPECT_EQ(shape_of({"2", std::nullopt}, slurm), (JobShape{2, 8}));
  EXPECT_EQ(shape_of({std::nullopt, "4"}, slurm), (JobShape{4, 4}));
  EXPECT_EQ(shape_of({"3", "2"}, {}), (JobShape{3, 2}));
}

TEST(JobShape, ErrorsNameTheSource) {
  EXPECT_NE(error_of({}, {}).find("--nodes"), std::string::npos);
  EXPECT_NE(error_of({}, {{"SLURM_JOB_NUM_NODES", "2(x3)"}}).find("SLURM_JOB_NUM_NODES"), std::string::npos);
  EXPECT_NE(error_of({"0", std::nullopt}, {}).find("--nodes"), std::string::npos);
  EXPECT_NE(error_of({"-2", std::nullopt}, {}).find("--nodes"), std::string::npos);
  EXPECT_NE(error_of({"2", "0"}, {}).find("--gpus-per-node"), std::string::npos);
  EXPECT_NE(error_of({"2", " 8"}, {}).find("--gpus-per-node"), std::string::npos);
  EXPECT_NE(error_of({"2", std::nullopt}, {{"SLURM_GPUS_ON_NODE", "8;rm"}}).find("SLURM_GPUS_ON_NODE"),
            std::string::npos);
  EXPECT_NE(error_of({"2", std::nullopt}, {{"SLURM_NTASKS_PER_NODE", "0"}}).find("SLURM_NTASKS_PER_NODE"),
            std::string::npos);
  EXPECT_NE(error_of({"99999999999", std::nullopt}, {}).find("--nodes"), std::string::npos);
}

TEST(ProfileFitsJob, SameRanksPerNodeOrUnknown) {
  ProfileShape shape;
  shape.gpus_per_node = 8;
  EXPECT_TRUE(profile_fits_job(shape, {2, 8}));
  EXPECT_TRUE(profile_fits_job(shape, {2, std::nullopt}));
  EXPECT_FALSE(profile_fits_job(shape, {2, 4}));
  EXPECT_FALSE(profile_fits_job(shape, {2, 0}));
}
