// Feeds arbitrary bytes, as a file, to read_hwloc_xml (an hwloc XML export: `--from hwloc:FILE`,
// a snapshot's hwloc.xml). The public function takes a path, so each input is written to one file
// in a temporary directory made once per process. read_hwloc_xml loads the XML in the
// nccltune-hwloc-xml helper (a child process, so a crash inside libhwloc is an error, not a crash
// here); the build names the helper it built in NCCLTUNE_HWLOC_READER unless that is set. Asserts
// only what the sanitizers and a clean return assert.
#include <stdlib.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "topology/sources/hwloc_source.h"

namespace {

// Never destroyed, so the atexit handler that removes it may still read it.
const std::filesystem::path& scratch_dir() {
  static const auto* dir = [] {
    std::string pattern = (std::filesystem::temp_directory_path() / "fuzz_hwloc_xml.XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) {
      std::perror("mkdtemp");
      abort();
    }
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(scratch_dir(), ec);
    });
    return new std::filesystem::path(pattern);
  }();
  return *dir;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
#ifdef NCCLTUNE_FUZZ_HWLOC_READER
  setenv("NCCLTUNE_HWLOC_READER", NCCLTUNE_FUZZ_HWLOC_READER, /*overwrite=*/0);
#endif
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto file = scratch_dir() / "input.xml";
  {
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    if (!out) abort();
  }
  (void)nccltune::read_hwloc_xml(file);
  return 0;
}
