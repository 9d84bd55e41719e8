// Two NCCLs in one test: a copy of libfakenccl.so named libfakenccl-<tag>.so reads
// NCCLTUNE_FAKE_MODEL_<tag>, and ncclGetVersion reports that model's nccl_version (what
// `bench --baseline-nccl-lib` compares).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "collectives/nccl_library.h"
#include "fake_model.h"
#include "test_files.h"

using namespace nccltune;
using namespace nccltune::fake;
using nccltune::test_support::TempDir;
using nccltune::test_support::write_file;

namespace {

std::string versioned_model(int version) {
  return "schema: nccltune/fake-model/v1\nalgos: {Ring: {Simple: {lat_us: 10, busbw_gbps: 100}}}\n"
         "nccl_version: " +
         std::to_string(version) + "\n";
}

}  // namespace

TEST(FakeGpuVersionedCopies, TheTagComesFromTheFileName) {
  EXPECT_EQ(tagged_model_variable("/tmp/x/libfakenccl-OLD.so"), "NCCLTUNE_FAKE_MODEL_OLD");
  EXPECT_EQ(tagged_model_variable("libfakenccl-v2_29.so.2"), "NCCLTUNE_FAKE_MODEL_v2_29");
  EXPECT_EQ(tagged_model_variable("/build/tests/fake-gpu/libfakenccl.so"), "");
  EXPECT_EQ(tagged_model_variable("/tmp/libfakenccl-.so"), "");
  EXPECT_EQ(tagged_model_variable("/tmp/libfakenccl-a-b.so"), "");  // not a variable name
  EXPECT_EQ(tagged_model_variable("/tmp/libfakenccl-OLD"), "");
  EXPECT_EQ(tagged_model_variable("/tmp/libfakenccl-OLD.so/libnccl.so.2"), "");
}

TEST(FakeGpuVersionedCopies, EachCopyReadsItsOwnModelAndReportsItsVersion) {
  const TempDir dir("nccltune-fake-copies");
  const std::filesystem::path old_lib = dir / "libfakenccl-OLD.so", new_lib = dir / "libfakenccl-NEW.so";
  std::filesystem::copy_file(NCCLTUNE_FAKENCCL, old_lib);
  std::filesystem::copy_file(NCCLTUNE_FAKENCCL, new_lib);
  write_file(dir / "old.yaml", versioned_model(22809));
  write_file(dir / "new.yaml", versioned_model(22903));
  write_file(dir / "plain.yaml", versioned_model(22703));
  const char* before = std::getenv("NCCLTUNE_FAKE_MODEL");
  const std::string saved = before ? before : "";
  setenv("NCCLTUNE_FAKE_MODEL", (dir / "plain.yaml").c_str(), 1);
  setenv("NCCLTUNE_FAKE_MODEL_OLD", (dir / "old.yaml").c_str(), 1);
  setenv("NCCLTUNE_FAKE_MODEL_NEW", (dir / "new.yaml").c_str(), 1);
  {
    Result<NcclLibrary> old_nccl = NcclLibrary::load(old_lib.string());
    Result<NcclLibrary> new_nccl = NcclLibrary::load(new_lib.string());
    Result<NcclLibrary> plain = NcclLibrary::load(NCCLTUNE_FAKENCCL);
    ASSERT_TRUE(old_nccl.ok() && new_nccl.ok() && plain.ok());
    EXPECT_EQ(*old_nccl->version(), 22809);
    EXPECT_EQ(*new_nccl->version(), 22903);
    EXPECT_EQ(*plain->version(), 22703);
    unsetenv("NCCLTUNE_FAKE_MODEL_NEW");  // a copy without its own model reads the plain one
    EXPECT_EQ(*new_nccl->version(), 22703);
  }
  unsetenv("NCCLTUNE_FAKE_MODEL_OLD");
  if (before)
    setenv("NCCLTUNE_FAKE_MODEL", saved.c_str(), 1);
  else
    unsetenv("NCCLTUNE_FAKE_MODEL");
}
