#include "topology/nccl_topo_xml.h"

// What NCCL does with such a file (NVIDIA/nccl, src/graph/xml.cc, xml.h and topo.cc, 2.30):
// - Its reader (xmlGetNode, xmlGetToken, xmlGetValue) takes elements, quoted attribute values
//   after single spaces, `/>` and comments. It rejects an `<?xml ...?>` declaration, skips only
//   spaces and newlines between elements (no tabs), decodes no entities (a value is kept as
//   written) and fails on a value longer than 253 characters (xmlGetValue stores the closing
//   quote too, and fails when it reaches MAX_STR_LEN - 1 = 254). xmlGetNode skips a comment
//   wherever it reads a node, inside an element too.
// - ncclTopoGetSystem overwrites every cpu's host_hash, completes the GPU of each rank
//   (ncclTopoFillGpu) and every device of the net plugin (ncclTopoFillNet), then drops what no
//   rank or net device uses (ncclTopoTrimXml). Completing a device (ncclTopoGetXmlFromSys,
//   ncclTopoGetXmlFromCpu, ncclTopoGetXmlFromGpu) sets only attributes the file left out, except
//   class, reread from sysfs, and follows the parents the file gives instead of sysfs's.
// - ncclTopoAddCpu then requires numaid (arch, vendor, familyid, modelid were filled);
//   ncclTopoAddPci requires busid and class, and link_speed and link_width, filled for real
//   devices; ncclTopoAddGpu requires rank, sm, dev and gdr, all filled for a GPU in use;
//   ncclTopoAddNvLinks requires count and tclass, and target for a GPU peer; ncclTopoAddNet
//   requires dev, which NCCL sets. A GPU with any <nvlink> in the file gets no NVLink detection.
// - NICs: ncclTopoFillNet returns early when the file already holds a <net> of the device's
//   name, and then never completes that NIC's <pci>, the switches above it or its <cpu>. NCCL
//   completes the <cpu> above its own GPU only, so a <cpu> that holds only NICs (every 2-socket
//   node, every Grace tray) would keep no arch and ncclTopoAddCpu would fail ("Attribute arch of
//   node cpu not found"). So a NIC is written as its <pci> alone, without <nic><net>:
//   ncclTopoFillNet finds that <pci> by busid (ncclTopoGetPciNode), adds <nic><net> from the net
//   plugin and completes the <pci> and its parents, following the parents the file gives. Its
//   net device names are kept for people in a comment inside the <pci> when they are plain.
// So this writes what nccltune knows and lets NCCL fill in the rest; where NCCL requires a value
// nccltune cannot know, it writes the value NCCL itself writes in that case.

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <utility>
#include <vector>

#include "base/markup_text.h"
#include "base/utf8.h"
#include "topology/pci_path.h"

namespace nccltune {

namespace {

// As written, escaped: NCCL's xmlGetValue stores the closing quote too and fails when it reaches
// index MAX_STR_LEN - 1 (254), so a value may hold 253 characters.
constexpr std::size_t kMaxValueLength = 253;

// PCI classes. A PciBridge is a PCI-to-PCI bridge (06 04) by definition. nccltune does not read
// the class of GPUs and NICs, and NCCL requires one: "0x03" and "0x02" are what NCCL itself
// writes for a GPU and a NIC before it reads the class from sysfs, and it matches them as
// prefixes (kvDictPciClass), so they read as GPU and NIC; sysfs's value replaces them on load.
constexpr std::string_view kBridgeClass = "0x060400";
constexpr std::string_view kGpuClass = "0x03";
constexpr std::string_view kNicClass = "0x02";
constexpr std::string_view kNvSwitchClass = "0x068000";  // NCCL's PCI_NVSWITCH_CLASS

// The value as a double-quoted XML attribute value, or nullopt when XML 1.0 cannot hold it (other
// control characters, bytes that are not UTF-8) or NCCL's reader could not (too long).
std::optional<std::string> escape(std::string_view raw) {
  if (!is_valid_utf8(raw)) return std::nullopt;
  for (char ch : raw)
    if (static_cast<unsigned char>(ch) < 0x20 && ch != '\t' && ch != '\n' && ch != '\r') return std::nullopt;
  std::string out = escape_markup(raw);
  if (out.size() > kMaxValueLength) return std::nullopt;
  return out;
}

struct Element {
  std::string name;
  std::vector<std::pair<std::string, std::string>> attributes;  // values escaped
  std::vector<Element> children;
  std::string comment;  // written before the children; safe as it is (comment_of)

