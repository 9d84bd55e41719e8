// `topo --format nccl-xml`: the NCCL topology file (NCCL_TOPO_FILE) of a node. Goldens for the
// snapshots, and checks that parse the output as XML and as NCCL's reader needs it.
#include "topology/nccl_topo_xml.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cctype>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "golden.h"
#include "test_files.h"
#include "topology/sources/topology_reader.h"

using namespace nccltune;
using nccltune::test_support::expect_golden;
using nccltune::test_support::fixture;

namespace {

// A small strict XML reader, enough to reject what is not well-formed: one root element,
// attributes double-quoted and unique, only the five named entities and numeric references in
// values, no raw '<' in values, no text between elements, comments without "--" inside.
struct XmlNode {
  std::string name;
  std::map<std::string, std::string> attributes;  // decoded
  std::map<std::string, std::string> raw;         // as written, what NCCL's reader keeps
  std::vector<std::string> attribute_order;
  std::vector<XmlNode> children;
  std::vector<std::string> comments;  // the text of the comments among the children

  const std::string* attribute(const std::string& key) const {
    auto it = attributes.find(key);
    return it == attributes.end() ? nullptr : &it->second;
  }
  std::string at(const std::string& key) const {
    const std::string* value = attribute(key);
    return value ? *value : "<absent>";
  }
  std::vector<const XmlNode*> all(const std::string& element) const {
    std::vector<const XmlNode*> found;
    for (const auto& child : children) {
      if (child.name == element) found.push_back(&child);
      auto below = child.all(element);
      found.insert(found.end(), below.begin(), below.end());
    }
    return found;
  }
  const XmlNode* child(const std::string& element) const {
    for (const auto& each : children)
      if (each.name == element) return &each;
    return nullptr;
  }
};

class XmlReader {
 public:
  explicit XmlReader(std::string_view text) : text_(text) {}

  std::optional<XmlNode> document(std::string& error) {
    if (!misc(error)) return std::nullopt;
    auto root = element(error);
    if (!root || !misc(error)) return std::nullopt;
    if (pos_ != text_.size()) return fail(error, "content after the root element");
    return root;
  }

 private:
  std::nullopt_t fail(std::string& error, const std::string& what) {
    error = what + " at offset " + std::to_string(pos_);
    return std::nullopt;
  }
  bool starts(std::string_view s) const { return text_.substr(pos_, s.size()) == s; }
  void spaces() {
    while (pos_ < text_.size() && std::string_view(" \t\r\n").find(text_[pos_]) != std::string_view::npos)
      ++pos_;
  }
  // Whitespace and comments.
  bool misc(std::string& error, std::vector<std::string>* comments = nullptr) {
    for (spaces(); starts("<!--"); spaces()) {
      auto end = text_.find("-->", pos_ + 4);
      if (end == std::string_view::npos) {
        fail(error, "unterminated comment");
        return false;
      }
      if (text_.substr(pos_ + 4, end - pos_ - 4).find("--") != std::string_view::npos) {
        fail(error, "'--' inside a comment");
        return false;
      }
      if (comments) comments->emplace_back(text_.substr(pos_ + 4, end - pos_ - 4));
      pos_ = end + 3;
    }
    return true;
  }
  std::optional<std::string> name() {
    std::size_t start = pos_;
    while (pos_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_' ||
            (pos_ > start && (text_[pos_] == '-' || text_[pos_] == '.'))))
      ++pos_;
    if (pos_ == start || std::isdigit(static_cast<unsigned char>(text_[start]))) return std::nullopt;
    return std::string(text_.substr(start, pos_ - start));
  }
  std::optional<std::string> value(std::string& error) {
    if (!starts("\"")) return fail(error, "expected '\"'");
    std::string out;
    for (++pos_; pos_ < text_.size() && text_[pos_] != '"'; ++pos_) {
      const char c = text_[pos_];
      if (c == '<') return fail(error, "raw '<' in a value");
      if (c != '&') {
        out += c;
        continue;
      }
      const auto end = text_.find(';', pos_);
      if (end == std::string_view::npos) return fail(error, "unterminated reference");
      const auto ref = text_.substr(pos_ + 1, end - pos_ - 1);
      static const std::map<std::string_view, char> kNamed = {
          {"amp", '&'}, {"lt", '<'}, {"gt", '>'}, {"quot", '"'}, {"apos", '\''}};
      if (auto it = kNamed.find(ref); it != kNamed.end())
        out += it->second;
      else if (ref.size() > 1 && ref[0] == '#' &&
               ref.find_first_not_of("0123456789", 1) == std::string_view::npos)
        out += static_cast<char>(std::stoi(std::string(ref.substr(1))));
      else
        return fail(error, "unknown reference &" + std::string(ref) + ";");
      pos_ = end;
    }
    if (pos_ >= text_.size()) return fail(error, "unterminated value");
    ++pos_;
    return out;
  }
  std::optional<XmlNode> element(std::string& error) {
    if (!starts("<")) return fail(error, "expected '<'");
    ++pos_;
    XmlNode node;
    auto tag = name();
    if (!tag) return fail(error, "bad element name");
    node.name = *tag;
    while (true) {
      const std::size_t before = pos_;
      spaces();
      if (starts("/>")) {
        pos_ += 2;
        return node;
      }
      if (starts(">")) {
        ++pos_;
        break;
      }
      if (pos_ == before) return fail(error, "expected a space before an attribute");
      auto key = name();
      if (!key || !starts("=")) return fail(error, "bad attribute");
      ++pos_;
      const std::size_t start = pos_ + 1;
      auto text = value(error);
      if (!text) return std::nullopt;
      if (!node.attributes.emplace(*key, *text).second) return fail(error, "duplicate attribute " + *key);
      node.raw.emplace(*key, text_.substr(start, pos_ - 1 - start));
      node.attribute_order.push_back(*key);
    }
    while (true) {
      if (!misc(error, &node.comments)) return std::nullopt;
      if (starts("</")) {
        pos_ += 2;
        auto closing = name();
        if (closing != node.name || !starts(">")) return fail(error, "mismatched end tag for " + node.name);
        ++pos_;
        return node;
      }
      if (!starts("<")) return fail(error, "text between elements");
      auto child = element(error);
      if (!child) return std::nullopt;
      node.children.push_back(std::move(*child));
    }
  }

