#include "daemon/nccl_conf_block.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <iterator>
#include <string>

#include "test_files.h"

using namespace nccltune;
using nccltune::test_support::read_file;
using nccltune::test_support::TempDir;
using nccltune::test_support::write_file;

namespace {

const std::string kBegin = std::string(kNcclConfBegin) + "\n";
const std::string kEnd = std::string(kNcclConfEnd) + "\n";

std::string updated(const std::string& existing, const std::string& body) {
  auto result = update_nccl_conf_block(existing, body, "/etc/nccl.conf");
  EXPECT_TRUE(result) << result.error();
  return result ? *result : std::string();
}

}  // namespace

TEST(NcclConfBlock, AppendsABlockAfterTheAdminsLines) {
  EXPECT_EQ(updated("", "NCCL_ALGO=Ring\n"), kBegin + "NCCL_ALGO=Ring\n" + kEnd);
  EXPECT_EQ(updated("NCCL_DEBUG=WARN\n", "NCCL_ALGO=Ring\n"),
            "NCCL_DEBUG=WARN\n" + kBegin + "NCCL_ALGO=Ring\n" + kEnd);
  // A last line without its newline is not joined to the marker.
  EXPECT_EQ(updated("NCCL_DEBUG=WARN", "NCCL_ALGO=Ring\n"),
            "NCCL_DEBUG=WARN\n" + kBegin + "NCCL_ALGO=Ring\n" + kEnd);
  EXPECT_EQ(updated("", "NCCL_ALGO=Ring"), kBegin + "NCCL_ALGO=Ring\n" + kEnd);
}

TEST(NcclConfBlock, ReplacesTheBlockInPlaceKeepingEverythingElseByteForByte) {
  const std::string before = "# admin's comment\r\nNCCL_DEBUG=WARN\n\n";
  const std::string after = "NCCL_SOCKET_IFNAME=eth0\n# trailing, no newline";
  const std::string existing = before + kBegin + "NCCL_ALGO=Ring\nNCCL_PROTO=LL\n" + kEnd + after;
  EXPECT_EQ(updated(existing, "NCCL_ALGO=Tree\n"), before + kBegin + "NCCL_ALGO=Tree\n" + kEnd + after);
}

TEST(NcclConfBlock, AnEmptyBodyRemovesTheBlockOnly) {
  const std::string existing = "A=1\n" + kBegin + "NCCL_ALGO=Ring\n" + kEnd + "B=2\n";
  EXPECT_EQ(updated(existing, ""), "A=1\nB=2\n");
  EXPECT_EQ(updated("A=1\n", ""), "A=1\n");
}

TEST(NcclConfBlock, UpdatingTwiceChangesNothing) {
  const std::string once = updated("NCCL_DEBUG=WARN\n", "NCCL_ALGO=Ring\n");
  EXPECT_EQ(updated(once, "NCCL_ALGO=Ring\n"), once);
}

TEST(NcclConfBlock, FindsABlockWhoseMarkerWordingChanged) {
  const std::string existing = "# BEGIN nccltuned (older wording)\nNCCL_ALGO=Ring\n# END nccltuned  \nA=1\n";
  EXPECT_EQ(updated(existing, "NCCL_ALGO=Tree\n"), kBegin + "NCCL_ALGO=Tree\n" + kEnd + "A=1\n");
  // A look-alike that is not the marker stays the admin's.
  EXPECT_EQ(updated("# BEGIN nccltunedX\n", ""), "# BEGIN nccltunedX\n");
}

TEST(NcclConfBlock, BrokenMarkersAreLeftToTheAdminWithTheLine) {
  struct Case {
    std::string text, line;
  };
  const Case cases[] = {
      {"A=1\n" + kBegin + "NCCL_ALGO=Ring\n", "/etc/nccl.conf:2:"},
      {"A=1\nB=2\n" + kEnd, "/etc/nccl.conf:3:"},
      {kBegin + kEnd + kBegin + kEnd, "/etc/nccl.conf:3:"},
  };
  for (const Case& c : cases) {
    const auto result = update_nccl_conf_block(c.text, "NCCL_ALGO=Tree\n", "/etc/nccl.conf");
    ASSERT_FALSE(result) << c.text;
    EXPECT_EQ(result.error().rfind(c.line, 0), 0u) << result.error();
  }
}

TEST(NcclConfFile, ARewriteKeepsTheAdminsModeAndOwner) {
  const TempDir dir("nccl_conf_test");
  const auto conf = dir / "nccl.conf";
  write_file(conf, "NCCL_DEBUG=WARN\n");
  ASSERT_EQ(::chmod(conf.c_str(), 0640), 0);
  struct stat before {};
  ASSERT_EQ(::stat(conf.c_str(), &before), 0);
  const auto written = write_nccl_conf(conf, "NCCL_DEBUG=WARN\nNCCL_ALGO=Tree\n");
  ASSERT_TRUE(written) << written.error();
  EXPECT_EQ(read_file(conf), "NCCL_DEBUG=WARN\nNCCL_ALGO=Tree\n");
  struct stat after {};
  ASSERT_EQ(::stat(conf.c_str(), &after), 0);
  EXPECT_EQ(after.st_mode & 07777, 0640u);
  EXPECT_EQ(after.st_uid, before.st_uid);
  EXPECT_EQ(after.st_gid, before.st_gid);
  EXPECT_NE(after.st_ino, before.st_ino);  // replaced by rename, never half-written
}

TEST(NcclConfFile, ANewFileIsWorldReadable) {
  const TempDir dir("nccl_conf_test");
  const auto conf = dir / "nccl.conf";
  ASSERT_TRUE(write_nccl_conf(conf, "NCCL_ALGO=Tree\n"));
  struct stat info {};
  ASSERT_EQ(::stat(conf.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 07777, 0644u);
}

TEST(NcclConfFile, ASymbolicLinkIsRefusedAndLeftAlone) {
  const TempDir dir("nccl_conf_test");
  const auto target = dir / "managed-nccl.conf";
  const auto conf = dir / "nccl.conf";
  write_file(target, "NCCL_DEBUG=INFO\n");
  std::filesystem::create_symlink(target, conf);
  const auto written = write_nccl_conf(conf, "NCCL_ALGO=Tree\n");
  ASSERT_FALSE(written);
  EXPECT_EQ(written.error(), conf.string() +
                                 ": is a symbolic link; nccltuned manages a regular file only "
                                 "(point daemon.nccl_conf.path at the file itself)");
  EXPECT_TRUE(std::filesystem::is_symlink(conf));
  EXPECT_EQ(read_file(target), "NCCL_DEBUG=INFO\n");
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()), {}), 2);  // no temp file left
}
