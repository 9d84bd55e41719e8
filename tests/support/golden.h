// Golden files for unit tests: compare rendered text with a file under tests/fixtures, or rewrite
// the file when NCCLTUNE_UPDATE_GOLDEN=1 (then review the diff before committing it).
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace nccltune::test_support {

inline void expect_matches_file(const std::filesystem::path& path, const std::string& actual) {
  const char* update = std::getenv("NCCLTUNE_UPDATE_GOLDEN");
  if (update && std::string(update) == "1") {
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << actual;
    return;
  }
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in) << path << " is missing; run with NCCLTUNE_UPDATE_GOLDEN=1 to create it";
  std::stringstream expected;
  expected << in.rdbuf();
  EXPECT_EQ(actual, expected.str()) << "differs from " << path
                                    << " (NCCLTUNE_UPDATE_GOLDEN=1 rewrites it; review the diff)";
}

// tests/fixtures/golden/NAME.
inline void expect_golden(const std::string& name, const std::string& actual) {
  expect_matches_file(std::filesystem::path(NCCLTUNE_FIXTURES) / "golden" / name, actual);
}

}  // namespace nccltune::test_support
