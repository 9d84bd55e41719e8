// The profile reader's field readers that more than one of its files uses (profile_reader.cpp,
// profile_switches_reader.cpp): each reads one YAML scalar strictly, or fails with one line naming
// the line and the field (base/strict_yaml.h).
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "profile/profile.h"

namespace nccltune::profile_fields {

std::string shown(std::string_view text);  // a printable excerpt of outside text, for an error
std::uint64_t byte_count(const YAML::Node& node, const std::string& field);
double number(const YAML::Node& node, const std::string& field);  // YAML's .nan and .inf included
double non_negative(const YAML::Node& node, const std::string& field);

// `switches` of a collective (profile.h, SizeSwitch).
std::vector<SizeSwitch> parse_switches(const YAML::Node& node, int line, const std::string& field);

}  // namespace nccltune::profile_fields