  // Adds the attribute unless its value cannot be written.
  void set_text(std::string key, std::string_view value) {
    if (auto escaped = escape(value)) attributes.emplace_back(std::move(key), std::move(*escaped));
  }
  void set_int(std::string key, std::optional<long long> value) {
    if (value) set_text(std::move(key), std::to_string(*value));
  }
};

// Indented by two spaces a level, as NCCL writes it (ncclTopoDumpXmlRec).
void render(const Element& element, int depth, std::string& out) {
  out.append(static_cast<std::size_t>(depth) * 2, ' ');
  out += '<' + element.name;
  for (const auto& [key, value] : element.attributes) out += ' ' + key + "=\"" + value + '"';
  if (element.children.empty() && element.comment.empty()) {
    out += "/>\n";
    return;
  }
  out += ">\n";
  if (!element.comment.empty()) {
    out.append(static_cast<std::size_t>(depth + 1) * 2, ' ');
    out += "<!-- " + element.comment + " -->\n";
  }
  for (const auto& child : element.children) render(child, depth + 1, out);
  out.append(static_cast<std::size_t>(depth) * 2, ' ');
  out += "</" + element.name + ">\n";
}

// The strings Linux (5.7 and later) writes in max_link_speed and NVML's generations map to in
// NCCL; NCCL's kvDictPciGen knows these six.
std::optional<std::string_view> pcie_speed(int gen) {
  static constexpr std::array<std::string_view, 6> kSpeeds = {"2.5 GT/s PCIe",  "5.0 GT/s PCIe",
                                                              "8.0 GT/s PCIe",  "16.0 GT/s PCIe",
                                                              "32.0 GT/s PCIe", "64.0 GT/s PCIe"};
  if (gen < 1 || gen > static_cast<int>(kSpeeds.size())) return std::nullopt;
  return kSpeeds[static_cast<std::size_t>(gen - 1)];
}

std::optional<int> lesser(std::optional<int> a, std::optional<int> b) {
  if (a && b) return std::min(*a, *b);
  return a ? a : b;
}

// The link as NCCL reads it: the lesser of the device's and the port's above it (NCCL's sysfs
// read takes the lesser of max_link_* of the two). Speed: what the link can train to
// (max_link_speed), as a GPU idling at 2.5 GT/s to save power is no Gen1 link (NCCL 2.30 reads a
// GPU's current generation through NVML, older NCCL the maximum). Width: the current one, as a
// link does not narrow to save power and one trained at x8 of x16 is an x8 link (NCCL 2.30
// reads a GPU's current width too). Each falls back to the other value when one is unknown.
void set_link(Element& pci, const PcieLink& own, const std::optional<PcieLink>& port) {
  auto speed_of = [](const PcieLink& link) { return link.max_gen ? link.max_gen : link.gen; };
  auto width_of = [](const PcieLink& link) { return link.width ? link.width : link.max_width; };
  const auto gen = lesser(speed_of(own), port ? speed_of(*port) : std::nullopt);
  const auto width = lesser(width_of(own), port ? width_of(*port) : std::nullopt);
  if (gen)
    if (auto speed = pcie_speed(*gen)) pci.set_text("link_speed", *speed);
  if (width && *width > 0) pci.set_int("link_width", *width);
}

// "0-7,16-23" as a sysfs cpumap ("00ff00ff"): 32-bit words in hex, the highest first, as NCCL
// reads it (ncclStrToCpuset). nullopt when the list does not parse.
std::optional<std::string> cpumap_of(std::string_view cpulist) {
  constexpr int kMaxCpu = 1 << 16;
  std::set<int> cpus;
  auto number = [](std::string_view text) -> std::optional<int> {
    int value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size() || value < 0 || value >= kMaxCpu)
      return std::nullopt;
    return value;
  };
  while (!cpulist.empty()) {
    const auto comma = cpulist.find(',');
    const auto item = cpulist.substr(0, comma);
    cpulist = comma == std::string_view::npos ? std::string_view() : cpulist.substr(comma + 1);
    const auto dash = item.find('-');
    const auto first = number(item.substr(0, dash));
    const auto last = dash == std::string_view::npos ? first : number(item.substr(dash + 1));
    if (!first || !last || *last < *first) return std::nullopt;
    for (int cpu = *first; cpu <= *last; ++cpu) cpus.insert(cpu);
  }
  if (cpus.empty()) return std::nullopt;
  std::vector<std::uint32_t> words(static_cast<std::size_t>(*cpus.rbegin() / 32 + 1), 0);
  for (int cpu : cpus) words[static_cast<std::size_t>(cpu / 32)] |= std::uint32_t{1} << (cpu % 32);
  std::string out;
  for (auto word = words.rbegin(); word != words.rend(); ++word)
    out += fmt::format("{}{:08x}", out.empty() ? "" : ",", *word);
  return out;
}

// The bridges above a device, nearest first. The topology reader lists each device's bridges
// nearest first and adds a bridge where it first meets it, so of two bridges above a device the
// upper one has more devices below it or, with the same devices below, a later place.
std::vector<const PciBridge*> bridges_above(const NodeTopology& topology, const std::string& id) {
  std::vector<std::pair<std::size_t, std::size_t>> order;  // (devices below, place)
  for (std::size_t i = 0; i < topology.bridges.size(); ++i) {
    const auto& below = topology.bridges[i].below;
    if (std::find(below.begin(), below.end(), id) != below.end()) order.emplace_back(below.size(), i);
  }
  std::sort(order.begin(), order.end());
  std::vector<const PciBridge*> bridges;
  for (const auto& [count, i] : order) bridges.push_back(&topology.bridges[i]);
  return bridges;
}

// One <pci> element: a GPU, a NIC or a PCIe switch (its upstream port).
struct Slot {
  std::string_view pci_class;
  PcieLink link;
  std::optional<PcieLink> port;       // the port right above it, whose link NCCL also reads
  std::optional<std::string> parent;  // the switch it hangs from; none: the CPU
  std::optional<int> numa;            // for one that hangs from the CPU
  const Gpu* gpu = nullptr;
  std::vector<const Nic*> nics;
};

struct Tree {
  std::map<std::string, Slot> slots;  // by PCI address, so children come in bus order as in NCCL
  std::vector<std::string> left_out;