  std::string_view text_;
  std::size_t pos_ = 0;
};

XmlNode parse(const std::string& xml) {
  std::string error;
  auto root = XmlReader(xml).document(error);
  EXPECT_TRUE(root) << "not well-formed XML: " << error << "\n" << xml;
  return root ? *root : XmlNode{};
}

// NCCL's xmlGetValue keeps a value as written (escaped) and fails on one of 254 characters.
void expect_short_values(const XmlNode& node) {
  for (const auto& [key, value] : node.raw) EXPECT_LE(value.size(), 253u) << key;
  for (const auto& child : node.children) expect_short_values(child);
}

// What NCCL's own reader (src/graph/xml.cc) needs beyond XML: no declaration, no tabs, one space
// between attributes, nothing longer than 253 characters in a value as written.
void expect_nccl_can_read(const std::string& xml) {
  EXPECT_EQ(xml.find("<?"), std::string::npos);
  EXPECT_EQ(xml.find('\t'), std::string::npos);
  std::istringstream lines(xml);
  for (std::string line; std::getline(lines, line);) {
    const auto indent = line.find_first_not_of(' ');
    ASSERT_NE(indent, std::string::npos) << "blank line";
    EXPECT_EQ(line[indent], '<') << line;
    EXPECT_EQ(line.back(), '>') << line;
    if (line.compare(indent, 4, "<!--") != 0) {
      EXPECT_EQ(line.find("  ", indent), std::string::npos) << line;
      EXPECT_EQ(line.find(" />"), std::string::npos) << line;
    }
  }
  expect_short_values(parse(xml));
}

NodeTopology read_snapshot(const std::string& name) {
  auto source = parse_topology_source(fixture(name).string());
  EXPECT_TRUE(source) << source.error();
  auto topology = read_node_topology(*source, {});
  EXPECT_TRUE(topology) << topology.error();
  return topology ? *topology : NodeTopology{};
}

// A node by hand: every GPU and NIC straight on its own host bridge unless bridges are added.
NodeTopology small_node() {
  NodeTopology node;
  node.host = "node01";
  node.sources_used = {FactSource::sysfs};
  Gpu gpu;
  gpu.index = 0;
  gpu.pci = "0000:18:00.0";
  node.gpus.push_back(gpu);
  Nic nic;
  nic.index = 0;
  nic.name = "mlx5_0";
  nic.pci = "0000:19:00.0";
  node.nics.push_back(nic);
  return node;
}

