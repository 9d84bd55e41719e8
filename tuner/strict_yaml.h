// Field readers for small, strict YAML documents (node state, daemon config): unknown keys, wrong
// types and out-of-range values are errors "origin:line: field: message". The readers throw
// YamlFieldError inside a parser only; parse_strict_yaml turns it into a Result at the boundary.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <functional>
#include <initializer_list>
#include <string>
#include <string_view>

#include "result.h"

namespace nccltune {

struct YamlFieldError {
  int line = 0;
  std::string message;
};

int yaml_line(const YAML::Node& node);  // 1-based, 0 when unknown
[[noreturn]] void yaml_fail(int line, const std::string& field, const std::string& message);
// An untagged plain scalar: not "quoted", not !tagged.
bool yaml_is_plain(const YAML::Node& node);

std::string yaml_child(const std::string& field, std::string_view key);  // "daemon.interval"
std::string yaml_item(const std::string& field, std::size_t index);      // "per_size[2]"

// Every key of `map` (which must be a map) is in `allowed`, a string, and appears once.
void yaml_check_keys(const YAML::Node& map, const std::string& field,
                     std::initializer_list<std::string_view> allowed);
void yaml_expect_map(const YAML::Node& node, const std::string& field);
void yaml_expect_list(const YAML::Node& node, const std::string& field);
// As above, but a missing or null node is reported at `fallback_line` (yaml-cpp marks an empty
// value where the next token starts, so its own mark would name the wrong line).
void yaml_expect_map(const YAML::Node& node, const std::string& field, int fallback_line);
void yaml_expect_list(const YAML::Node& node, const std::string& field, int fallback_line);

// Printable text without control characters or invalid UTF-8, at most 4096 bytes.
std::string yaml_text(const YAML::Node& node, const std::string& field);
long long yaml_integer(const YAML::Node& node, const std::string& field, long long min, long long max);
double yaml_number(const YAML::Node& node, const std::string& field);  // finite
bool yaml_boolean(const YAML::Node& node, const std::string& field);

// Parses the document (at most 1 MiB, no NUL bytes) and runs `read` on its root; every error,
// the parser's own included, is one line naming `origin`.
Result<bool> parse_strict_yaml(std::string_view text, std::string_view origin,
                               const std::function<void(const YAML::Node& root)>& read);

}  // namespace nccltune
