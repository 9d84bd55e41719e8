#include "topology/sources/hwloc_source.h"

#include <hwloc.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "topology/node_topology.h"

namespace nccltune {
namespace {

constexpr unsigned kNvidiaVendor = 0x10de;

struct TopologyDeleter {
  void operator()(hwloc_topology* topology) const { hwloc_topology_destroy(topology); }
};
using TopologyHandle = std::unique_ptr<hwloc_topology, TopologyDeleter>;

std::string format_pci(unsigned domain, unsigned bus, unsigned dev, unsigned func) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%04x:%02x:%02x.%x", domain, bus, dev, func);
  return buf;
}

std::string bitmap_list(hwloc_const_bitmap_t bitmap) {
  char* text = nullptr;
  if (hwloc_bitmap_list_asprintf(&text, bitmap) < 0 || !text) return {};
  std::string result(text);
  std::free(text);
  return result;
}

// The value of an enum field as stored: an XML import can hold a number hwloc's enum does not
// define, and reading that as the enum type is undefined behaviour.
template <class Enum>
unsigned raw_value(const Enum& field) {
  static_assert(sizeof(Enum) == sizeof(unsigned));
  unsigned value;
  std::memcpy(&value, &field, sizeof value);
  return value;
}

// Loads a topology with every PCI device, bridge and OS device kept: the live machine, or the
// XML in `xml` (a NUL-terminated string, as hwloc takes it).
Result<TopologyHandle> load(const std::string* xml) {
  hwloc_topology_t raw = nullptr;
  if (hwloc_topology_init(&raw) != 0) return Error{"hwloc: cannot initialise a topology"};
  TopologyHandle topology(raw);
  hwloc_topology_set_io_types_filter(raw, HWLOC_TYPE_FILTER_KEEP_ALL);
  if (xml && hwloc_topology_set_xmlbuffer(raw, xml->c_str(), static_cast<int>(xml->size() + 1)) != 0)
    return Error{"hwloc cannot read this XML"};
  if (hwloc_topology_load(raw) != 0) return Error{"hwloc failed to load the topology"};
  return topology;
}

PciPlacement placement_of(hwloc_topology_t topology, hwloc_obj_t device) {
  PciPlacement placement;
  hwloc_obj_t obj = device->parent;
  for (; obj && obj->type == HWLOC_OBJ_BRIDGE; obj = obj->parent) {
    const auto& bridge = obj->attr->bridge;
    if (raw_value(bridge.upstream_type) == HWLOC_OBJ_BRIDGE_HOST) {
      placement.host_bridge = "hostbridge#" + std::to_string(obj->gp_index);
      break;
    }
    const auto& pci = bridge.upstream.pci;
    placement.bridges.push_back(format_pci(pci.domain, pci.bus, pci.dev, pci.func));
  }
  hwloc_obj_t local = hwloc_get_non_io_ancestor_obj(topology, device);
  if (placement.host_bridge.empty()) {
    // No host bridge object (hwloc may omit it): the domain and bus are the root complex.
    placement.host_bridge = "domain#" + std::to_string(device->attr->pcidev.domain);
  }
  placement.locality = local && local->nodeset ? bitmap_list(local->nodeset) : std::string("?");
  return placement;
}

PciDeviceInfo describe(hwloc_topology_t topology, hwloc_obj_t obj) {
  const auto& pci = obj->attr->pcidev;
  PciDeviceInfo info;
  info.pci = format_pci(pci.domain, pci.bus, pci.dev, pci.func);
  info.vendor_id = pci.vendor_id;
  info.device_id = pci.device_id;
  info.class_id = pci.class_id;
  info.placement = placement_of(topology, obj);
  if (hwloc_obj_t local = hwloc_get_non_io_ancestor_obj(topology, obj)) {
    if (local->nodeset && hwloc_bitmap_weight(local->nodeset) == 1)
      info.numa = hwloc_bitmap_first(local->nodeset);
    if (local->cpuset) info.cpu_affinity = bitmap_list(local->cpuset);
  }
  for (hwloc_obj_t child = obj->io_first_child; child; child = child->next_sibling) {
    if (child->type != HWLOC_OBJ_OS_DEVICE || !child->name) continue;
    switch (raw_value(child->attr->osdev.type)) {
      case HWLOC_OBJ_OSDEV_OPENFABRICS: info.openfabrics.emplace_back(child->name); break;
      case HWLOC_OBJ_OSDEV_NETWORK: info.network.emplace_back(child->name); break;
      case HWLOC_OBJ_OSDEV_GPU:
      case HWLOC_OBJ_OSDEV_COPROC: info.gpu_osdevs.emplace_back(child->name); break;
      default: break;
    }
  }
  return info;
}

bool is_nvidia_gpu(const PciDeviceInfo& d) {
  const unsigned base_class = d.class_id >> 8;
  return d.vendor_id == kNvidiaVendor && base_class == 0x03;  // VGA (0300) or 3D (0302)
}

bool is_nvswitch(const PciDeviceInfo& d) {
  return d.vendor_id == kNvidiaVendor && d.class_id == 0x0680;  // "bridge: other"
}

PciInventory inventory_of(hwloc_topology_t topology) {
  PciInventory inventory;
  for (hwloc_obj_t obj = hwloc_get_next_pcidev(topology, nullptr); obj;
       obj = hwloc_get_next_pcidev(topology, obj)) {
    PciDeviceInfo info = describe(topology, obj);
    if (is_nvidia_gpu(info))
      inventory.gpus.push_back(std::move(info));
    else if (is_nvswitch(info))
      inventory.nvswitches.push_back(std::move(info));
    else if (!info.openfabrics.empty())
      inventory.nics.push_back(std::move(info));
    else if (!info.network.empty())
      inventory.interfaces.push_back(std::move(info));
  }
  auto by_pci = [](const PciDeviceInfo& a, const PciDeviceInfo& b) { return a.pci < b.pci; };
  std::sort(inventory.gpus.begin(), inventory.gpus.end(), by_pci);
  std::sort(inventory.nics.begin(), inventory.nics.end(), [](const auto& a, const auto& b) {
    return natural_less(a.openfabrics.front(), b.openfabrics.front());
  });
  unsigned version = hwloc_get_api_version();
  inventory.hwloc_version = std::to_string(version >> 16) + "." + std::to_string((version >> 8) & 0xff) +
                            "." + std::to_string(version & 0xff);
  return inventory;
}

}  // namespace

Result<PciInventory> read_hwloc_live() {
  auto topology = load(nullptr);
  if (!topology) return Error{topology.error()};
  return inventory_of(topology->get());
}

Result<PciInventory> read_hwloc_xml_in_process(const std::string& xml) {
  if (xml.size() >= static_cast<std::size_t>(INT32_MAX)) return Error{"hwloc: XML too large"};
  auto topology = load(&xml);
  if (!topology) return Error{topology.error()};
  return inventory_of(topology->get());
}

Status export_hwloc_xml(const std::filesystem::path& xml) {
  auto topology = load(nullptr);
  if (!topology) return Error{topology.error()};
  if (hwloc_topology_export_xml(topology->get(), xml.c_str(), 0) != 0)
    return Error{xml.string() + ": hwloc cannot write the XML export"};
  return Ok{};
}

}  // namespace nccltune