const XmlNode* pci_at(const XmlNode& root, const std::string& busid) {
  for (const auto* pci : root.all("pci"))
    if (pci->at("busid") == busid) return pci;
  return nullptr;
}

}  // namespace

TEST(NcclTopoXml, GoldenSnapshots) {
  for (std::string name : {"dgx-h100", "vm-phb", "pcie-4gpu"}) {
    NodeTopology topology = read_snapshot("nodes/" + name);
    topology.host = name;  // stable across edits of meta.yaml
    const std::string xml = nccl_topo_xml(topology);
    expect_golden(name + ".nccl.xml", xml);
    parse(xml);
    expect_nccl_can_read(xml);
  }
}

TEST(NcclTopoXml, DgxH100NestsGpusAndNicsUnderTheirSwitchAndSocket) {
  const XmlNode root = parse(nccl_topo_xml(read_snapshot("nodes/dgx-h100")));
  ASSERT_EQ(root.name, "system");
  EXPECT_EQ(root.at("version"), "1");
  ASSERT_EQ(root.children.size(), 2u);
  const std::map<std::string, std::string> affinity = {{"0", "00ff00ff"},
                                                       {"1", "ff00ff00"}};  // 0-7,16-23 / 8-15,24-31
  std::map<std::string, std::vector<std::string>> gpus_on;
  std::map<std::string, std::string> nic_beside;  // GPU's PCI address -> NIC's under the same switch
  for (const auto& cpu : root.children) {
    ASSERT_EQ(cpu.name, "cpu");
    EXPECT_EQ(cpu.at("affinity"), affinity.at(cpu.at("numaid")));
    for (const auto* gpu_pci : cpu.all("pci"))
      if (gpu_pci->child("gpu")) gpus_on[cpu.at("numaid")].push_back(gpu_pci->at("busid"));
    // One PCIe switch (its upstream port) per GPU/NIC pair, straight under the CPU: NCCL merges
    // the root port into the CPU and a switch's two ports into one <pci>.
    ASSERT_EQ(cpu.children.size(), 4u);
    for (const auto& sw : cpu.children) {
      EXPECT_EQ(sw.name, "pci");
      EXPECT_EQ(sw.at("class"), "0x060400");
      EXPECT_EQ(sw.at("link_speed"), "32.0 GT/s PCIe");
      EXPECT_EQ(sw.at("link_width"), "16");
      ASSERT_EQ(sw.children.size(), 2u) << sw.at("busid");
      const XmlNode& gpu = sw.children[0];
      const XmlNode& nic = sw.children[1];
      ASSERT_TRUE(gpu.child("gpu")) << sw.at("busid");
      EXPECT_EQ(gpu.at("class"), "0x03");
      EXPECT_EQ(gpu.at("link_speed"), "32.0 GT/s PCIe");
      EXPECT_EQ(gpu.at("link_width"), "16");
      // The NIC: its <pci> alone, NCCL adds <nic><net> from its net plugin; its name in a comment.
      EXPECT_EQ(nic.name, "pci");
      EXPECT_EQ(nic.attribute_order,
                (std::vector<std::string>{"busid", "class", "link_speed", "link_width"}));
      EXPECT_EQ(nic.at("class"), "0x02");
      EXPECT_EQ(nic.at("link_speed"), "32.0 GT/s PCIe");
      EXPECT_EQ(nic.at("link_width"), "16");
      EXPECT_TRUE(nic.children.empty()) << nic.at("busid");
      ASSERT_EQ(nic.comments.size(), 1u) << nic.at("busid");
      nic_beside[gpu.at("busid")] = nic.at("busid") + nic.comments[0];
      const XmlNode& g = *gpu.child("gpu");
      EXPECT_EQ(g.at("sm"), "90");
      for (const char* key : {"dev", "rank", "gdr", "keep"}) EXPECT_FALSE(g.attribute(key)) << key;
      ASSERT_EQ(g.children.size(), 1u);
      EXPECT_EQ(g.children[0].name, "nvlink");
      EXPECT_EQ(g.children[0].at("count"), "18");
      EXPECT_EQ(g.children[0].at("tclass"), "0x068000");
    }
    EXPECT_FALSE(cpu.attribute("host_hash"));
  }
  EXPECT_EQ(gpus_on["0"],
            (std::vector<std::string>{"0000:18:00.0", "0000:2a:00.0", "0000:3a:00.0", "0000:5d:00.0"}));
  EXPECT_EQ(gpus_on["1"],
            (std::vector<std::string>{"0000:9a:00.0", "0000:ab:00.0", "0000:ba:00.0", "0000:db:00.0"}));
  // GPUi and mlx5_i share a switch.
  EXPECT_EQ(nic_beside, (std::map<std::string, std::string>{{"0000:18:00.0", "0000:19:00.0 mlx5_0 "},
                                                            {"0000:2a:00.0", "0000:2b:00.0 mlx5_1 "},
                                                            {"0000:3a:00.0", "0000:3b:00.0 mlx5_2 "},
                                                            {"0000:5d:00.0", "0000:5e:00.0 mlx5_3 "},
                                                            {"0000:9a:00.0", "0000:9b:00.0 mlx5_4 "},
                                                            {"0000:ab:00.0", "0000:ac:00.0 mlx5_5 "},
                                                            {"0000:ba:00.0", "0000:bb:00.0 mlx5_6 "},
                                                            {"0000:db:00.0", "0000:dc:00.0 mlx5_7 "}}));
  EXPECT_EQ(root.all("gpu").size(), 8u);
  EXPECT_TRUE(root.all("nic").empty());
  EXPECT_TRUE(root.all("net").empty());
}