  // Places a device and the switches above it, nested as NCCL's sysfs walk nests them: each
  // level takes two bridges (the port it hangs from and the switch's upstream port), and a lone
  // root port at the top belongs to the CPU (pcie_switches_above).
  Slot& place(const NodeTopology& topology, const std::string& id, const std::string& pci,
              std::string_view pci_class, const PcieLink& link, std::optional<int> numa) {
    const auto bridges = bridges_above(topology, id);
    PciPlacement placement;
    for (const auto* bridge : bridges) placement.bridges.push_back(bridge->pci);
    const auto switches = pcie_switches_above(placement);
    auto [device, added] = slots.try_emplace(pci);
    if (added) {
      device->second.pci_class = pci_class;
      device->second.link = link;
      if (!bridges.empty()) device->second.port = bridges.front()->pcie;
      if (!switches.empty()) device->second.parent = switches.front();
    }
    for (std::size_t i = 0; i < switches.size(); ++i) {
      auto [upstream, new_switch] = slots.try_emplace(switches[i]);
      if (!new_switch) continue;
      upstream->second.pci_class = kBridgeClass;
      upstream->second.link = bridges[2 * i + 1]->pcie;  // switches[i] is bridges[2i + 1]
      if (2 * i + 2 < bridges.size()) upstream->second.port = bridges[2 * i + 2]->pcie;
      if (i + 1 < switches.size()) upstream->second.parent = switches[i + 1];
    }
    Slot& top = slots[switches.empty() ? pci : switches.back()];
    if (!top.parent && !top.numa) top.numa = numa;
    return device->second;
  }
};

Element nvlink_element(std::optional<std::string_view> target, int count, std::string_view target_class) {
  Element nvlink{"nvlink", {}, {}, {}};
  if (target) nvlink.set_text("target", *target);
  nvlink.set_int("count", count);
  nvlink.set_text("tclass", target_class);
  return nvlink;
}

// A GPU's NVLinks, all of them or none: with an <nvlink> in the file NCCL detects none itself.
// Behind NVSwitches every NVLink goes to the switch fabric; NCCL treats all switches as one
// node, so one element carries them all, without a target (NCCL reads none for a switch, and
// nccltune does not know which link goes to which switch). Without NVSwitches, one element per
// peer GPU, if their counts add up to the GPU's active NVLinks. Unknown: none.
std::vector<Element> nvlinks_of(const NodeTopology& topology, const Gpu& gpu) {
  if (!gpu.nvlinks || *gpu.nvlinks <= 0 || !topology.nvswitch) return {};
  if (*topology.nvswitch) return {nvlink_element(std::nullopt, *gpu.nvlinks, kNvSwitchClass)};
  std::vector<Element> nvlinks;
  int total = 0;
  for (const auto& peer : topology.gpus) {
    if (peer.index == gpu.index) continue;
    const DeviceLink* link = topology.find_link(gpu_id(gpu.index), gpu_id(peer.index));
    if (!link || link->type.kind != LinkKind::nvlink) continue;
    if (!peer.pci || link->type.nvlinks <= 0) return {};
    nvlinks.push_back(nvlink_element(*peer.pci, link->type.nvlinks, kGpuClass));
    total += link->type.nvlinks;
  }
  if (total != *gpu.nvlinks) return {};
  return nvlinks;
}

// The net device names of a NIC's <pci>, for people: its <net> is NCCL's to add. Only when every
// name is plain ([A-Za-z0-9_.:-], no "--", which would end or break the comment), else none.
std::string comment_of(const std::vector<const Nic*>& nics) {
  std::string out;
  for (const Nic* nic : nics) {
    if (!nic->name) continue;
    const std::string& name = *nic->name;
    const bool plain = !name.empty() && name.size() <= kMaxValueLength &&
                       name.find("--") == std::string::npos &&
                       std::all_of(name.begin(), name.end(), [](char ch) {
                         return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                                (ch >= '0' && ch <= '9') || ch == '_' || ch == '.' || ch == ':' || ch == '-';
                       });
    if (!plain) return {};
    out += (out.empty() ? "" : " ") + name;
  }
  return out;
}

// Left out: dev, rank and gdr, which NCCL sets for each GPU in use (dev from NVML; nccltune's
// GPU index is its own order).
Element gpu_element(const NodeTopology& topology, const Gpu& gpu) {
  Element element{"gpu", {}, {}, {}};
  if (gpu.sm) element.set_int("sm", *gpu.sm);
  element.children = nvlinks_of(topology, gpu);
  return element;
}

Element pci_element(const NodeTopology& topology, const Tree& tree,
                    const std::map<std::string, std::vector<std::string>>& children, const std::string& pci) {
  const Slot& slot = tree.slots.at(pci);
  Element element{"pci", {}, {}, {}};
  element.set_text("busid", pci);
  element.set_text("class", slot.pci_class);
  set_link(element, slot.link, slot.port);
  if (auto below = children.find(pci); below != children.end())
    for (const auto& child : below->second)
      element.children.push_back(pci_element(topology, tree, children, child));
  if (slot.gpu) element.children.push_back(gpu_element(topology, *slot.gpu));
  // A NIC: its <pci> alone, NCCL adds <nic><net> (see the top of this file).
  element.comment = comment_of(slot.nics);
  return element;
}

void gpus_below(const Tree& tree, const std::map<std::string, std::vector<std::string>>& children,
                const std::string& pci, std::vector<const Gpu*>& gpus) {
  if (const Gpu* gpu = tree.slots.at(pci).gpu) gpus.push_back(gpu);
  if (auto below = children.find(pci); below != children.end())
    for (const auto& child : below->second) gpus_below(tree, children, child, gpus);
}

// The CPU's affinity is its NUMA node's cpumap. nccltune knows the CPUs each GPU is close to
// (NVML's affinity, which is its NUMA node's CPUs); when every GPU of the node names the same
// CPUs, those are written, else nothing (NCCL reads the node's cpumap itself).
std::optional<std::string> affinity_of(const std::vector<const Gpu*>& gpus) {
  if (gpus.empty()) return std::nullopt;
  for (const Gpu* gpu : gpus)
    if (!gpu->cpu_affinity || gpu->cpu_affinity != gpus.front()->cpu_affinity) return std::nullopt;
  return cpumap_of(*gpus.front()->cpu_affinity);
}

}  // namespace

