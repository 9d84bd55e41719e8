#include "collectives/library_versions.h"

#include <dlfcn.h>
#include <fmt/format.h>
#include <sys/stat.h>

#include <cstdlib>

#include "collectives/cuda_declarations.h"
#include "collectives/nccl_declarations.h"
#include "collectives/nccl_library.h"
#include "collectives/shared_library.h"

namespace nccltune {

namespace {

std::string file_stamp(const std::string& path) {
  struct stat info {};
  if (path.empty() || ::stat(path.c_str(), &info) != 0) return "";
  return fmt::format("{}:{}:{}:{}.{:09}", info.st_dev, info.st_ino, info.st_size, info.st_mtim.tv_sec,
                     info.st_mtim.tv_nsec);
}

// The file the loader mapped `symbol` from (a bare soname resolves to a path in the search path).
LibraryFile library_file(const void* symbol) {
  Dl_info info{};
  if (dladdr(symbol, &info) == 0 || info.dli_fname == nullptr) return {};
  return {info.dli_fname, file_stamp(info.dli_fname)};
}

// Only the version entry points are bound, so a library missing other symbols (or a CUDA
// driver without a GPU) still answers. The library is closed again on return.
Result<std::string> nccl_version(const std::string& path, LibraryFile& file) {
  auto library = SharedLibrary::open(path, "NCCL");
  if (!library) return Error{library.error()};
  nccl_abi::ncclGetVersion_fn get_version = nullptr;
  if (auto bound = library->bind(get_version, {"ncclGetVersion"}); !bound) return Error{bound.error()};
  file = library_file(reinterpret_cast<const void*>(get_version));
  int code = 0;
  if (get_version(&code) != nccl_abi::ncclSuccess || code <= 0)
    return Error{path + ": ncclGetVersion failed"};
  return nccl_version_string(code);
}

Result<std::string> cuda_driver_version(const std::string& path, LibraryFile& file) {
  auto library = SharedLibrary::open(path, "the CUDA driver");
  if (!library) return Error{library.error()};
  cuda_abi::cuDriverGetVersion_fn get_version = nullptr;
  if (auto bound = library->bind(get_version, {"cuDriverGetVersion"}); !bound) return Error{bound.error()};
  file = library_file(reinterpret_cast<const void*>(get_version));
  int code = 0;
  if (get_version(&code) != cuda_abi::CUDA_SUCCESS || code <= 0)
    return Error{path + ": cuDriverGetVersion failed"};
  return cuda_driver_version_string(code);
}

std::string chosen(const std::string& flag, const char* variable, const char* fallback) {
  if (!flag.empty()) return flag;
  if (const char* value = std::getenv(variable); value && *value) return value;
  return fallback;
}

}  // namespace

LocalLibraries choose_libraries(const std::string& cuda_flag, const std::string& nccl_flag) {
  return {chosen(nccl_flag, "NCCLTUNE_NCCL_LIB", "libnccl.so.2"),
          chosen(cuda_flag, "NCCLTUNE_CUDA_LIB", "libcuda.so.1")};
}

std::string cuda_driver_version_string(int code) {
  if (code <= 0) return "";
  return std::to_string(code / 1000) + "." + std::to_string(code % 1000 / 10);
}

LibraryVersions read_library_versions(const LocalLibraries& libs) {
  LibraryVersions versions;
  if (auto nccl = nccl_version(libs.nccl_lib, versions.nccl_file))
    versions.nccl = *nccl;
  else
    versions.notes.push_back("NCCL version unknown: " + nccl.error());
  if (auto cuda = cuda_driver_version(libs.cuda_lib, versions.cuda_file))
    versions.cuda_driver = *cuda;
  else
    versions.notes.push_back("CUDA driver version unknown: " + cuda.error());
  return versions;
}

bool library_files_changed(const LibraryVersions& versions) {
  for (const LibraryFile* file : {&versions.nccl_file, &versions.cuda_file})
    if (file->path.empty() || file->stamp.empty() || file_stamp(file->path) != file->stamp) return true;
  return false;
}

}  // namespace nccltune