TEST(NcclTopoXml, SpeedIsWhatTheLinkCanDoWidthWhatItTrainedTo) {
  // Idle GPUs at 2.5 GT/s of 32: still Gen5 links. GPU2 trained at x8 of x16: an x8 link.
  const XmlNode idle = parse(nccl_topo_xml(read_snapshot("nodes/dgx-h100-idle")));
  EXPECT_EQ(pci_at(idle, "0000:18:00.0")->at("link_speed"), "32.0 GT/s PCIe");
  const XmlNode degraded = parse(nccl_topo_xml(read_snapshot("nodes/dgx-h100-degraded")));
  EXPECT_EQ(pci_at(degraded, "0000:3a:00.0")->at("link_width"), "8");
  EXPECT_EQ(pci_at(degraded, "0000:2a:00.0")->at("link_width"), "16");
}

TEST(NcclTopoXml, PcieStringsAreNcclsAndThePortAboveLimitsTheLink) {
  NodeTopology node = small_node();
  const std::map<int, std::string> expected = {{1, "2.5 GT/s PCIe"},  {2, "5.0 GT/s PCIe"},
                                               {3, "8.0 GT/s PCIe"},  {4, "16.0 GT/s PCIe"},
                                               {5, "32.0 GT/s PCIe"}, {6, "64.0 GT/s PCIe"}};
  for (const auto& [gen, text] : expected) {
    node.gpus[0].pcie = {gen, 16, gen, 16};
    EXPECT_EQ(pci_at(parse(nccl_topo_xml(node)), "0000:18:00.0")->at("link_speed"), text);
  }
  node.gpus[0].pcie = {7, 16, 7, 16};  // not in NCCL's table: left for NCCL to read
  EXPECT_FALSE(pci_at(parse(nccl_topo_xml(node)), "0000:18:00.0")->attribute("link_speed"));

  // GPU behind a root port (Gen4 x8) that merges into the CPU: the port still limits the link.
  node.gpus[0].pcie = {5, 16, 5, 16};
  node.bridges.push_back({"0000:17:01.0", {4, 8, 4, 8}, std::nullopt, {"GPU0"}});
  const XmlNode root = parse(nccl_topo_xml(node));
  const XmlNode* gpu = pci_at(root, "0000:18:00.0");
  EXPECT_EQ(gpu->at("link_speed"), "16.0 GT/s PCIe");
  EXPECT_EQ(gpu->at("link_width"), "8");
  EXPECT_FALSE(pci_at(root, "0000:17:01.0"));
}

