// Reading untrusted JSON field by field, for the strict readers of the project's JSON files
// (bench JSON, the fleet survey): a reader derives from it, and each of its helpers fills its
// output or sets `error` to "<path><key>: <what is wrong>"; after the first error every helper
// does nothing, so a reader checks `error` once at the end. Header-only, like nlohmann/json.
#pragma once

#include <fmt/format.h>

#include <string>
#include <string_view>

namespace nccltune {

template <class Json>
struct JsonFieldReader {
  std::string error;

  // `key` of `object`; nullptr when it is absent (an error if `required`), or null and optional.
  const Json* field(const Json& object, std::string_view path, const char* key, bool required) {
    if (!error.empty()) return nullptr;
    const auto it = object.find(key);
    if (it == object.end() || (!required && it->is_null())) {
      if (required) error = fmt::format("{}{}: missing", path, key);
      return nullptr;
    }
    return &*it;
  }
  void fail(std::string_view path, const char* key, std::string_view what) {
    if (error.empty()) error = fmt::format("{}{}: {}", path, key, what);
  }
};

}  // namespace nccltune
