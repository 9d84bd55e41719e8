#include "collectives/size_sweep.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "collectives/cuda_driver.h"
#include "collectives/nccl_library.h"
#include "comm_model.h"
#include "fake_model.h"
#include "test_files.h"

using namespace nccltune;

namespace {

const std::string kExactModel = test_support::fixture("models/exact.yaml").string();

}  // namespace

TEST(SizeSweep, SizesDoubleFromMinToMax) {
  SweepOptions options;
  options.min_bytes = 8;
  options.max_bytes = 128;
  EXPECT_EQ(sweep_sizes(options), (std::vector<size_t>{8, 16, 32, 64, 128}));
  options.step_factor = 4;
  options.max_bytes = 100;
  EXPECT_EQ(sweep_sizes(options), (std::vector<size_t>{8, 32}));
  options.step_factor = 1;
  options.step_bytes = 40;
  EXPECT_EQ(sweep_sizes(options), (std::vector<size_t>{8, 48, 88}));
  options.min_bytes = options.max_bytes = 1 << 20;
  EXPECT_EQ(sweep_sizes(options), (std::vector<size_t>{1 << 20}));
}

// The tuner's sizes between grid points: exactly the listed ones, whatever min, max and factor say;
// a list that is not strictly ascending or holds 0 is refused.
TEST(SizeSweep, ListedSizesAreTheSweep) {
  SweepOptions options;
  options.min_bytes = 8;
  options.max_bytes = 128;
  options.sizes = {12, 1000, 3u << 20};
  EXPECT_EQ(sweep_sizes(options), options.sizes);
  EXPECT_TRUE(validate(options, 4).ok());
  options.sizes = {12, 12};
  EXPECT_NE(validate(options, 4).error().find("strictly ascending"), std::string::npos);
  options.sizes = {0, 12};
  EXPECT_NE(validate(options, 4).error().find("above 0"), std::string::npos);
}

TEST(SizeSweep, ValidateNamesTheBadOption) {
  SweepOptions options;
  EXPECT_TRUE(validate(options, 4).ok());
  options.min_bytes = 2 * options.max_bytes;
  EXPECT_NE(validate(options, 4).error().find("-b"), std::string::npos);
  options = SweepOptions{};
  options.min_bytes = 0;
  EXPECT_NE(validate(options, 4).error().find("-f"), std::string::npos);
  options.step_factor = 1;
  options.step_bytes = 0;
  EXPECT_NE(validate(options, 4).error().find("-i"), std::string::npos);
  options = SweepOptions{};
  options.iterations = 0;
  EXPECT_NE(validate(options, 4).error().find("-n"), std::string::npos);
  options = SweepOptions{};
  options.root = 4;
  EXPECT_NE(validate(options, 4).error().find("-r"), std::string::npos);
  EXPECT_FALSE(parse_reduction_op("max").ok());
  EXPECT_EQ(*parse_reduction_op("sum"), ReductionOp::sum);
}

