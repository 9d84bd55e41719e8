#include "daemon/drift.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

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

// "gpus 7, was 8" for each hardware field of the node type known on both sides that differs.
std::vector<std::string> changed_hardware(const NodeType& was, const NodeType& now) {
  std::vector<std::string> changes;
  const auto text = [&](const char* field, const std::string& a, const std::string& b) {
    if (!a.empty() && !b.empty() && a != b) changes.push_back(fmt::format("{} '{}', was '{}'", field, b, a));
  };
  const auto number = [&](const char* field, int a, int b) {  // 0: unknown (or none, for nvlinks)
    if (a != 0 && b != 0 && a != b) changes.push_back(fmt::format("{} {}, was {}", field, b, a));
  };
  text("gpu", was.gpu, now.gpu);
  number("gpus", was.gpus, now.gpus);
  number("gpu_sm", was.gpu_sm, now.gpu_sm);
  if (was.nvswitch && now.nvswitch && *was.nvswitch != *now.nvswitch)
    changes.push_back(fmt::format("nvswitch {}, was {}", *now.nvswitch, *was.nvswitch));
  number("nvlinks", was.nvlinks, now.nvlinks);
  if (was.mnnvl != now.mnnvl) changes.push_back(fmt::format("mnnvl {}, was {}", now.mnnvl, was.mnnvl));
  if (was.nics && now.nics && *was.nics != *now.nics)
    changes.push_back(fmt::format("nics {}, was {}", *now.nics, *was.nics));
  text("nic", was.nic, now.nic);  // names the link layer, so nic_ethernet is compared with it
  number("nic_rate_gbps", was.nic_rate_gbps, now.nic_rate_gbps);
  text("gpu_nic_affinity", was.gpu_nic_affinity, now.gpu_nic_affinity);
  return changes;
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
  if (const auto changes = changed_hardware(last_good.node_type, current.node_type); !changes.empty())
    drift.push_back({"node_type_changed", "node",
                     fmt::format("node type is {}, was {} ({})", current.node_type_key,
                                 last_good.node_type_key, fmt::join(changes, "; "))});
  return drift;
}

}  // namespace nccltune
