// SharedLibrary: one dlopen()ed library (RTLD_NOW | RTLD_LOCAL), closed when the last owner goes.
// The adapters that load libcuda and libnccl bind their function tables through it.
#pragma once

#include <initializer_list>
#include <string>

#include "base/result.h"
#include "base/status.h"

namespace nccltune {

class SharedLibrary {
 public:
  // Opens `path` (a file name searched as dlopen searches, or an absolute path).
  // Error: "cannot load <what> '<path>': <dlerror>".
  static Result<SharedLibrary> open(const std::string& path, const std::string& what);

  SharedLibrary(SharedLibrary&& other) noexcept;
  SharedLibrary& operator=(SharedLibrary&& other) noexcept;
  SharedLibrary(const SharedLibrary&) = delete;
  SharedLibrary& operator=(const SharedLibrary&) = delete;
  ~SharedLibrary();

  const std::string& path() const { return path_; }

  // The address of the first of `names` the library exports (versioned names first, then the
  // older ones they replace). Error: "<path>: missing symbol <name>".
  Result<void*> symbol(std::initializer_list<const char*> names) const;

  // Binds `function` to the first of `names` the library exports.
  template <class Function>
  Status bind(Function& function, std::initializer_list<const char*> names) const {
    Result<void*> address = symbol(names);
    if (!address) return Error{address.error()};
    function = reinterpret_cast<Function>(*address);
    return Ok{};
  }

 private:
  SharedLibrary(std::string path, void* handle) : path_(std::move(path)), handle_(handle) {}

  std::string path_;
  void* handle_ = nullptr;
};

}  // namespace nccltune
