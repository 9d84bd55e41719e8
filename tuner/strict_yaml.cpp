#include "strict_yaml.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <set>
#include <system_error>

#include "printable_text.h"
#include "profile.h"
#include "yaml_error.h"

namespace nccltune {

namespace {

constexpr std::size_t kMaxDocumentBytes = std::size_t{1} << 20;

std::string shown(std::string_view text) {
  return printable_excerpt(text, 40);
}

int line_or(const YAML::Node& node, int fallback_line) {
  return node.IsDefined() && !node.IsNull() ? yaml_line(node) : fallback_line;
}

}  // namespace

int yaml_line(const YAML::Node& node) {
  const YAML::Mark mark = node.Mark();
  return mark.is_null() ? 0 : mark.line + 1;
}

bool yaml_is_plain(const YAML::Node& node) {
  return node.IsScalar() && node.Tag() == "?";
}

void yaml_fail(int line, const std::string& field, const std::string& message) {
  throw YamlFieldError{line, field.empty() ? message : field + ": " + message};
}

std::string yaml_child(const std::string& field, std::string_view key) {
  return field.empty() ? std::string(key) : field + "." + std::string(key);
}

std::string yaml_item(const std::string& field, std::size_t index) {
  return field + "[" + std::to_string(index) + "]";
}

void yaml_expect_map(const YAML::Node& node, const std::string& field) {
  if (!node.IsMap()) yaml_fail(yaml_line(node), field, "must be a map");
}

void yaml_expect_list(const YAML::Node& node, const std::string& field) {
  if (!node.IsSequence()) yaml_fail(yaml_line(node), field, "must be a list");
}

void yaml_expect_map(const YAML::Node& node, const std::string& field, int fallback_line) {
  if (!node.IsMap()) yaml_fail(line_or(node, fallback_line), field, "must be a map");
}

void yaml_expect_list(const YAML::Node& node, const std::string& field, int fallback_line) {
  if (!node.IsSequence()) yaml_fail(line_or(node, fallback_line), field, "must be a list");
}

void yaml_check_keys(const YAML::Node& map, const std::string& field,
                     std::initializer_list<std::string_view> allowed) {
  yaml_expect_map(map, field);
  std::set<std::string> seen;
  for (const auto& entry : map) {
    if (!entry.first.IsScalar()) yaml_fail(yaml_line(entry.first), field, "keys must be strings");
    const std::string& key = entry.first.Scalar();
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end())
      yaml_fail(yaml_line(entry.first), field, "unknown key '" + shown(key) + "'");
    if (!seen.insert(key).second) yaml_fail(yaml_line(entry.first), yaml_child(field, key), "appears twice");
  }
}

std::string yaml_text(const YAML::Node& node, const std::string& field) {
  if (!node.IsScalar()) yaml_fail(yaml_line(node), field, "must be a string");
  const std::string& value = node.Scalar();
  if (!is_clean_text(value))
    yaml_fail(yaml_line(node), field,
              "'" + shown(value) + "' has control characters, invalid UTF-8 or is too long");
  return value;
}

long long yaml_integer(const YAML::Node& node, const std::string& field, long long min, long long max) {
  if (yaml_is_plain(node)) {
    const std::string& value = node.Scalar();
    long long number = 0;
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), number);
    if (ec == std::errc() && end == value.data() + value.size() && !value.empty()) {
      if (number < min || number > max)
        yaml_fail(yaml_line(node), field,
                  std::to_string(number) + " is outside " + std::to_string(min) + ".." + std::to_string(max));
      return number;
    }
  }
  yaml_fail(yaml_line(node), field, "must be a whole number");
}

double yaml_number(const YAML::Node& node, const std::string& field) {
  if (yaml_is_plain(node)) {
    const std::string& value = node.Scalar();
    double number = 0;
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), number);
    if (ec == std::errc() && end == value.data() + value.size() && !value.empty() && std::isfinite(number))
      return number;
  }
  yaml_fail(yaml_line(node), field, "must be a finite number");
}

bool yaml_boolean(const YAML::Node& node, const std::string& field) {
  if (yaml_is_plain(node)) {
    const std::string& value = node.Scalar();
    if (value == "true") return true;
    if (value == "false") return false;
  }
  yaml_fail(yaml_line(node), field, "must be true or false");
}

Result<bool> parse_strict_yaml(std::string_view text, std::string_view origin,
                               const std::function<void(const YAML::Node& root)>& read) {
  const std::string where(origin);
  if (text.size() > kMaxDocumentBytes)
    return Error{where + ": " + std::to_string(text.size()) + " bytes, more than the 1 MiB allowed"};
  if (text.find('\0') != std::string_view::npos) return Error{where + ": contains a NUL byte"};
  try {
    read(YAML::Load(std::string(text)));
    return true;
  } catch (const YamlFieldError& error) {
    return Error{where + ":" + std::to_string(std::max(error.line, 1)) + ": " + error.message};
  } catch (const YAML::Exception& error) {
    return Error{yaml_error(where, error)};
  }
}

}  // namespace nccltune