std::string nccl_topo_xml(const NodeTopology& topology) {
  Tree tree;
  // Without sysfs the reader has no PCI tree (no bridges), and a device written straight under
  // its CPU would tell NCCL it has no switch above it: leave the devices to NCCL instead.
  const bool tree_known = std::find(topology.sources_used.begin(), topology.sources_used.end(),
                                    FactSource::sysfs) != topology.sources_used.end();
  for (const auto& gpu : topology.gpus) {
    const auto id = gpu_id(gpu.index);
    if (!tree_known)
      tree.left_out.push_back(id + " (PCI tree unknown)");
    else if (!gpu.pci)
      tree.left_out.push_back(id + " (no PCI address)");
    else if (Slot& slot = tree.place(topology, id, *gpu.pci, kGpuClass, gpu.pcie, gpu.numa); !slot.gpu)
      slot.gpu = &gpu;
  }
  for (const auto& nic : topology.nics) {
    const auto id = nic_id(nic.index);
    // NCCL finds a NIC's <pci> by its busid and adds its <nic><net> itself.
    if (!tree_known)
      tree.left_out.push_back(id + " (PCI tree unknown)");
    else if (!nic.pci)
      tree.left_out.push_back(id + " (no PCI address)");
    else
      tree.place(topology, id, *nic.pci, kNicClass, nic.pcie, nic.numa).nics.push_back(&nic);
  }

  std::map<std::string, std::vector<std::string>> children;  // in bus order
  std::map<int, std::vector<std::string>> cpus;              // NUMA node -> what hangs from it
  for (const auto& [pci, slot] : tree.slots) {
    if (slot.parent) children[*slot.parent].push_back(pci);
    // NCCL requires a numaid; for a device whose NUMA node is unknown it writes the -1 that sysfs
    // gives it (as in VMs), and so does nccltune.
    else
      cpus[slot.numa.value_or(-1)].push_back(pci);
  }

  Element system{"system", {}, {}, {}};
  system.set_int("version", 1);  // NCCL_TOPO_XML_VERSION; NCCL refuses any other
  if (!topology.host.empty()) system.set_text("name", topology.host);  // NCCL logs it on load
  for (const auto& [numa, tops] : cpus) {
    Element cpu{"cpu", {}, {}, {}};
    cpu.set_int("numaid", numa);
    std::vector<const Gpu*> gpus;
    for (const auto& pci : tops) gpus_below(tree, children, pci, gpus);
    if (auto affinity = affinity_of(gpus)) cpu.set_text("affinity", *affinity);
    for (const auto& pci : tops) cpu.children.push_back(pci_element(topology, tree, children, pci));
    system.children.push_back(std::move(cpu));
  }

  // Comments hold no "--": XML forbids it, and NCCL's reader ends a comment at the first "-->".
  std::string out =
      "<!-- NCCL topology written by nccltune for NCCL_TOPO_FILE. Attributes nccltune does not know are left "
      "out: NCCL reads them from the machine it runs on. -->\n";
  if (!tree.left_out.empty()) {
    out += "<!-- Left out for NCCL to detect:";
    for (const auto& device : tree.left_out) out += ' ' + device;
    out += " -->\n";
  }
  render(system, 0, out);
  return out;
}

}  // namespace nccltune
