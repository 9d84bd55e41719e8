#include "report/node_diagram.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "report/html_text.h"
#include "topology/affinity.h"

namespace nccltune {

namespace {

constexpr double kTileW = 136, kTileH = 66, kGap = 12;
constexpr double kUnitHeader = 20, kNumaHeader = 30, kPad = 12;
constexpr const char* kGpuColor = "#4d7c0f";
constexpr const char* kNicColor = "#1d4ed8";
constexpr const char* kBad = "#b91c1c";

// A column block inside one NUMA node: the devices under one PCIe switch, or those directly under
// the host bridge (no switch shared with another device).
struct Unit {
  std::optional<std::string> switch_pci;  // the topmost bridge of the switch; nullopt = direct
  std::vector<int> gpus, nics;            // indices into topology.gpus / topology.nics
  int columns() const { return static_cast<int>(std::max<std::size_t>({gpus.size(), nics.size(), 1})); }
};

struct NumaGroup {
  std::optional<int> numa;
  std::vector<Unit> units;
};

bool is_gpu(const std::string& id) {
  return id.rfind("GPU", 0) == 0;
}

// The position in `devices` (topology.gpus or .nics) of the device with `index`, or -1.
template <class Device>
int position(const std::vector<Device>& devices, int index) {
  for (std::size_t i = 0; i < devices.size(); ++i)
    if (devices[i].index == index) return static_cast<int>(i);
  return -1;
}

// The smallest bridge-device sets with two or more devices are the switches devices share (a
// switch shows as several bridges with the same devices below; nested switches give a larger set
// too, whose devices then stay in their own smaller switch).
std::vector<std::pair<std::string, std::set<std::string>>> shared_switches(const NodeTopology& topology) {
  std::vector<std::pair<std::string, std::set<std::string>>> sets;
  for (const PciBridge& bridge : topology.bridges) {
    std::set<std::string> below(bridge.below.begin(), bridge.below.end());
    if (below.size() < 2) continue;
    auto same = std::find_if(sets.begin(), sets.end(), [&](const auto& s) { return s.second == below; });
    if (same == sets.end()) sets.emplace_back(bridge.pci, std::move(below));
  }
  std::vector<std::pair<std::string, std::set<std::string>>> minimal;
  for (const auto& candidate : sets) {
    const bool has_smaller = std::any_of(sets.begin(), sets.end(), [&](const auto& other) {
      return other.second.size() < candidate.second.size() &&
             std::includes(candidate.second.begin(), candidate.second.end(), other.second.begin(),
                           other.second.end());
    });
    if (!has_smaller) minimal.push_back(candidate);
  }
  return minimal;
}

std::optional<int> device_numa(const NodeTopology& topology, const std::string& id) {
  int index = -1;  // ids are "GPU<n>" / "NIC<n>" (gpu_id, nic_id)
  std::from_chars(id.data() + std::min<std::size_t>(3, id.size()), id.data() + id.size(), index);
  if (is_gpu(id)) {
    for (const Gpu& gpu : topology.gpus)
      if (gpu.index == index) return gpu.numa;
  } else {
    for (const Nic& nic : topology.nics)
      if (nic.index == index) return nic.numa;
  }
  return std::nullopt;
}

std::vector<NumaGroup> group_devices(const NodeTopology& topology) {
  std::map<std::string, std::size_t> switch_of;  // device id -> index into switches
  const auto switches = shared_switches(topology);
  for (std::size_t s = 0; s < switches.size(); ++s)
    for (const std::string& id : switches[s].second) switch_of.emplace(id, s);

  // NUMA nodes in ascending order, unknown last.
  std::vector<NumaGroup> groups;
  auto group_for = [&](std::optional<int> numa) -> NumaGroup& {
    for (NumaGroup& g : groups)
      if (g.numa == numa) return g;
    groups.push_back({numa, {}});
    return groups.back();
  };
  std::map<std::size_t, std::pair<std::optional<int>, std::size_t>> unit_of_switch;  // -> (numa, unit)
  auto place = [&](const std::string& id, int position) {
    auto sw = switch_of.find(id);
    if (sw == switch_of.end()) {
      NumaGroup& g = group_for(device_numa(topology, id));
      auto direct = std::find_if(g.units.begin(), g.units.end(), [](const Unit& u) { return !u.switch_pci; });
      if (direct == g.units.end()) direct = g.units.insert(g.units.end(), Unit{});
      (is_gpu(id) ? direct->gpus : direct->nics).push_back(position);
      return;
    }
    auto known = unit_of_switch.find(sw->second);
    if (known == unit_of_switch.end()) {
      // A switch sits in the NUMA node of the first device found under it.
      NumaGroup& g = group_for(device_numa(topology, id));
      g.units.push_back(Unit{switches[sw->second].first, {}, {}});
      known = unit_of_switch.emplace(sw->second, std::make_pair(g.numa, g.units.size() - 1)).first;
    }
    Unit& unit = group_for(known->second.first).units[known->second.second];
    (is_gpu(id) ? unit.gpus : unit.nics).push_back(position);
  };
  for (std::size_t i = 0; i < topology.gpus.size(); ++i)
    place(gpu_id(topology.gpus[i].index), static_cast<int>(i));
  for (std::size_t i = 0; i < topology.nics.size(); ++i)
    place(nic_id(topology.nics[i].index), static_cast<int>(i));
  std::stable_sort(groups.begin(), groups.end(), [](const NumaGroup& a, const NumaGroup& b) {
    if (a.numa.has_value() != b.numa.has_value()) return a.numa.has_value();
    return a.numa.value_or(0) < b.numa.value_or(0);
  });
  for (NumaGroup& g : groups)  // the direct devices after the switches
    std::stable_partition(g.units.begin(), g.units.end(),
                          [](const Unit& u) { return u.switch_pci.has_value(); });
  return groups;
}

// "Gen5 x16"; below the maximum "Gen5 x8 (max x16)", "Gen1 x16 (max Gen5)".
std::string pcie_text(const PcieLink& link) {
  if (!link.known()) return "PCIe link unknown";
  auto number = [](const std::optional<int>& v) { return v ? std::to_string(*v) : std::string("?"); };
  std::string text = "Gen" + number(link.gen) + " x" + number(link.width);
  if (link.speed_degraded() && link.width_degraded())
    text += " (max Gen" + number(link.max_gen) + " x" + number(link.max_width) + ")";
  else if (link.width_degraded())
    text += " (max x" + number(link.max_width) + ")";
  else if (link.speed_degraded())
    text += " (max Gen" + number(link.max_gen) + ")";
  return text;
}

bool pcie_degraded(const PcieLink& link) {
  return link.width_degraded() || link.speed_degraded();
}

struct Tile {
  double x = 0, y = 0;
};

// One line of a tile (22 characters fit) or of a box title (`limit` given).
std::string text_line(double x, double y, const std::string& text, const char* color, int size,
                      bool bold = false, std::size_t limit = 22) {
  return fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" fill=\"{}\" font-size=\"{}\"{}>{}</text>\n", x, y,
                     color, size, bold ? " font-weight=\"600\"" : "", html_text(shorten(text, limit)));
}

std::string gpu_tile(const Gpu& gpu, const NicAssignment* nearest, const NodeTopology& topology, Tile at) {
  std::string name = gpu.name.value_or("name unknown");
  if (name.rfind("NVIDIA ", 0) == 0) name = name.substr(7);
  const std::string nvlinks =
      gpu.nvlinks && *gpu.nvlinks > 0 ? " \u00b7 NV" + std::to_string(*gpu.nvlinks) : "";
  std::string near = "no NIC";
  if (nearest && nearest->nic) {
    near = "\u2192 " + nic_id(*nearest->nic);
    for (const Nic& nic : topology.nics)
      if (nic.index == *nearest->nic && nic.name) near += " " + *nic.name;
    if (nearest->link) near += " (" + to_string(*nearest->link) + ")";
  }
  std::string tooltip = gpu_id(gpu.index) + ": " + gpu.name.value_or("name unknown") + ", PCI " +
                        gpu.pci.value_or("unknown") + ", " + pcie_text(gpu.pcie) + ", nearest NIC: " + near;
  std::string out = fmt::format(
      "<g class=\"gpu\" data-device=\"{}\"><title>{}</title>\n<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{}\" "
      "height=\"{}\" rx=\"6\" fill=\"#f0fdf4\" stroke=\"{}\" stroke-width=\"1.5\"/>\n",
      gpu_id(gpu.index), html_text(tooltip), at.x, at.y, kTileW, kTileH, kGpuColor);
  out += text_line(at.x + 8, at.y + 16, gpu_id(gpu.index), kGpuColor, 12, true);
  // The NVLink count stays visible however long the name is.
  out += text_line(at.x + 8, at.y + 31, shorten(name, nvlinks.empty() ? 22 : 15) + nvlinks, "#111827", 10,
                   false, 26);
  out += text_line(at.x + 8, at.y + 45, pcie_text(gpu.pcie), pcie_degraded(gpu.pcie) ? kBad : "#374151", 10);
  out += text_line(at.x + 8, at.y + 59, near, "#374151", 10);
  return out + "</g>\n";
}

std::string nic_tile(const Nic& nic, Tile at) {
  std::string kind = nic.link_layer ? (*nic.link_layer == "InfiniBand" ? "IB" : *nic.link_layer) : "link ?";
  if (nic.rate_gbps) kind += fmt::format(" {:g} Gb/s", *nic.rate_gbps);
  const std::string state = nic.state.value_or("state ?");
  const bool down = nic.state && *nic.state != "ACTIVE";
  std::string tooltip = nic_id(nic.index) + ": " + nic.name.value_or("name unknown") + ", PCI " +
                        nic.pci.value_or("unknown") + ", " + pcie_text(nic.pcie) +
                        (nic.netdev ? ", netdev " + *nic.netdev : std::string());
  std::string out = fmt::format(
      "<g class=\"nic\" data-device=\"{}\"><title>{}</title>\n<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{}\" "
      "height=\"{}\" rx=\"6\" fill=\"#eff6ff\" stroke=\"{}\" stroke-width=\"1.5\"/>\n",
      nic_id(nic.index), html_text(tooltip), at.x, at.y, kTileW, kTileH, kNicColor);
  out += text_line(at.x + 8, at.y + 16, nic_id(nic.index) + " " + nic.name.value_or(""), kNicColor, 12, true);
  out += text_line(at.x + 8, at.y + 31, kind, "#111827", 10);
  out += text_line(at.x + 8, at.y + 45, state, down ? kBad : "#374151", 10, down);
  out += text_line(at.x + 8, at.y + 59, pcie_text(nic.pcie), pcie_degraded(nic.pcie) ? kBad : "#374151", 10);
  return out + "</g>\n";
}

std::string numa_title(const NodeTopology& topology, const NumaGroup& group) {
  if (!group.numa) return "NUMA node unknown";
  std::string title = "NUMA " + std::to_string(*group.numa);
  for (const Gpu& gpu : topology.gpus)
    if (gpu.numa == group.numa && gpu.cpu_affinity) return title + " \u00b7 CPUs " + *gpu.cpu_affinity;
  return title;
}

// Each GPU to its nearest NIC, labelled with the link type, when the two tiles are close (the
// GPU tile names its NIC either way).
std::string gpu_nic_lines(const NodeTopology& topology, const std::vector<NicAssignment>& nearest,
                          const std::map<int, Tile>& gpu_at, const std::map<int, Tile>& nic_at) {
  std::string out;
  for (const NicAssignment& a : nearest) {
    if (!a.nic) continue;
    const int gpu_pos = position(topology.gpus, a.gpu), nic_pos = position(topology.nics, *a.nic);
    if (!gpu_at.count(gpu_pos) || !nic_at.count(nic_pos)) continue;
    const Tile g = gpu_at.at(gpu_pos), n = nic_at.at(nic_pos);
    if (std::abs(g.x - n.x) > 2 * (kTileW + kGap)) continue;
    const double gx = g.x + kTileW / 2, nx = n.x + kTileW / 2;
    out += fmt::format(
        "<line class=\"gpu-nic\" x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#0f766e\" "
        "stroke-width=\"2\"/>\n",
        gx, g.y, nx, n.y + kTileH);
    if (a.link)
      out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"10\" fill=\"#0f766e\">{}</text>\n",
                         (gx + nx) / 2 + 4, (g.y + n.y + kTileH) / 2 + 4, html_text(to_string(*a.link)));
  }
  return out;
}

