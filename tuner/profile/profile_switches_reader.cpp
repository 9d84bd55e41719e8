// Reading a collective's `switches` (profile.h, SizeSwitch), strictly, as profile_reader.cpp
// reads the rest.
#include <algorithm>
#include <cmath>
#include <iterator>
#include <utility>

#include "base/strict_yaml.h"
#include "profile/nccl_names.h"
#include "profile/profile_fields.h"

namespace nccltune::profile_fields {
namespace {

// "Tree/LL128": an algorithm and a protocol as NCCL names them (without case, as NCCL reads them).
std::string pair_name(const YAML::Node& node, const std::string& field) {
  const std::string value = yaml_text(node, field);
  const std::size_t slash = value.find('/');
  if (slash == std::string::npos || value.find('/', slash + 1) != std::string::npos)
    yaml_fail(yaml_line(node), field, "'" + shown(value) + "' is not algorithm/protocol (Ring/LL128)");
  if (!nccl_algorithm_index(std::string_view(value).substr(0, slash)))
    yaml_fail(yaml_line(node), field,
              "'" + shown(value) +
                  "' names no NCCL algorithm (Tree, Ring, CollNetDirect, CollNetChain, NVLS, "
                  "NVLSTree, PAT)");
  if (!nccl_protocol_index(std::string_view(value).substr(slash + 1)))
    yaml_fail(yaml_line(node), field, "'" + shown(value) + "' names no NCCL protocol (LL, LL128, Simple)");
  return value;
}

// A fitted latency: a least-squares intercept, which noise may put below 0, so any finite number.
double finite_number(const YAML::Node& node, const std::string& field) {
  const double value = number(node, field);
  if (!std::isfinite(value)) yaml_fail(yaml_line(node), field, "must be a finite number");
  return value;
}

// What search/crossover.h's to_string(CrossoverFit) writes (profile/ does not depend on search/).
constexpr std::string_view kCrossing = "crossing";
constexpr std::string_view kSwitchFits[] = {kCrossing, "parallel", "outside-bracket", "no-bandwidth"};

// `switches`: each where a per_size choice gives way to the next between two measured sizes, with
// the fits that put it there (profile.h, SizeSwitch). Every field is required: a switch without
// its evidence says nothing the per_size ranges do not.
}  // namespace

std::vector<SizeSwitch> parse_switches(const YAML::Node& node, int line, const std::string& field) {
  yaml_expect_list(node, field, line);
  std::vector<SizeSwitch> switches;
  for (std::size_t i = 0; i < node.size(); ++i) {
    const YAML::Node entry = node[i];
    const std::string at = yaml_item(field, i);
    const auto child = [&](const char* key) { return yaml_child(at, key); };
    yaml_expect_map(entry, at, yaml_line(node));
    yaml_check_keys(entry, at,
                    {"lo", "hi", "bytes", "fit", "below", "above", "below_latency_us", "below_gbps",
                     "above_latency_us", "above_gbps"});
    for (const char* key : {"lo", "hi", "bytes", "fit", "below", "above", "below_latency_us", "below_gbps",
                            "above_latency_us", "above_gbps"})
      if (!entry[key]) yaml_fail(yaml_line(entry), child(key), "missing");
    SizeSwitch s;
    s.lo = byte_count(entry["lo"], child("lo"));
    s.hi = byte_count(entry["hi"], child("hi"));
    s.bytes = byte_count(entry["bytes"], child("bytes"));
    if (s.hi <= s.lo)
      yaml_fail(yaml_line(entry["hi"]), child("hi"), "must be above lo (" + std::to_string(s.lo) + ")");
    if (!switches.empty() && s.lo < switches.back().hi)
      yaml_fail(yaml_line(entry["lo"]), child("lo"),
                "overlaps or precedes the switch before it (whose hi is " +
                    std::to_string(switches.back().hi) + ")");
    s.fit = yaml_text(entry["fit"], child("fit"));
    if (std::find(std::begin(kSwitchFits), std::end(kSwitchFits), s.fit) == std::end(kSwitchFits))
      yaml_fail(yaml_line(entry["fit"]), child("fit"),
                "unknown fit '" + shown(s.fit) + "' (crossing, parallel, outside-bracket, no-bandwidth)");
    // A crossing puts the switch where the fitted costs meet, inside the bracket; any other fit
    // leaves it at hi, the smallest size where `above` measured faster.
    if (s.fit == kCrossing && !(s.lo < s.bytes && s.bytes <= s.hi))
      yaml_fail(yaml_line(entry["bytes"]), child("bytes"),
                std::to_string(s.bytes) + " is outside the bracket: a crossing is above lo and at most hi");
    if (s.fit != kCrossing && s.bytes != s.hi)
      yaml_fail(yaml_line(entry["bytes"]), child("bytes"),
                std::to_string(s.bytes) + " is not hi (" + std::to_string(s.hi) +
                    "): without a crossing (fit " + s.fit + ") the switch stays at the size measured");
    s.below = pair_name(entry["below"], child("below"));
    s.above = pair_name(entry["above"], child("above"));
    if (same_text_ignoring_case(s.below, s.above))
      yaml_fail(yaml_line(entry["above"]), child("above"), "the same as below: a switch changes the choice");
    s.below_latency_us = finite_number(entry["below_latency_us"], child("below_latency_us"));
    s.above_latency_us = finite_number(entry["above_latency_us"], child("above_latency_us"));
    s.below_gbps = non_negative(entry["below_gbps"], child("below_gbps"));
    s.above_gbps = non_negative(entry["above_gbps"], child("above_gbps"));
    // A fit whose time does not grow with size has no bandwidth (0); the other verdicts need both.
    for (const auto& [key, gbps] :
         {std::pair{"below_gbps", s.below_gbps}, std::pair{"above_gbps", s.above_gbps}})
      if (gbps == 0 && s.fit != "no-bandwidth")
        yaml_fail(yaml_line(entry[key]), child(key), "0 is only a no-bandwidth fit's (fit is " + s.fit + ")");
    switches.push_back(std::move(s));
  }
  return switches;
}

}  // namespace nccltune::profile_fields
