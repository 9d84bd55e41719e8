// Files for tests: the fixtures under tests/fixtures/, scratch directories that clean up after
// themselves, and whole-file reads and writes.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace nccltune::test_support {

// tests/fixtures/<relative> of the source tree (NCCLTUNE_FIXTURES).
std::filesystem::path fixture(std::string_view relative);

// A fresh directory under $TMPDIR (mode 0700, as mkdtemp makes it), removed with everything in it
// when the object goes.
class TempDir {
 public:
  explicit TempDir(std::string_view name = "nccltune-test");
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::filesystem::path& relative) const { return path_ / relative; }

 private:
  std::filesystem::path path_;
};

// The whole file, bytes as they are; "" when it cannot be read.
std::string read_file(const std::filesystem::path& file);
// Creates or replaces `file` (and its parent directories) with exactly `content`.
void write_file(const std::filesystem::path& file, std::string_view content);

}  // namespace nccltune::test_support
