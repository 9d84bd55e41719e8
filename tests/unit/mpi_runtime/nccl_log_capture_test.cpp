// NcclLogCapture (tuner/mpi_runtime/nccl_log_capture.h): the private directory NCCL's INFO output goes
// into during a captured trial, the variables that send it there, and what is read back.
#include "mpi_runtime/nccl_log_capture.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>

#include "test_files.h"

using namespace nccltune;
using nccltune::test_support::TempDir;
using nccltune::test_support::write_file;

namespace {

// Sets TMPDIR for one scope.
class ScopedTmpdir {
 public:
  explicit ScopedTmpdir(const std::string& value) {
    if (const char* old = std::getenv("TMPDIR")) old_ = old;
    setenv("TMPDIR", value.c_str(), 1);
  }
  ~ScopedTmpdir() {
    if (old_.empty())
      unsetenv("TMPDIR");
    else
      setenv("TMPDIR", old_.c_str(), 1);
  }

 private:
  std::string old_;
};

}  // namespace

TEST(NcclLogCapture, APrivateDirectoryUnderTmpdirThatGoesAway) {
  TempDir tmp;
  ScopedTmpdir scoped(tmp.path().string());
  std::filesystem::path directory;
  {
    Result<NcclLogCapture> capture = NcclLogCapture::create();
    ASSERT_TRUE(capture) << capture.error();
    directory = capture->directory();
    EXPECT_EQ(directory.parent_path(), tmp.path());
    struct stat info {};
    ASSERT_EQ(stat(directory.c_str(), &info), 0);
    EXPECT_EQ(info.st_mode & 0777, 0700u) << "only this user reads NCCL's log";
    write_file(directory / "nccl.node01.12.log", "line\n");
  }
  EXPECT_FALSE(std::filesystem::exists(directory)) << "removed with what NCCL wrote";
}

TEST(NcclLogCapture, ItsVariablesReplaceTheUsers) {
  TempDir tmp;
  ScopedTmpdir scoped(tmp.path().string());
  Result<NcclLogCapture> capture = NcclLogCapture::create();
  ASSERT_TRUE(capture) << capture.error();
  std::map<std::string, std::string> env{
      {"NCCL_DEBUG_FILE", "/home/user/nccl.log"}, {"NCCL_DEBUG", "WARN"}, {"NCCL_ALGO", "Ring"}};
  capture->add_to(env);
  EXPECT_EQ(env.at("NCCL_DEBUG"), "INFO");
  EXPECT_EQ(env.at("NCCL_DEBUG_SUBSYS"), "INIT,ENV,NET,GRAPH,TUNING");
  EXPECT_EQ(env.at("NCCL_DEBUG_FILE"), (capture->directory() / "nccl.%h.%p.log").string());
  EXPECT_EQ(env.at("NCCL_ALGO"), "Ring");
}

TEST(NcclLogCapture, ReadsEveryFileInNameOrderWithinTheCap) {
  TempDir tmp;
  ScopedTmpdir scoped(tmp.path().string());
  Result<NcclLogCapture> capture = NcclLogCapture::create();
  ASSERT_TRUE(capture) << capture.error();
  EXPECT_EQ(capture->read_all(), "") << "nothing written yet";
  write_file(capture->directory() / "nccl.b.2.log", "second");
  write_file(capture->directory() / "nccl.a.1.log", "first\n");
  EXPECT_EQ(capture->read_all(), "# file nccl.a.1.log\nfirst\n# file nccl.b.2.log\nsecond\n");

  write_file(capture->directory() / "nccl.c.3.log", std::string(kMaxCapturedLogBytes, 'x'));
  const std::string all = capture->read_all();
  EXPECT_LE(all.size(), kMaxCapturedLogBytes + 200);
  EXPECT_NE(all.find("# file nccl.c.3.log"), std::string::npos);
}
