// base/atomic_file.h: reads refuse what is not a regular file, or is over its cap, with a message
// naming what was found (without hanging on a FIFO); writes replace only a regular file, and
// leave anything else at the path as it was.
#include "base/atomic_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "test_files.h"

using namespace nccltune;
using namespace nccltune::test_support;

namespace {

std::string read_error(const std::filesystem::path& path, std::size_t max_bytes = kMaxConfigBytes) {
  const Result<std::string> text = read_text_file(path, max_bytes);
  return text ? std::string("(read ") + std::to_string(text->size()) + " bytes)" : text.error();
}

}  // namespace

TEST(ReadTextFile, ReadsARegularFileWhole) {
  TempDir dir;
  write_file(dir / "a.txt", std::string("one\0two\n", 8));
  const Result<std::string> text = read_text_file(dir / "a.txt", 8);
  ASSERT_TRUE(text) << text.error();
  EXPECT_EQ(*text, std::string("one\0two\n", 8));
}

TEST(ReadTextFile, SaysWhatStandsInsteadOfAFile) {
  TempDir dir;
  ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0600), 0);
  std::filesystem::create_directory(dir / "sub");
  EXPECT_EQ(read_error(dir / "none"), (dir / "none").string() + ": no such file");
  // A FIFO without a writer would block a plain open() for ever.
  EXPECT_EQ(read_error(dir / "fifo"), (dir / "fifo").string() + ": is a FIFO, not a regular file");
  EXPECT_EQ(read_error(dir / "sub"), (dir / "sub").string() + ": is a directory, not a regular file");
  EXPECT_EQ(read_error("/dev/zero"), "/dev/zero: is a character device, not a regular file");
}

TEST(ReadTextFile, RefusesAFileOverItsCap) {
  TempDir dir;
  write_file(dir / "big", std::string((1 << 20) + 1, 'x'));
  EXPECT_EQ(read_error(dir / "big", 1 << 20), (dir / "big").string() + ": larger than 1 MiB");
  write_file(dir / "exact", std::string(1 << 20, 'x'));
  EXPECT_EQ(read_error(dir / "exact", 1 << 20), "(read 1048576 bytes)");
}

TEST(WriteFileAtomically, ReplacesARegularFileAndCreatesAMissingOne) {
  TempDir dir;
  write_file(dir / "old", "old");
  ASSERT_TRUE(write_file_atomically(dir / "old", "new"));
  EXPECT_EQ(read_file(dir / "old"), "new");
  ASSERT_TRUE(write_file_atomically(dir / "fresh", "fresh"));
  EXPECT_EQ(read_file(dir / "fresh"), "fresh");
}

TEST(WriteFileAtomically, RefusesASymlinkAFifoAndADirectoryAndLeavesThem) {
  TempDir dir;
  write_file(dir / "target", "someone else's");
  std::filesystem::create_symlink(dir / "target", dir / "link");
  ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0600), 0);
  std::filesystem::create_directory(dir / "sub");

  const Status link = write_file_atomically(dir / "link", "x");
  ASSERT_FALSE(link);
  EXPECT_EQ(link.error(),
            (dir / "link").string() + ": is a symlink, not a regular file: refusing to replace it");
  EXPECT_TRUE(std::filesystem::is_symlink(dir / "link"));
  EXPECT_EQ(read_file(dir / "target"), "someone else's");

  const Status fifo = write_file_atomically(dir / "fifo", "x");
  ASSERT_FALSE(fifo);
  EXPECT_NE(fifo.error().find("is a FIFO"), std::string::npos) << fifo.error();
  EXPECT_TRUE(std::filesystem::is_fifo(dir / "fifo"));

  EXPECT_FALSE(write_file_atomically(dir / "sub", "x"));
  EXPECT_TRUE(std::filesystem::is_directory(dir / "sub"));
  // No temporary file is left behind by a refusal.
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()), {}), 4);
}