TEST(NcclTopoXml, NestedSwitchesNestAsInNccl) {
  // NIC behind two switches (downstream, upstream, downstream, upstream, root port): two <pci>.
  NodeTopology node = small_node();
  node.gpus[0].numa = 1;
  node.nics[0].numa = 1;
  for (const char* pci : {"0000:10:00.0", "0000:0f:00.0", "0000:0e:00.0", "0000:0d:00.0", "0000:0c:01.0"})
    node.bridges.push_back({pci, {}, std::nullopt, {"NIC0"}});
  node.bridges[2].below.push_back("GPU0");  // the GPU hangs from the upper switch
  node.bridges[3].below.push_back("GPU0");
  node.bridges[4].below.push_back("GPU0");
  const XmlNode root = parse(nccl_topo_xml(node));
  ASSERT_EQ(root.children.size(), 1u);
  const XmlNode& cpu = root.children[0];
  EXPECT_EQ(cpu.at("numaid"), "1");
  ASSERT_EQ(cpu.children.size(), 1u);
  const XmlNode& upper = cpu.children[0];
  EXPECT_EQ(upper.at("busid"), "0000:0d:00.0");
  ASSERT_EQ(upper.children.size(), 2u);
  EXPECT_EQ(upper.children[0].at("busid"), "0000:0f:00.0");  // the lower switch, in bus order
  EXPECT_EQ(upper.children[1].at("busid"), "0000:18:00.0");  // the GPU
  ASSERT_EQ(upper.children[0].children.size(), 1u);
  EXPECT_EQ(upper.children[0].children[0].at("busid"), "0000:19:00.0");  // the NIC
}

TEST(NcclTopoXml, UnknownFactsAreLeftOutNotInvented) {
  NodeTopology node = small_node();  // no NUMA, PCIe link, sm, NVLinks, rate or port known
  const std::string xml = nccl_topo_xml(node);
  const XmlNode root = parse(xml);
  expect_nccl_can_read(xml);
  ASSERT_EQ(root.children.size(), 1u);
  const XmlNode& cpu = root.children[0];
  // NCCL requires a numaid: -1 is what it writes itself when sysfs does not know the node.
  EXPECT_EQ(cpu.attribute_order, std::vector<std::string>{"numaid"});
  EXPECT_EQ(cpu.at("numaid"), "-1");
  const XmlNode* gpu = pci_at(root, "0000:18:00.0");
  EXPECT_EQ(gpu->attribute_order, (std::vector<std::string>{"busid", "class"}));
  ASSERT_TRUE(gpu->child("gpu"));
  EXPECT_TRUE(gpu->child("gpu")->attributes.empty());
  EXPECT_TRUE(gpu->child("gpu")->children.empty());  // no <nvlink>: NCCL detects them
  const XmlNode* nic = pci_at(root, "0000:19:00.0");
  ASSERT_TRUE(nic);
  EXPECT_EQ(nic->attribute_order, (std::vector<std::string>{"busid", "class"}));
  EXPECT_TRUE(nic->children.empty());
  EXPECT_NE(xml.find("<pci busid=\"0000:19:00.0\" class=\"0x02\">\n      <!-- mlx5_0 -->\n    </pci>\n"),
            std::string::npos)
      << xml;
  node.nics[0].name.reset();  // no name: a <pci .../> without children
  EXPECT_NE(nccl_topo_xml(node).find("<pci busid=\"0000:19:00.0\" class=\"0x02\"/>\n"), std::string::npos);

  // GPUs with NVLinks on a node where whether they go to NVSwitches is unknown: none written.
  node.gpus[0].nvlinks = 18;
  EXPECT_TRUE(parse(nccl_topo_xml(node)).all("nvlink").empty());
  // GPUs of one node naming different CPUs: no affinity.
  Gpu other = node.gpus[0];
  other.index = 1;
  other.pci = "0000:3a:00.0";
  node.gpus[0].cpu_affinity = "0-3";
  other.cpu_affinity = "4-7";
  node.gpus.push_back(other);
  EXPECT_FALSE(parse(nccl_topo_xml(node)).children.at(0).attribute("affinity"));
  node.gpus[1].cpu_affinity = "0-3";
  EXPECT_EQ(parse(nccl_topo_xml(node)).children.at(0).at("affinity"), "0000000f");
  node.gpus[0].cpu_affinity = node.gpus[1].cpu_affinity = "0-3,32";
  EXPECT_EQ(parse(nccl_topo_xml(node)).children.at(0).at("affinity"), "00000001,0000000f");
}

