#include "drift.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <string>

namespace nccltune {

namespace {

using Identity = std::optional<std::string> DeviceState::*;

// The device of `current` that is `wanted`: by identity (PCI address, verbs name) when the
// current scan knows identities, else by id.
const DeviceState* find_device(const std::vector<DeviceState>& current, const DeviceState& wanted,
                               Identity identity) {
  const bool identities_known = (wanted.*identity).has_value() &&
                                std::any_of(current.begin(), current.end(),
                                            [&](const DeviceState& d) { return (d.*identity).has_value(); });
  for (const DeviceState& device : current) {
    if (identities_known ? device.*identity == wanted.*identity : device.id == wanted.id) return &device;
  }
  return nullptr;
}

std::string subject(const DeviceState& device, Identity identity) {
  return device.*identity ? device.id + " " + *(device.*identity) : device.id;
}

void compare_link(const DeviceState& was, const DeviceState& now, const std::string& who,
                  std::vector<DriftEntry>& out) {
  if (was.pcie.width && now.pcie.width && *now.pcie.width < *was.pcie.width)
    out.push_back({"link_narrower", who,
                   fmt::format("{} PCIe link is x{}, was x{}", who, *now.pcie.width, *was.pcie.width)});
}

}  // namespace

std::vector<DriftEntry> compare_with_last_good(const NodeState& last_good, const NodeState& current) {
  std::vector<DriftEntry> drift;
  for (const DeviceState& was : last_good.gpus) {
    const std::string who = subject(was, &DeviceState::pci);
    const DeviceState* now = find_device(current.gpus, was, &DeviceState::pci);
    if (!now) {
      drift.push_back({"gpu_missing", who, who + " is missing (" + was.name.value_or("unnamed GPU") + ")"});
      continue;
    }
    compare_link(was, *now, who, drift);
  }
  for (const DeviceState& was : last_good.nics) {
    const std::string who = subject(was, &DeviceState::name);
    const DeviceState* now = find_device(current.nics, was, &DeviceState::name);
    if (!now) {
      drift.push_back(
          {"nic_missing", who, who + " is missing" + (was.pci ? " (was at " + *was.pci + ")" : "")});
      continue;
    }
    if (was.port_state == "ACTIVE" && now->port_state && *now->port_state != "ACTIVE")
      drift.push_back({"port_not_active", who, who + " port is " + *now->port_state + ", was ACTIVE"});
    // A port that is down reports a meaningless rate: only an ACTIVE port's rate is compared.
    if (was.rate_gbps && now->rate_gbps && *now->rate_gbps < *was.rate_gbps &&
        (!now->port_state || *now->port_state == "ACTIVE"))
      drift.push_back({"nic_rate_lower", who,
                       fmt::format("{} runs at {:g} Gb/s, was {:g}", who, *now->rate_gbps, *was.rate_gbps)});
    compare_link(was, *now, who, drift);
  }
  if (!last_good.node_type_key.empty() && !current.node_type_key.empty() &&
      last_good.node_type_key != current.node_type_key)
    drift.push_back({"node_type_changed", "node",
                     "node type is " + current.node_type_key + ", was " + last_good.node_type_key});
  return drift;
}

}  // namespace nccltune
