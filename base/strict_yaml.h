// The one reader for YAML files that cross a trust boundary: profiles, node state, the node
// config, the search space, `check --expect` files, snapshots' nvml.yaml and meta.yaml, and fake
// GPU models. parse_strict_yaml refuses, before yaml-cpp builds anything, documents over the size
// cap, NUL bytes, invalid UTF-8, anchors, aliases (an alias bomb costs nothing to write and
// everything to walk), explicit tags and second documents. The field readers below refuse
// unknown keys, wrong types and out-of-range values. Every error is one line,
// "origin:line: field: message".
//
// The field readers throw YamlFieldError inside a `read` callback only; parse_strict_yaml turns
// it into a Status at the boundary.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <filesystem>
#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

#include "base/atomic_file.h"
#include "base/status.h"

namespace nccltune {

struct YamlFieldError {
  int line = 0;
  std::string message;
};

int yaml_line(const YAML::Node& node);  // 1-based, 0 when unknown
[[noreturn]] void yaml_fail(int line, const std::string& field, const std::string& message);
// An untagged plain scalar: not "quoted".
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

// A scalar that is clean text (is_clean_text: valid UTF-8, no control characters, at most
// kMaxFreeText bytes).
std::string yaml_text(const YAML::Node& node, const std::string& field);
long long yaml_integer(const YAML::Node& node, const std::string& field, long long min, long long max);
double yaml_number(const YAML::Node& node, const std::string& field);  // finite
// The one boolean grammar: a plain true, True, TRUE, false, False or FALSE (YAML 1.2's core
// schema). yes/no/on/off are refused, not read as YAML 1.1 would.
bool yaml_boolean(const YAML::Node& node, const std::string& field);

// Fields a file may leave out or set to null: nullopt then, else read as above (integers from 0
// to INT_MAX).
bool yaml_is_null(const YAML::Node& node);  // missing or null
std::optional<std::string> yaml_optional_text(const YAML::Node& node, const std::string& field);
std::optional<int> yaml_optional_int(const YAML::Node& node, const std::string& field);
std::optional<bool> yaml_optional_bool(const YAML::Node& node, const std::string& field);

// The other direction, for the files nccltune writes: `text` as a double-quoted YAML scalar, with
// '"' and '\\' escaped and control bytes as \xNN, so that any text reads back as itself.
std::string yaml_quoted(std::string_view text);

// Checks `text` (at most `max_bytes`), parses it and runs `read` on its root. An empty document
// gives a null root.
Status parse_strict_yaml(std::string_view text, std::string_view origin,
                         const std::function<void(const YAML::Node& root)>& read,
                         std::size_t max_bytes = kMaxConfigBytes);
// The same for a file: read whole (base/atomic_file.h's read_text_file), origin its path.
Status read_strict_yaml(const std::filesystem::path& file,
                        const std::function<void(const YAML::Node& root)>& read,
                        std::size_t max_bytes = kMaxConfigBytes);

}  // namespace nccltune
