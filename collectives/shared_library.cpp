#include "collectives/shared_library.h"

#include <dlfcn.h>

#include <utility>

namespace nccltune {

Result<SharedLibrary> SharedLibrary::open(const std::string& path, const std::string& what) {
  dlerror();
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* reason = dlerror();
    return Error{"cannot load " + what + " '" + path + "': " + (reason ? reason : "unknown error")};
  }
  return SharedLibrary(path, handle);
}

SharedLibrary::SharedLibrary(SharedLibrary&& other) noexcept
    : path_(std::move(other.path_)), handle_(std::exchange(other.handle_, nullptr)) {}

SharedLibrary& SharedLibrary::operator=(SharedLibrary&& other) noexcept {
  if (this != &other) {
    if (handle_ != nullptr) dlclose(handle_);
    path_ = std::move(other.path_);
    handle_ = std::exchange(other.handle_, nullptr);
  }
  return *this;
}

SharedLibrary::~SharedLibrary() {
  if (handle_ != nullptr) dlclose(handle_);
}

Result<void*> SharedLibrary::symbol(std::initializer_list<const char*> names) const {
  for (const char* name : names) {
    dlerror();
    void* address = dlsym(handle_, name);
    if (address != nullptr && dlerror() == nullptr) return address;
  }
  std::string missing;
  for (const char* name : names) missing += (missing.empty() ? "" : " or ") + std::string(name);
  return Error{path_ + ": missing symbol " + missing};
}

}  // namespace nccltune
