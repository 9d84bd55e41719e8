// Feeds arbitrary bytes, split at newlines, as the RoCE and GPUDirect facts a node's sysfs and
// procfs give (a RoCE port's GID entries and their types and netdevs, the netdev's MTU, the
// kernel release, the driver's banner and version, the peer-memory module, an IOMMU group type)
// to the pure parsers of those texts and to `check`'s judgement and text of a node holding them.
// Asserts only what the sanitizers and a clean return assert.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "topology/check_render.h"
#include "topology/checks.h"
#include "topology/gpudirect.h"
#include "topology/roce.h"

namespace {

std::vector<std::string> lines_of(std::string_view text) {
  std::vector<std::string> lines;
  while (!text.empty() && lines.size() < 64) {
    const std::size_t end = text.find('\n');
    lines.emplace_back(text.substr(0, end));
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
  }
  return lines;
}

std::string line(const std::vector<std::string>& lines, std::size_t i) {
  return i < lines.size() ? lines[i] : std::string();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace nccltune;
  const std::vector<std::string> lines =
      lines_of(std::string_view(reinterpret_cast<const char*>(data), size));
  for (const std::string& text : lines) {
    (void)kernel_version(text);
    (void)driver_branch(text);
    (void)is_gid_type(text);
    (void)gid_ipv4(text);
    if (const auto gid = normalize_gid(text)) (void)is_empty_gid(*gid);
  }

  NodeTopology node;
  node.host = "fuzz";
  Gpu gpu;
  gpu.index = 0;
  gpu.numa = 0;
  gpu.iommu = line(lines, 0);
  node.gpus.push_back(gpu);
  Nic nic;
  nic.index = 0;
  nic.name = "mlx5_0";
  nic.netdev = line(lines, 1);
  nic.numa = 0;
  nic.state = "ACTIVE";
  nic.link_layer = "Ethernet";
  nic.mtu = static_cast<int>(line(lines, 2).size() * 97 % 20000);
  nic.iommu = line(lines, 3);
  std::vector<RoceGid> gids;
  for (std::size_t i = 8; i + 2 < lines.size(); i += 3) {
    RoceGid entry;
    entry.index = static_cast<int>(i);
    entry.gid = normalize_gid(lines[i]).value_or(lines[i]);
    entry.type = lines[i + 1];
    entry.ndev = lines[i + 2];
    gids.push_back(entry);
  }
  nic.gids = gids;
  node.nics.push_back(nic);
  node.gpudirect.kernel_release = line(lines, 4);
  node.gpudirect.nvidia_module_version = line(lines, 5);
  node.gpudirect.peer_memory = line(lines, 6);
  node.gpudirect.open_kernel_module = line(lines, 7).size() % 2 == 0;

  const CheckReport report = check_node(node, Expectation{});
  (void)render_check_text(node, report);
  (void)roce_path_mtu(*nic.mtu);
  return 0;
}
