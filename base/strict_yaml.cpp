#include "base/strict_yaml.h"

#include <yaml-cpp/eventhandler.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <optional>
#include <set>
#include <sstream>
#include <system_error>

#include "base/atomic_file.h"
#include "base/clean_text.h"
#include "base/printable_text.h"
#include "base/utf8.h"
#include "base/yaml_error.h"

namespace nccltune {

namespace {

std::string shown(std::string_view text) {
  return printable_excerpt(text, 40);
}

int line_or(const YAML::Node& node, int fallback_line) {
  return node.IsDefined() && !node.IsNull() ? yaml_line(node) : fallback_line;
}

int line_of_offset(std::string_view text, std::size_t offset) {
  return 1 +
         static_cast<int>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(offset), '\n'));
}

// First pass over the parser's events: no anchors, no aliases, no explicit tags.
class GuardHandler : public YAML::EventHandler {
 public:
  std::optional<YamlFieldError> problem;

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override { check(mark, "?", anchor); }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override {
    note(mark, "aliases (*name) are not allowed");
  }
  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                const std::string&) override {
    check(mark, tag, anchor);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    check(mark, tag, anchor);
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    check(mark, tag, anchor);
  }
  void OnMapEnd() override {}

 private:
  void note(const YAML::Mark& mark, const std::string& message) {
    if (!problem) problem = YamlFieldError{mark.is_null() ? 0 : mark.line + 1, message};
  }
  void check(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor) {
    if (anchor != YAML::NullAnchor) note(mark, "anchors (&name) are not allowed");
    if (!tag.empty() && tag != "?" && tag != "!")
      note(mark,
           "explicit tags (" + shown(tag) + ") are not allowed; text that starts with ! goes in quotes");
  }
};

// The text checks that need no parser; a YamlFieldError when one fails.
void check_text(std::string_view text, std::size_t max_bytes) {
  if (text.size() > max_bytes)
    throw YamlFieldError{0, std::to_string(text.size()) + " bytes, more than the " +
                                (max_bytes % (1 << 20) == 0 ? std::to_string(max_bytes >> 20) + " MiB"
                                                            : std::to_string(max_bytes) + " bytes") +
                                " allowed"};
  if (const std::size_t nul = text.find('\0'); nul != std::string_view::npos)
    throw YamlFieldError{line_of_offset(text, nul), "contains a NUL byte"};
  for (std::size_t at = 0; at < text.size();) {
    const auto decoded = decode_utf8(text, at);
    if (!decoded) throw YamlFieldError{line_of_offset(text, at), "not valid UTF-8"};
    at += decoded->second;
  }
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
  if (value.size() > kMaxFreeText)
    yaml_fail(yaml_line(node), field,
              std::to_string(value.size()) + " bytes, more than " + std::to_string(kMaxFreeText));
  if (!is_clean_text(value))
    yaml_fail(yaml_line(node), field, "'" + shown(value) + "' has control characters or invalid UTF-8");
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
    if (value == "true" || value == "True" || value == "TRUE") return true;
    if (value == "false" || value == "False" || value == "FALSE") return false;
  }
  yaml_fail(yaml_line(node), field, "must be true or false");
}

bool yaml_is_null(const YAML::Node& node) {
  return !node.IsDefined() || node.IsNull();
}

std::optional<std::string> yaml_optional_text(const YAML::Node& node, const std::string& field) {
  if (yaml_is_null(node)) return std::nullopt;
  return yaml_text(node, field);
}

std::optional<int> yaml_optional_int(const YAML::Node& node, const std::string& field) {
  if (yaml_is_null(node)) return std::nullopt;
  return static_cast<int>(yaml_integer(node, field, 0, std::numeric_limits<int>::max()));
}

std::optional<bool> yaml_optional_bool(const YAML::Node& node, const std::string& field) {
  if (yaml_is_null(node)) return std::nullopt;
  return yaml_boolean(node, field);
}

Status parse_strict_yaml(std::string_view text, std::string_view origin,
                         const std::function<void(const YAML::Node& root)>& read, std::size_t max_bytes) {
  const std::string where(origin);
  try {
    check_text(text, max_bytes);
    const std::string document(text);
    {
      std::istringstream stream(document);
      YAML::Parser parser(stream);
      GuardHandler guard;
      int documents = 0;
      while (parser.HandleNextDocument(guard)) {
        if (guard.problem) throw *guard.problem;
        if (++documents > 1) throw YamlFieldError{0, "more than one YAML document"};
      }
    }
    read(YAML::Load(document));
    return Ok{};
  } catch (const YamlFieldError& error) {
    return Error{where + ":" + std::to_string(std::max(error.line, 1)) + ": " + error.message};
  } catch (const YAML::Exception& error) {
    return Error{yaml_error(where, error)};
  }
}

Status read_strict_yaml(const std::filesystem::path& file,
                        const std::function<void(const YAML::Node& root)>& read, std::size_t max_bytes) {
  const Result<std::string> text = read_text_file(file, max_bytes);
  if (!text) return Error{text.error()};
  return parse_strict_yaml(*text, file.string(), read, max_bytes);
}

std::string yaml_quoted(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (byte < 0x20 || byte == 0x7f) {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[byte >> 4];
      out += kHex[byte & 15];
    } else {
      out += c;
    }
  }
  return out + "\"";
}

}  // namespace nccltune
