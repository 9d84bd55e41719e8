// What the nccl-tests reader tests share: a fixture's text and a look for a note.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "collectives/nccl_tests_log.h"
#include "test_files.h"

namespace nccltune::test_support {

// tests/fixtures/nccl-tests/<name>, read whole; a missing file fails the test.
inline std::string read_nccl_tests_fixture(const std::string& name) {
  const std::filesystem::path path = fixture("nccl-tests/" + name);
  EXPECT_TRUE(std::filesystem::is_regular_file(path)) << "cannot open fixture " << name;
  return read_file(path);
}

inline bool has_note(const NcclTestsLog& log, const std::string& part) {
  for (const std::string& note : log.notes)
    if (note.find(part) != std::string::npos) return true;
  return false;
}

}  // namespace nccltune::test_support