// One rank, in this process, on the fake libraries: every collective's sweep checks clean, the
// callback sees every size, and the times are the model's.
TEST(SizeSweep, RunsEveryCollectiveOnOneFakeRank) {
  setenv("NCCLTUNE_FAKE_MODEL", kExactModel.c_str(), 1);
  unsetenv("NCCL_ALGO");
  unsetenv("NCCL_PROTO");
  Result<CudaDriver> cuda = CudaDriver::load(NCCLTUNE_FAKECUDA);
  ASSERT_TRUE(cuda.ok()) << cuda.error();
  Result<NcclLibrary> nccl = NcclLibrary::load(NCCLTUNE_FAKENCCL);
  ASSERT_TRUE(nccl.ok()) << nccl.error();
  Result<CudaContext> device = cuda->use_device(0);
  ASSERT_TRUE(device.ok()) << device.error();
  Result<CudaStream> stream = cuda->create_stream();
  ASSERT_TRUE(stream.ok()) << stream.error();
  Result<nccl_abi::ncclUniqueId> id = nccl->unique_id();
  ASSERT_TRUE(id.ok());
  Result<NcclComm> comm = nccl->init_rank(1, *id, 0);
  ASSERT_TRUE(comm.ok()) << comm.error();

  Result<fake::FakeModel> model = fake::load_fake_model(kExactModel);
  ASSERT_TRUE(model.ok()) << model.error();

  SweepOptions options;
  options.min_bytes = 1000;
  options.max_bytes = 1 << 21;
  options.step_factor = 16;
  options.iterations = 3;
  options.warmup = 1;
  options.type = DataType::bfloat16;
  const SweepContext context{*cuda, *nccl, *comm, *stream, 0, 1};
  for (const CollectiveSpec* spec : all_collectives()) {
    // What NCCL's cost model offers depends on the collective (Broadcast and Reduce run Ring only).
    Result<fake::CommModel> one_rank =
        fake::resolve_comm_model(*model, fake::read_nccl_env(environ), 0, 1, spec->name());
    ASSERT_TRUE(one_rank.ok()) << one_rank.error();
    std::vector<size_t> seen;
    Result<std::vector<SizeMeasurement>> sweep =
        run_size_sweep(context, *spec, options,
                       [&](const SizeMeasurement& measurement) { seen.push_back(measurement.bytes); });
    ASSERT_TRUE(sweep.ok()) << sweep.error();
    ASSERT_EQ(sweep->size(), 3u) << spec->name();  // 1000, 16000, 256000
    for (size_t i = 0; i < sweep->size(); ++i) {
      const SizeMeasurement& row = (*sweep)[i];
      EXPECT_EQ(seen[i], row.bytes);
      EXPECT_EQ(row.bytes, spec->layout(sweep_sizes(options)[i], 2, 1).bytes);
      EXPECT_EQ(row.out_of_place_wrong, 0) << spec->name() << " " << row.bytes;
      const double expected =
          fake::op_time_us(*model, *one_rank, spec->name(), static_cast<double>(row.bytes));
      EXPECT_NEAR(row.out_of_place_us, expected, expected * 1e-5) << spec->name();
      // Every collective is timed in place too, as nccl-tests does; alltoall's data is not checked
      // there (nccl-tests prints N/A).
      ASSERT_TRUE(row.in_place_us.has_value()) << spec->name();
      EXPECT_NEAR(*row.in_place_us, expected, expected * 1e-5) << spec->name();
      if (spec->checks_in_place())
        EXPECT_EQ(row.in_place_wrong, 0) << spec->name() << " " << row.bytes;
      else
        EXPECT_FALSE(row.in_place_wrong.has_value()) << spec->name();
    }
  }
}

TEST(SizeSweep, WithoutCheckWrongIsUnknown) {
  setenv("NCCLTUNE_FAKE_MODEL", kExactModel.c_str(), 1);
  Result<CudaDriver> cuda = CudaDriver::load(NCCLTUNE_FAKECUDA);
  Result<NcclLibrary> nccl = NcclLibrary::load(NCCLTUNE_FAKENCCL);
  ASSERT_TRUE(cuda.ok() && nccl.ok());
  Result<CudaContext> device = cuda->use_device(0);
  Result<CudaStream> stream = cuda->create_stream();
  Result<NcclComm> comm = nccl->init_rank(1, *nccl->unique_id(), 0);
  ASSERT_TRUE(device.ok() && stream.ok() && comm.ok());
  SweepOptions options;
  options.min_bytes = options.max_bytes = 4096;
  options.check = false;
  Result<std::vector<SizeMeasurement>> sweep =
      run_size_sweep({*cuda, *nccl, *comm, *stream, 0, 1}, *find_collective("all_reduce"), options);
  ASSERT_TRUE(sweep.ok()) << sweep.error();
  ASSERT_EQ(sweep->size(), 1u);
  EXPECT_FALSE(sweep->front().out_of_place_wrong.has_value());
  EXPECT_FALSE(sweep->front().in_place_wrong.has_value());
  EXPECT_GT(sweep->front().out_of_place_us, 0);
}