TEST(NcclTopoXml, VmWithoutSwitchesHangsEverythingFromItsOneNumaNode) {
  // Each device alone under its own host bridge, sysfs numa_node -1; hwloc's one NUMA node is 0.
  const XmlNode root = parse(nccl_topo_xml(read_snapshot("nodes/vm-phb")));
  ASSERT_EQ(root.children.size(), 1u);
  EXPECT_EQ(root.children[0].at("numaid"), "0");
  EXPECT_EQ(root.children[0].at("affinity"), "0000ffff");  // NVML: 0-15
  EXPECT_EQ(root.children[0].all("gpu").size(), 4u);
  int nics = 0;
  for (const auto& pci : root.children[0].children) {
    EXPECT_NE(pci.at("class"), "0x060400");
    nics += pci.at("class") == "0x02";
  }
  EXPECT_EQ(nics, 4);
}

TEST(NcclTopoXml, DirectNvlinksNameTheirPeerWhenTheyAddUp) {
  NodeTopology node = small_node();
  Gpu other = node.gpus[0];
  other.index = 1;
  other.pci = "0000:3a:00.0";
  node.gpus.push_back(other);
  node.nvswitch = false;
  node.gpus[0].nvlinks = node.gpus[1].nvlinks = 4;
  node.set_link("GPU0", "GPU1", {LinkKind::nvlink, 4}, FactSource::nvml);
  const XmlNode root = parse(nccl_topo_xml(node));
  const auto* gpu0 = pci_at(root, "0000:18:00.0")->child("gpu");
  ASSERT_EQ(gpu0->children.size(), 1u);
  EXPECT_EQ(gpu0->children[0].at("target"), "0000:3a:00.0");
  EXPECT_EQ(gpu0->children[0].at("count"), "4");
  EXPECT_EQ(gpu0->children[0].at("tclass"), "0x03");
  // Six active links but four to the peer: two go somewhere unknown, so none is written.
  node.gpus[0].nvlinks = 6;
  EXPECT_TRUE(pci_at(parse(nccl_topo_xml(node)), "0000:18:00.0")->child("gpu")->children.empty());
}

