// Which CUDA driver and NCCL libraries nccltune loads, and their versions. The versions are read
// through the two version entry points alone (ncclGetVersion, cuDriverGetVersion; neither needs a
// GPU), so nccltuned and `nccltune env` learn them without a worker process.
#pragma once

#include <string>
#include <vector>

namespace nccltune {

struct LocalLibraries {
  std::string nccl_lib = "libnccl.so.2", cuda_lib = "libcuda.so.1";
};

// --cuda-lib / --nccl-lib when given, else $NCCLTUNE_CUDA_LIB / $NCCLTUNE_NCCL_LIB, else the
// system's library names. The one rule for bench, tune and env.
LocalLibraries choose_libraries(const std::string& cuda_flag, const std::string& nccl_flag);

// Which file a library was loaded from, and that file's identity (device, inode, size, mtime),
// so a package upgrade that replaces or rewrites it is noticed without loading it again.
struct LibraryFile {
  std::string path;   // as the dynamic loader found it; empty when it could not be loaded
  std::string stamp;  // "dev:inode:size:mtime_ns"; empty when the file cannot be stat()ed
  friend bool operator==(const LibraryFile&, const LibraryFile&) = default;
};

// Versions as `tune` writes them ("2.28.9", "13.0"); empty when a library cannot be loaded or
// answer, with one note per failure.
struct LibraryVersions {
  std::string nccl, cuda_driver;
  std::vector<std::string> notes;
  LibraryFile nccl_file, cuda_file;
};
LibraryVersions read_library_versions(const LocalLibraries& libs);

// True when a library was not loaded when `versions` were read, or its file has changed since
// (one stat() per library): then read_library_versions again.
bool library_files_changed(const LibraryVersions& versions);

// 13000 -> "13.0", 12040 -> "12.4" (cuDriverGetVersion's 1000*major + 10*minor); "" for <= 0.
std::string cuda_driver_version_string(int code);

}  // namespace nccltune