// NVLink: with NVSwitch one fabric bar under the GPUs, else an arc per directly linked GPU pair.
// Grows `height` to what it draws.
std::string nvlink_drawing(const NodeTopology& topology, const std::map<int, Tile>& gpu_at,
                           double numa_bottom, double& height) {
  std::string out;
  std::vector<int> linked;
  std::set<int> counts;
  for (const auto& [pos, tile] : gpu_at)
    if (const int n = topology.gpus[pos].nvlinks.value_or(0); n > 0) linked.push_back(pos), counts.insert(n);
  if (topology.nvswitch.value_or(false) && !linked.empty()) {
    const double bar_y = numa_bottom + 26;
    double lo = gpu_at.at(linked.front()).x, hi = lo;
    for (int pos : linked) {
      const Tile& tile = gpu_at.at(pos);
      lo = std::min(lo, tile.x), hi = std::max(hi, tile.x + kTileW);
      out += fmt::format(
          "<line class=\"nvlink\" x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"{3}\" "
          "stroke-width=\"3\"/>\n",
          tile.x + kTileW / 2, tile.y + kTileH, bar_y, kGpuColor);
    }
    const std::string label =
        counts.size() == 1 ? fmt::format("NVSwitch fabric \u00b7 NV{} per GPU", *counts.begin())
                           : std::string("NVSwitch fabric \u00b7 NVLinks per GPU differ: see the GPUs");
    out += fmt::format(
        "<g class=\"nvswitch\"><rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"28\" rx=\"6\" "
        "fill=\"{}\"/>\n"
        "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" fill=\"#ffffff\" font-size=\"12\" "
        "font-weight=\"600\">"
        "{}</text></g>\n",
        lo, bar_y, hi - lo, kGpuColor, (lo + hi) / 2, bar_y + 18, label);
    height = std::max(height, bar_y + 28 + 16);
    return out;
  }
  for (const DeviceLink& link : topology.links) {
    if (link.type.kind != LinkKind::nvlink || !is_gpu(link.a) || !is_gpu(link.b)) continue;
    std::optional<Tile> a, b;
    for (const auto& [pos, tile] : gpu_at) {
      if (gpu_id(topology.gpus[pos].index) == link.a) a = tile;
      if (gpu_id(topology.gpus[pos].index) == link.b) b = tile;
    }
    if (!a || !b) continue;
    const double ax = a->x + kTileW / 2, bx = b->x + kTileW / 2, base = a->y + kTileH;
    const double depth = 14 + std::abs(bx - ax) / 12;
    height = std::max(height, numa_bottom + depth + 30);
    out += fmt::format(
        "<path class=\"nvlink\" d=\"M {:.1f} {:.1f} Q {:.1f} {:.1f} {:.1f} {:.1f}\" fill=\"none\" "
        "stroke=\"{}\" "
        "stroke-width=\"2\"><title>{} - {}: {}</title></path>\n",
        ax, base, (ax + bx) / 2, base + 2 * depth, bx, base, kGpuColor, html_text(link.a), html_text(link.b),
        html_text(to_string(link.type)));
  }
  return out;
}

}  // namespace

