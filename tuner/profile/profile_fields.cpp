#include "profile/profile_fields.h"

#include <charconv>
#include <cmath>
#include <limits>

#include "base/printable_text.h"
#include "base/strict_yaml.h"

namespace nccltune::profile_fields {

std::string shown(std::string_view text) {
  return printable_excerpt(text, 40);
}

std::uint64_t byte_count(const YAML::Node& node, const std::string& field) {
  if (yaml_is_plain(node)) {
    const std::string& value = node.Scalar();
    std::uint64_t number = 0;
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), number);
    if (ec == std::errc() && end == value.data() + value.size() && !value.empty()) return number;
  }
  yaml_fail(yaml_line(node), field, "must be a byte count (a whole number from 0)");
}

double number(const YAML::Node& node, const std::string& field) {
  if (yaml_is_plain(node)) {
    const std::string& value = node.Scalar();
    if (value == ".nan" || value == ".NaN" || value == ".NAN")
      return std::numeric_limits<double>::quiet_NaN();
    if (value == ".inf" || value == ".Inf" || value == ".INF" || value == "+.inf")
      return std::numeric_limits<double>::infinity();
    if (value == "-.inf" || value == "-.Inf" || value == "-.INF")
      return -std::numeric_limits<double>::infinity();
    std::string_view digits = value;
    if (!digits.empty() && digits.front() == '+') digits.remove_prefix(1);
    double number = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), number);
    if (ec == std::errc() && end == digits.data() + digits.size() && !digits.empty() &&
        digits.find_first_of("nNiI") == std::string_view::npos)
      return number;
  }
  yaml_fail(yaml_line(node), field, "must be a number");
}

double non_negative(const YAML::Node& node, const std::string& field) {
  const double value = number(node, field);
  if (!(value >= 0) || std::isinf(value)) yaml_fail(yaml_line(node), field, "must be a finite number from 0");
  return value;
}

}  // namespace nccltune::profile_fields
