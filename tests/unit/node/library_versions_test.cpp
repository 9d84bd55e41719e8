#include "collectives/library_versions.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <optional>

#include "node/node_type.h"
#include "test_files.h"
#include "topology/sources/topology_reader.h"

using namespace nccltune;
using nccltune::test_support::fixture;
using nccltune::test_support::TempDir;

namespace {

NodeTopology dgx_h100() {
  auto topology = read_node_topology({TopologySource::Kind::snapshot, fixture("nodes/dgx-h100")}, {});
  EXPECT_TRUE(topology) << topology.error();
  return topology ? std::move(topology.value()) : NodeTopology{};
}

}  // namespace

TEST(LocalNodeType, KeyEqualsWhatTuneWritesForTheSameNode) {
  const NodeTopology topology = dgx_h100();
  const LibraryVersions versions = read_library_versions({NCCLTUNE_FAKENCCL, NCCLTUNE_FAKECUDA});
  const std::optional<NodeType> type = local_node_type(topology, versions.nccl, versions.cuda_driver);
  EXPECT_EQ(type->nccl_version, "2.28.9");  // the fake's default ncclGetVersion, 22809
  EXPECT_EQ(type->cuda_driver, "13.0");     // the fake's cuDriverGetVersion, 13000
  // tune_job: node_type(topology, what the worker saw of its GPU, ranks on the node, versions).
  const NodeType tuned = node_type(topology, {"NVIDIA H100 80GB HBM3", 90}, 8, "2.28.9", "13.0");
  EXPECT_EQ(node_type_key(*type), node_type_key(tuned));
  EXPECT_EQ(node_type_key(*type), "h100-80gb-hbm3.8gpu.nvswitch.8xib400.pix.nccl2.28");
}

TEST(LocalNodeType, MissingLibrariesDegradeInsteadOfFailing) {
  const LibraryVersions versions =
      read_library_versions({"/nonexistent/libnccl.so.2", "/nonexistent/libcuda.so.1"});
  EXPECT_EQ(versions.nccl, "");
  EXPECT_EQ(versions.cuda_driver, "");
  ASSERT_EQ(versions.notes.size(), 2u);
  EXPECT_NE(versions.notes[0].find("/nonexistent/libnccl.so.2"), std::string::npos) << versions.notes[0];
  EXPECT_NE(versions.notes[1].find("/nonexistent/libcuda.so.1"), std::string::npos) << versions.notes[1];
  EXPECT_EQ(local_node_type(dgx_h100(), versions.nccl, versions.cuda_driver).gpus, 8);
}

TEST(LocalNodeType, ALibraryWithoutTheVersionCallIsANote) {
  // libfakecuda exports no ncclGetVersion.
  const LibraryVersions versions = read_library_versions({NCCLTUNE_FAKECUDA, NCCLTUNE_FAKECUDA});
  EXPECT_EQ(versions.nccl, "");
  EXPECT_EQ(versions.cuda_driver, "13.0");
  ASSERT_EQ(versions.notes.size(), 1u);
  EXPECT_NE(versions.notes[0].find("ncclGetVersion"), std::string::npos) << versions.notes[0];
}

TEST(LocalNodeType, CudaDriverVersionAsTuneWritesIt) {
  EXPECT_EQ(cuda_driver_version_string(13000), "13.0");
  EXPECT_EQ(cuda_driver_version_string(12040), "12.4");
  EXPECT_EQ(cuda_driver_version_string(0), "");
}

TEST(LocalNodeType, ALibraryFileReplacedOrRewrittenIsNoticed) {
  const TempDir dir("local_node_type_test");
  const std::filesystem::path nccl = dir / "libnccl.so.2", cuda = dir / "libcuda.so.1";
  std::filesystem::copy_file(NCCLTUNE_FAKENCCL, nccl);
  std::filesystem::copy_file(NCCLTUNE_FAKECUDA, cuda);
  const LibraryVersions versions = read_library_versions({nccl.string(), cuda.string()});
  EXPECT_EQ(versions.nccl, "2.28.9");
  EXPECT_EQ(versions.nccl_file.path, nccl.string());  // where the loader found it
  EXPECT_FALSE(versions.nccl_file.stamp.empty());
  EXPECT_FALSE(library_files_changed(versions));
  // A package upgrade: a new file renamed over the old one (a new inode).
  std::filesystem::copy_file(NCCLTUNE_FAKENCCL, dir / "new.so");
  std::filesystem::rename(dir / "new.so", nccl);
  EXPECT_TRUE(library_files_changed(versions));
  const LibraryVersions upgraded = read_library_versions({nccl.string(), cuda.string()});
  EXPECT_FALSE(library_files_changed(upgraded));
  // Rewritten in place: the same inode, a new modification time.
  std::filesystem::last_write_time(cuda, std::filesystem::last_write_time(cuda) + std::chrono::seconds(5));
  EXPECT_TRUE(library_files_changed(upgraded));
}

TEST(LocalNodeType, AMissingLibraryIsLookedForAgain) {
  const LibraryVersions versions = read_library_versions({"/nonexistent/libnccl.so.2", NCCLTUNE_FAKECUDA});
  EXPECT_TRUE(versions.nccl_file.path.empty());
  EXPECT_TRUE(library_files_changed(versions));  // it may be installed by the next scan
}
