// Result<T>: a value or a one-line error, for the core's fallible functions (C++20 has no
// std::expected). Errors name the file and field they are about.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace nccltune {

struct Error {
  std::string message;
};

// "origin:line: what", the one-line form of an error in a text file or tool output.
inline Error error_at(std::string_view origin, int line, const std::string& what) {
  return Error{std::string(origin) + ":" + std::to_string(line) + ": " + what};
}

template <class T>
class Result {
 public:
  Result(T value) : value_(std::move(value)) {}              // NOLINT: implicit, like std::expected
  Result(Error error) : error_(std::move(error.message)) {}  // NOLINT

  bool ok() const { return value_.has_value(); }
  explicit operator bool() const { return ok(); }
  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  T& operator*() & { return *value_; }
  const T& operator*() const& { return *value_; }
  const std::string& error() const { return error_; }

 private:
  std::optional<T> value_;
  std::string error_;
};

}  // namespace nccltune