TEST(NcclTopoXml, HostileStringsAreEscaped) {
  NodeTopology node = small_node();
  node.host = "a<b&c\"d'e>";
  node.nics[0].name = "mlx5_<0>&\"x\"";
  // One more NIC beside the first, at 0000:1a:00.0, 0000:1b:00.0, ... in turn.
  const auto add_nic = [&node](std::string name) {
    Nic nic = node.nics[0];
    nic.index = static_cast<int>(node.nics.size());
    nic.pci = fmt::format("0000:{:02x}:00.0", 0x19 + nic.index);
    nic.name = std::move(name);
    node.nics.push_back(nic);
  };
  add_nic(std::string("mlx5_\x01"));
  add_nic(std::string(300, 'x'));
  add_nic(std::string("mlx5_\xff"));
  add_nic("mlx5--->4");
  add_nic("mlx5 5");
  const std::string xml = nccl_topo_xml(node);
  const XmlNode root = parse(xml);
  expect_nccl_can_read(xml);
  EXPECT_EQ(root.at("name"), "a<b&c\"d'e>");
  // NIC names are NCCL's to write (<net>); one that is not plain goes in no comment either, and
  // every NIC is still written as its <pci>.
  for (const char* text : {"mlx5_<", "<0>", "&amp;&quot;x", "\x01", "\xff",
                           "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "mlx5-", "mlx5 5", "mlx5_"})
    EXPECT_EQ(xml.find(text), std::string::npos) << text << "\n" << xml;
  for (const char* busid :
       {"0000:19:00.0", "0000:1a:00.0", "0000:1b:00.0", "0000:1c:00.0", "0000:1d:00.0", "0000:1e:00.0"}) {
    const XmlNode* nic = pci_at(root, busid);
    ASSERT_TRUE(nic) << busid;
    EXPECT_EQ(nic->at("class"), "0x02");
    EXPECT_TRUE(nic->children.empty());
    EXPECT_TRUE(nic->comments.empty()) << busid;
  }
  EXPECT_EQ(xml.find("no name"), std::string::npos);
  // A host name that would end a comment stays in its attribute (the strict reader checks comments).
  node.host = "x-->y--";
  EXPECT_EQ(parse(nccl_topo_xml(node)).at("name"), "x-->y--");
}

TEST(NcclTopoXml, ValuesFitNcclsReaderAsWritten) {
  // NCCL's xmlGetValue fails on a value of 254 characters as written, escaped: 253 is the most.
  NodeTopology node = small_node();
  auto written = [&](const std::string& host) {
    node.host = host;
    const std::string xml = nccl_topo_xml(node);
    expect_nccl_can_read(xml);
    const XmlNode root = parse(xml);
    const auto raw = root.raw.find("name");
    if (raw == root.raw.end()) return std::string::npos;
    EXPECT_EQ(root.at("name"), host);
    return raw->second.size();
  };
  EXPECT_EQ(written(std::string(253, 'a')), 253u);
  EXPECT_EQ(written(std::string(254, 'a')), std::string::npos);
  EXPECT_EQ(written(std::string(50, '&') + "aaa"), 253u);  // "&amp;" x 50 + 3
  EXPECT_EQ(written(std::string(50, '&') + "aaaa"), std::string::npos);
  EXPECT_EQ(written(std::string(43, '"')), std::string::npos);  // 43 characters, 258 written
}

TEST(NcclTopoXml, NoNetOrNicElementIsEverWritten) {
  // A <net> in the file stops NCCL from completing that NIC's <pci> and <cpu> (ncclTopoFillNet):
  // a <cpu> holding only NICs would keep no arch and NCCL's init would fail.
  std::vector<std::pair<std::string, NodeTopology>> nodes;
  for (std::string name : {"dgx-h100", "dgx-h100-degraded", "dgx-a100", "gb200-tray", "vm-phb", "pcie-4gpu"})
    nodes.emplace_back(name, read_snapshot("nodes/" + name));
  NodeTopology two_sockets = small_node();  // the NIC alone on the other socket
  two_sockets.gpus[0].numa = 0;
  two_sockets.nics[0].numa = 1;
  two_sockets.nics[0].port = 1;
  two_sockets.nics[0].rate_gbps = 400;
  nodes.emplace_back("two sockets", two_sockets);
  for (const auto& [name, topology] : nodes) {
    const std::string xml = nccl_topo_xml(topology);
    EXPECT_EQ(xml.find("<net"), std::string::npos) << name;
    EXPECT_EQ(xml.find("<nic"), std::string::npos) << name;
    const XmlNode root = parse(xml);
    int nics = 0;
    for (const auto* cpu : root.all("cpu")) {
      bool holds_nic = false;
      for (const auto* pci : cpu->all("pci")) holds_nic |= pci->at("class") == "0x02";
      if (!holds_nic) continue;
      ++nics;
      EXPECT_TRUE(cpu->all("net").empty()) << name << " cpu " << cpu->at("numaid");
      EXPECT_TRUE(cpu->all("nic").empty()) << name << " cpu " << cpu->at("numaid");
    }
    EXPECT_GT(nics, 0) << name;
  }
  const XmlNode root = parse(nccl_topo_xml(two_sockets));
  ASSERT_EQ(root.children.size(), 2u);
  EXPECT_EQ(root.children[1].at("numaid"), "1");
  ASSERT_EQ(root.children[1].children.size(), 1u);
  EXPECT_EQ(root.children[1].children[0].at("busid"), "0000:19:00.0");
  EXPECT_TRUE(root.children[1].children[0].children.empty());
}

TEST(NcclTopoXml, WithoutAPciTreeDevicesAreLeftToNccl) {
  // nvidia-smi text knows no PCI bridges: writing the GPUs under their CPU would hide switches.
  auto source =
      parse_topology_source("nvidia-smi:" + fixture("nvidia-smi/dgx-a100-8gpu-8nic-tabs.txt").string());
  ASSERT_TRUE(source);
  auto topology = read_node_topology(*source, {});
  ASSERT_TRUE(topology) << topology.error();
  const std::string xml = nccl_topo_xml(*topology);
  const XmlNode root = parse(xml);
  EXPECT_TRUE(root.all("pci").empty());
  EXPECT_NE(xml.find("GPU0 (PCI tree unknown)"), std::string::npos);
}
