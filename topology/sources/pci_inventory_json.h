// PciInventory as JSON: what the nccltune-hwloc-xml helper prints and its parent reads back.
#pragma once

#include <nlohmann/json.hpp>

#include "base/result.h"
#include "topology/sources/hwloc_source.h"

namespace nccltune {

nlohmann::json pci_inventory_to_json(const PciInventory& inventory);
// Strict: every field present and of its type, at most kMaxDevicesPerKind devices of each kind.
Result<PciInventory> pci_inventory_from_json(const nlohmann::json& json);

}  // namespace nccltune