std::string render_node_diagram(const NodeTopology& topology) {
  const std::vector<NumaGroup> groups = group_devices(topology);
  const std::vector<NicAssignment> nearest = assign_nearest_nics(topology);
  const bool any_nics = !topology.nics.empty(), any_gpus = !topology.gpus.empty();

  // Vertical layout, shared by every NUMA node.
  const double numa_top = 34, unit_top = numa_top + kNumaHeader;
  const double nic_row = unit_top + kUnitHeader + 4;
  const double gpu_row = any_nics ? nic_row + kTileH + 22 : nic_row;
  const double unit_bottom = (any_gpus ? gpu_row : nic_row) + kTileH + 10;
  const double numa_bottom = unit_bottom + kPad;

  std::map<int, Tile> gpu_at, nic_at;  // by position in topology.gpus / nics
  std::string tiles;  // NUMA boxes, switch boxes, then device tiles, so later ones are drawn on top
  double x = 16;
  std::vector<std::pair<double, double>> numa_spans;
  for (const NumaGroup& group : groups) {
    const double numa_x = x;
    double cursor = numa_x + kPad;
    std::string switches;
    for (const Unit& unit : group.units) {
      const double width = unit.columns() * (kTileW + kGap) + kGap;
      if (unit.switch_pci) {
        switches += fmt::format(
            "<g class=\"pcie-switch\"><rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" "
            "rx=\"8\" "
            "fill=\"#fafafa\" stroke=\"#9ca3af\" stroke-dasharray=\"4 3\"/>\n",
            cursor, unit_top, width, unit_bottom - unit_top);
        switches +=
            text_line(cursor + 8, unit_top + 14, "PCIe switch " + *unit.switch_pci, "#4b5563", 10, false, 26);
        switches += "</g>\n";
      }
      for (std::size_t i = 0; i < unit.nics.size(); ++i)
        nic_at[unit.nics[i]] = {cursor + kGap + static_cast<double>(i) * (kTileW + kGap), nic_row};
      for (std::size_t i = 0; i < unit.gpus.size(); ++i)
        gpu_at[unit.gpus[i]] = {cursor + kGap + static_cast<double>(i) * (kTileW + kGap), gpu_row};
      cursor += width + kGap;
    }
    const double numa_w = std::max(cursor - numa_x + kPad - kGap, 220.0);
    tiles +=
        fmt::format(
            "<rect class=\"numa\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" rx=\"10\" "
            "fill=\"#f9fafb\" stroke=\"#6b7280\"/>\n",
            numa_x, numa_top, numa_w, numa_bottom - numa_top) +
        text_line(numa_x + 12, numa_top + 20, numa_title(topology, group), "#111827", 13, true, 60) +
        switches;
    numa_spans.emplace_back(numa_x, numa_x + numa_w);
    x = numa_x + numa_w + 40;
  }
  const double width = std::max(x - 24, 720.0);

  std::string links;
  // Inter-socket link between neighbouring NUMA nodes.
  for (std::size_t i = 1; i < numa_spans.size(); ++i) {
    const double x1 = numa_spans[i - 1].second, x2 = numa_spans[i].first, y = numa_top + 15;
    links += fmt::format(
        "<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#6b7280\" "
        "stroke-width=\"3\"/>\n",
        x1, y, x2, y);
    links += fmt::format(
        "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" font-size=\"10\" "
        "fill=\"#4b5563\">SYS</text>\n",
        (x1 + x2) / 2, y - 6);
  }
  links += gpu_nic_lines(topology, nearest, gpu_at, nic_at);
  double height = numa_bottom + 40;
  links += nvlink_drawing(topology, gpu_at, numa_bottom, height);
  if (groups.empty()) {
    tiles += text_line(24, 60, "no GPUs or NICs in this topology", "#4b5563", 13, false, 60);
    height = 100;
  }

  const double legend_y = height;
  const std::string legend =
      "PIX one PCIe switch \u00b7 PXB several switches \u00b7 PHB host bridge \u00b7 NODE same NUMA node "
      "\u00b7 "
      "SYS across NUMA nodes \u00b7 NV# bonded NVLinks";
  height += 14;

  std::string out = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"node-diagram\" viewBox=\"0 0 {:.0f} {:.0f}\" "
      "width=\"{:.0f}\" role=\"img\" font-family=\"system-ui, -apple-system, 'Segoe UI', sans-serif\">\n"
      "<title>Node {}: {} GPUs, {} NICs</title>\n",
      width, height, width, html_text(topology.host), topology.gpus.size(), topology.nics.size());
  for (const auto& [pos, tile] : nic_at) tiles += nic_tile(topology.nics[pos], tile);
  for (const auto& [pos, tile] : gpu_at) {
    const NicAssignment* near = nullptr;
    for (const NicAssignment& a : nearest)
      if (a.gpu == topology.gpus[pos].index) near = &a;
    tiles += gpu_tile(topology.gpus[pos], near, topology, tile);
  }
  out += tiles + links;
  out += fmt::format("<text x=\"16\" y=\"{:.1f}\" font-size=\"10\" fill=\"#6b7280\">{}</text>\n", legend_y,
                     html_text(legend));
  return out + "</svg>\n";
}

}  // namespace nccltune
