#include "topology/sources/sysfs_source.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <sstream>

#include "base/atomic_file.h"
#include "base/printable_text.h"
#include "base/utf8.h"
#include "topology/roce.h"

namespace nccltune {
namespace fs = std::filesystem;

namespace {

std::optional<int> read_int(const fs::path& file) {
  auto text = read_attribute_line(file);
  if (!text || text->empty()) return std::nullopt;
  try {
    size_t used = 0;
    int value = std::stoi(*text, &used, 0);
    if (used != text->size()) return std::nullopt;
    return value;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::vector<std::string> list_dir(const fs::path& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec))
    names.push_back(repaired_utf8(entry.path().filename().string()));
  std::sort(names.begin(), names.end(), natural_less);
  return names;
}

std::optional<std::string> pci_of_link(const fs::path& device_link) {
  std::error_code ec;
  fs::path target = fs::read_symlink(device_link, ec);
  if (ec) return std::nullopt;
  return normalize_pci_address(target.filename().string());
}

void add_note(std::vector<std::string>* notes, std::string note) {
  if (notes) notes->push_back(std::move(note));
}

// The used entries of a RoCE port's GID table. Live, every index up to the table's length exists
// and an unused one reads as zeros (its gid_attrs fail with EINVAL); a snapshot keeps the used
// ones only. Indexes past kMaxGidsPerPort are not read.
std::optional<std::vector<RoceGid>> read_gid_table(const fs::path& port_dir, const std::string& where,
                                                   std::vector<std::string>* notes) {
  std::error_code ec;
  if (!fs::is_directory(port_dir / "gids", ec)) return std::nullopt;
  std::vector<RoceGid> table;
  for (int index = 0; index < kMaxGidsPerPort; ++index) {
    const std::string name = std::to_string(index);
    const auto text = read_attribute_line(port_dir / "gids" / name);
    if (!text) continue;
    const auto gid = normalize_gid(*text);
    if (!gid) {
      add_note(notes, where + " GID " + name + ": '" + printable_excerpt(*text, 48) +
                          "' is not a GID; read as unknown");
      continue;
    }
    if (is_empty_gid(*gid)) continue;
    RoceGid entry{index, *gid, read_attribute_line(port_dir / "gid_attrs/types" / name),
                  read_attribute_line(port_dir / "gid_attrs/ndevs" / name)};
    if (entry.type && !is_gid_type(*entry.type)) {
      add_note(notes, where + " GID " + name + ": type '" + printable_excerpt(*entry.type, 48) +
                          "' is neither 'IB/RoCE v1' nor 'RoCE v2'; read as unknown");
      entry.type.reset();
    }
    if (entry.ndev && !is_interface_name(*entry.ndev)) {
      add_note(notes, where + " GID " + name + ": netdev '" + printable_excerpt(*entry.ndev, 48) +
                          "' is not an interface name; read as unknown");
      entry.ndev.reset();
    }
    table.push_back(std::move(entry));
  }
  if (fs::exists(port_dir / "gids" / std::to_string(kMaxGidsPerPort), ec))
    add_note(notes, where + ": GID table longer than " + std::to_string(kMaxGidsPerPort) +
                        " entries; indexes 0-" + std::to_string(kMaxGidsPerPort - 1) + " read");
  return table;
}

}  // namespace

std::optional<std::string> read_attribute_line(const fs::path& file) {
  Result<std::string> text = read_text_file(file, kMaxSysfsFileBytes);
  if (!text) return std::nullopt;
  std::string line = text->substr(0, text->find('\n'));
  while (!line.empty() && (line.back() == '\n' || line.back() == ' ' || line.back() == '\r')) line.pop_back();
  return repaired_utf8(line);  // a snapshot's copy may be damaged; what is kept is written as JSON
}

bool is_interface_name(std::string_view name) {
  constexpr std::size_t kMaxInterfaceName = 15;  // IFNAMSIZ less the NUL
  if (name.empty() || name.size() > kMaxInterfaceName || name == "." || name == "..") return false;
  return std::all_of(name.begin(), name.end(),
                     [](char c) { return c > ' ' && c < 0x7f && c != '/' && c != ':'; });
}

std::optional<int> pcie_gen_from_speed(std::string_view text) {
  double gts = 0;
  try {
    gts = std::stod(std::string(text));
  } catch (const std::exception&) {
    return std::nullopt;
  }
  static constexpr std::array<std::pair<double, int>, 6> kGens{
      {{2.5, 1}, {5.0, 2}, {8.0, 3}, {16.0, 4}, {32.0, 5}, {64.0, 6}}};
  for (auto [rate, gen] : kGens)
    if (gts > rate * 0.9 && gts < rate * 1.1) return gen;
  return std::nullopt;
}

std::optional<double> ib_rate_gbps(std::string_view text) {
  try {
    size_t used = 0;
    double rate = std::stod(std::string(text), &used);
    if (used == 0 || rate <= 0) return std::nullopt;
    return rate;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::optional<std::string> ib_port_state(std::string_view text) {
  auto colon = text.find(':');
  std::string_view state = colon == std::string_view::npos ? text : text.substr(colon + 1);
  while (!state.empty() && state.front() == ' ') state.remove_prefix(1);
  if (state.empty()) return std::nullopt;
  return std::string(state);
}

fs::path SysfsSource::pci_dir(const std::string& pci) const {
  return root_ / "bus/pci/devices" / pci;
}

PcieLink SysfsSource::pcie_link(const std::string& pci) const {
  const fs::path dir = pci_dir(pci);
  PcieLink link;
  if (auto speed = read_attribute_line(dir / "current_link_speed")) link.gen = pcie_gen_from_speed(*speed);
  if (auto speed = read_attribute_line(dir / "max_link_speed")) link.max_gen = pcie_gen_from_speed(*speed);
  auto width = read_int(dir / "current_link_width");
  auto max_width = read_int(dir / "max_link_width");
  if (width && *width > 0) link.width = width;
  if (max_width && *max_width > 0) link.max_width = max_width;
  return link;
}

std::optional<int> SysfsSource::numa_node(const std::string& pci) const {
  auto node = read_int(pci_dir(pci) / "numa_node");
  if (!node || *node < 0) return std::nullopt;
  return node;
}

std::optional<bool> SysfsSource::acs_redirect(const std::string& pci) const {
  const Result<std::string> bytes = read_text_file(pci_dir(pci) / "config", kMaxSysfsFileBytes);
  if (!bytes) return std::nullopt;
  const std::vector<unsigned char> config(bytes->begin(), bytes->end());
  if (config.size() <= 0x100) return std::nullopt;  // extended space is readable by root only
  auto read16 = [&](size_t at) { return static_cast<uint16_t>(config[at] | (config[at + 1] << 8)); };
  auto read32 = [&](size_t at) {
    return static_cast<uint32_t>(read16(at)) | (static_cast<uint32_t>(read16(at + 2)) << 16);
  };
  constexpr uint16_t kAcsCapability = 0x000d;
  constexpr uint16_t kRequestRedirect = 1u << 2, kCompletionRedirect = 1u << 3;
  size_t at = 0x100;
  for (int hops = 0; hops < 64 && at >= 0x100 && at + 8 <= config.size(); ++hops) {
    const uint32_t header = read32(at);
    if (header == 0 || header == 0xffffffff) return std::nullopt;
    if ((header & 0xffff) == kAcsCapability) {
      const uint16_t control = read16(at + 6);
      return (control & (kRequestRedirect | kCompletionRedirect)) != 0;
    }
    at = (header >> 20) & 0xffc;
  }
  return std::nullopt;
}

IommuDomain SysfsSource::iommu_domain(const std::string& pci) const {
  const fs::path groups = root_ / "kernel/iommu_groups";
  std::error_code ec;
  if (!fs::is_directory(groups, ec) || !fs::is_directory(pci_dir(pci), ec)) return std::nullopt;
  const fs::path target = fs::read_symlink(pci_dir(pci) / "iommu_group", ec);
  if (ec) return std::string("none");  // no group: no IOMMU in front of this device
  // Only the group's number is taken from the link, so a snapshot's link cannot point elsewhere.
  const std::string group = target.filename().string();
  if (group.empty() || group.size() > 9 ||
      !std::all_of(group.begin(), group.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  return read_attribute_line(groups / group / "type");
}

std::vector<std::string> SysfsSource::parent_bridges(const std::string& pci) const {
  std::error_code ec;
  fs::path real = fs::canonical(pci_dir(pci), ec);
  std::vector<std::string> bridges;
  if (ec) return bridges;
  for (fs::path dir = real.parent_path(); dir.has_filename(); dir = dir.parent_path()) {
    auto address = normalize_pci_address(dir.filename().string());
    if (!address) break;  // reached "pci0000:00", the root complex
    bridges.push_back(*address);
  }
  return bridges;
}

std::vector<RdmaDevice> SysfsSource::rdma_devices(std::vector<std::string>* notes) const {
  std::vector<RdmaDevice> devices;
  const fs::path base = root_ / "class/infiniband";
  for (const auto& name : list_dir(base)) {
    RdmaDevice device;
    device.name = name;
    device.pci = pci_of_link(base / name / "device");
    for (const auto& port_name : list_dir(base / name / "ports")) {
      const fs::path port_dir = base / name / "ports" / port_name;
      IbPort port;
      try {
        port.port = std::stoi(port_name);
      } catch (const std::exception&) {
        continue;
      }
      if (auto text = read_attribute_line(port_dir / "state")) port.state = ib_port_state(*text);
      if (auto text = read_attribute_line(port_dir / "rate")) port.rate_gbps = ib_rate_gbps(*text);
      port.link_layer = read_attribute_line(port_dir / "link_layer");
      if (port.link_layer == "Ethernet")
        port.gids = read_gid_table(port_dir, "sysfs " + name + " port " + port_name, notes);
      device.ports.push_back(std::move(port));
    }
    device.netdevs = list_dir(base / name / "device/net");
    devices.push_back(std::move(device));
  }
  return devices;
}

std::vector<NetInterface> SysfsSource::net_interfaces(std::vector<std::string>* notes) const {
  std::vector<NetInterface> interfaces;
  const fs::path base = root_ / "class/net";
  for (const auto& name : list_dir(base)) {
    NetInterface net;
    net.name = name;
    net.pci = pci_of_link(base / name / "device");
    net.operstate = read_attribute_line(base / name / "operstate");
    if (const auto text = read_attribute_line(base / name / "mtu")) {
      net.mtu = read_int(base / name / "mtu");
      if (!net.mtu || *net.mtu <= 0 || *net.mtu > (1 << 24)) {
        add_note(notes, "sysfs " + name + ": MTU '" + printable_excerpt(*text, 48) +
                            "' is not one; read as unknown");
        net.mtu.reset();
      }
    }
    interfaces.push_back(std::move(net));
  }
  return interfaces;
}

}  // namespace nccltune