// Sizes round down to whole elements: 2..7 bytes of bfloat16 are 2, 2, 4, 4, 6, 6 bytes, each
// measured once, so a profile's sizes ascend (tiny sizes on many ranks do this for all_gather).
TEST(SizeSweep, SizesThatRoundToTheSameBytesAreMeasuredOnce) {
  setenv("NCCLTUNE_FAKE_MODEL", kExactModel.c_str(), 1);
  Result<CudaDriver> cuda = CudaDriver::load(NCCLTUNE_FAKECUDA);
  Result<NcclLibrary> nccl = NcclLibrary::load(NCCLTUNE_FAKENCCL);
  ASSERT_TRUE(cuda.ok() && nccl.ok());
  Result<CudaContext> device = cuda->use_device(0);
  Result<CudaStream> stream = cuda->create_stream();
  Result<NcclComm> comm = nccl->init_rank(1, *nccl->unique_id(), 0);
  ASSERT_TRUE(device.ok() && stream.ok() && comm.ok());
  SweepOptions options;
  options.min_bytes = 2;
  options.max_bytes = 7;
  options.step_factor = 1;
  options.step_bytes = 1;
  options.type = DataType::bfloat16;
  Result<std::vector<SizeMeasurement>> sweep =
      run_size_sweep({*cuda, *nccl, *comm, *stream, 0, 1}, *find_collective("all_reduce"), options);
  ASSERT_TRUE(sweep.ok()) << sweep.error();
  std::vector<std::size_t> bytes;
  for (const SizeMeasurement& row : *sweep) bytes.push_back(row.bytes);
  EXPECT_EQ(bytes, (std::vector<std::size_t>{2, 4, 6}));

  // Listed sizes round down to whole elements too: 3 and 5 bytes of bfloat16 are 2 and 4.
  options.sizes = {3, 5, 1536};
  sweep = run_size_sweep({*cuda, *nccl, *comm, *stream, 0, 1}, *find_collective("all_reduce"), options);
  ASSERT_TRUE(sweep.ok()) << sweep.error();
  bytes.clear();
  for (const SizeMeasurement& row : *sweep) bytes.push_back(row.bytes);
  EXPECT_EQ(bytes, (std::vector<std::size_t>{2, 4, 1536}));
}

TEST(SizeSweep, ReportsTheFailingCollectiveAndSize) {
  setenv("NCCLTUNE_FAKE_MODEL", kExactModel.c_str(), 1);
  Result<CudaDriver> cuda = CudaDriver::load(NCCLTUNE_FAKECUDA);
  Result<NcclLibrary> nccl = NcclLibrary::load(NCCLTUNE_FAKENCCL);
  ASSERT_TRUE(cuda.ok() && nccl.ok());
  Result<CudaContext> device = cuda->use_device(0);
  Result<CudaStream> stream = cuda->create_stream();
  Result<NcclComm> comm = nccl->init_rank(1, *nccl->unique_id(), 0);
  ASSERT_TRUE(device.ok() && stream.ok() && comm.ok());
  SweepOptions options;
  options.min_bytes = options.max_bytes = 4096;
  // The context claims 2 ranks, the communicator has 1: sending to rank 1 fails in NCCL.
  Result<std::vector<SizeMeasurement>> sweep =
      run_size_sweep({*cuda, *nccl, *comm, *stream, 0, 2}, *find_collective("alltoall"), options);
  ASSERT_FALSE(sweep.ok());
  EXPECT_EQ(sweep.error().rfind("alltoall at 4096 bytes: alltoall: invalid argument", 0), 0u)
      << sweep.error();
}
