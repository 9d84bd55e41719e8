// Reading untrusted JSON field by field, the one set of typed helpers behind every strict reader
// of a JSON file (bench JSON, nccl-tests' -J files, the upgrade comparison, the fleet survey): a
// reader derives from it, and each of its helpers fills its output or sets `error` to
// "<path><key>: <what is wrong>"; after the first error every helper does nothing, so a reader
// checks `error` once at the end. Header-only, like nlohmann/json, for both its json and its
// ordered_json.
//
// Numbers are finite everywhere: JSON has no NaN or infinity, but nlohmann/json reads a literal
// beyond a double's range (1e999) as an infinity, which no reader means to accept.
#pragma once

#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

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

  // `value` itself when it is an object, else "<path>: not an object".
  const Json* object_at(const Json& value, std::string_view path) {
    if (!error.empty()) return nullptr;
    if (!value.is_object()) {
      error = fmt::format("{}: not an object", path);
      return nullptr;
    }
    return &value;
  }

  // A string; false (and `out` untouched) when absent, null and optional, or wrong.
  bool read_text(const Json& object, std::string_view path, const char* key, std::string& out, bool required) {
    const Json* value = field(object, path, key, required);
    if (!value) return false;
    if (!value->is_string()) {
      fail(path, key, "not a string");
      return false;
    }
    out = value->template get<std::string>();
    return true;
  }

  // A finite number.
  bool read_number(const Json& object, std::string_view path, const char* key, double& out, bool required) {
    const Json* value = field(object, path, key, required);
    if (!value) return false;
    if (!value->is_number() || !std::isfinite(value->template get<double>())) {
      fail(path, key, "not a number");
      return false;
    }
    out = value->template get<double>();
    return true;
  }

  // A whole number that fits `Int` (a negative one only in a signed type).
  template <class Int>
  bool read_integer(const Json& object, std::string_view path, const char* key, Int& out, bool required) {
    static_assert(std::is_integral_v<Int>);
    const Json* value = field(object, path, key, required);
    if (!value) return false;
    if (value->is_number_unsigned()) {
      const auto whole = value->template get<std::uint64_t>();
      if (whole > static_cast<std::uint64_t>(std::numeric_limits<Int>::max())) {
        fail(path, key, "too large");
        return false;
      }
      out = static_cast<Int>(whole);
      return true;
    }
    if (value->is_number_integer() && std::is_signed_v<Int>) {
      const auto whole = value->template get<std::int64_t>();
      if (whole < static_cast<std::int64_t>(std::numeric_limits<Int>::min())) {
        fail(path, key, "too small");
        return false;
      }
      out = static_cast<Int>(whole);
      return true;
    }
    fail(path, key, "not an integer");
    return false;
  }

  // A list of strings; false when absent, null and optional, or wrong.
  bool read_strings(const Json& object, std::string_view path, const char* key, std::vector<std::string>& out,
                    bool required) {
    const Json* list = field(object, path, key, required);
    if (!list) return false;
    if (!list->is_array()) {
      fail(path, key, "not a list");
      return false;
    }
    for (const Json& item : *list) {
      if (!item.is_string()) {
        fail(path, key, "not a list of strings");
        return false;
      }
      out.push_back(item.template get<std::string>());
    }
    return true;
  }
};

}  // namespace nccltune
