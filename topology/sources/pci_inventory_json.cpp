#include "topology/sources/pci_inventory_json.h"

#include "topology/node_topology.h"

namespace nccltune {
namespace {

using nlohmann::json;

json device_to_json(const PciDeviceInfo& device) {
  return {{"pci", device.pci},
          {"vendor_id", device.vendor_id},
          {"device_id", device.device_id},
          {"class_id", device.class_id},
          {"bridges", device.placement.bridges},
          {"host_bridge", device.placement.host_bridge},
          {"locality", device.placement.locality},
          {"numa", device.numa ? json(*device.numa) : json()},
          {"cpu_affinity", device.cpu_affinity ? json(*device.cpu_affinity) : json()},
          {"openfabrics", device.openfabrics},
          {"network", device.network},
          {"gpu_osdevs", device.gpu_osdevs}};
}

// json::get throws on a wrong type; the caller turns that into an error.
PciDeviceInfo device_from_json(const json& j) {
  PciDeviceInfo device;
  device.pci = j.at("pci").get<std::string>();
  device.vendor_id = j.at("vendor_id").get<unsigned>();
  device.device_id = j.at("device_id").get<unsigned>();
  device.class_id = j.at("class_id").get<unsigned>();
  device.placement.bridges = j.at("bridges").get<std::vector<std::string>>();
  device.placement.host_bridge = j.at("host_bridge").get<std::string>();
  device.placement.locality = j.at("locality").get<std::string>();
  if (!j.at("numa").is_null()) device.numa = j.at("numa").get<int>();
  if (!j.at("cpu_affinity").is_null()) device.cpu_affinity = j.at("cpu_affinity").get<std::string>();
  device.openfabrics = j.at("openfabrics").get<std::vector<std::string>>();
  device.network = j.at("network").get<std::vector<std::string>>();
  device.gpu_osdevs = j.at("gpu_osdevs").get<std::vector<std::string>>();
  return device;
}

std::vector<PciDeviceInfo> devices_from_json(const json& list, const char* kind) {
  if (!list.is_array()) throw std::runtime_error(std::string(kind) + " is not a list");
  if (list.size() > kMaxDevicesPerKind)
    throw std::runtime_error(std::to_string(list.size()) + " " + kind + ", more than the " +
                             std::to_string(kMaxDevicesPerKind) + " a node may have");
  std::vector<PciDeviceInfo> devices;
  for (const json& item : list) devices.push_back(device_from_json(item));
  return devices;
}

}  // namespace

json pci_inventory_to_json(const PciInventory& inventory) {
  auto list = [](const std::vector<PciDeviceInfo>& devices) {
    json out = json::array();
    for (const auto& device : devices) out.push_back(device_to_json(device));
    return out;
  };
  return {{"hwloc_version", inventory.hwloc_version},
          {"gpus", list(inventory.gpus)},
          {"nics", list(inventory.nics)},
          {"nvswitches", list(inventory.nvswitches)},
          {"interfaces", list(inventory.interfaces)}};
}

Result<PciInventory> pci_inventory_from_json(const json& j) {
  try {
    PciInventory inventory;
    inventory.hwloc_version = j.at("hwloc_version").get<std::string>();
    inventory.gpus = devices_from_json(j.at("gpus"), "GPUs");
    inventory.nics = devices_from_json(j.at("nics"), "NICs");
    inventory.nvswitches = devices_from_json(j.at("nvswitches"), "NVSwitches");
    inventory.interfaces = devices_from_json(j.at("interfaces"), "network interfaces");
    for (const auto& nic : inventory.nics)
      if (nic.openfabrics.empty()) throw std::runtime_error("a NIC without a verbs device");
    return inventory;
  } catch (const std::exception& error) {
    return Error{std::string("malformed inventory: ") + error.what()};
  }
}

}  // namespace nccltune
