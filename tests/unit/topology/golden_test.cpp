// Golden files for the renderers. Regenerate with NCCLTUNE_UPDATE_GOLDEN=1 and review the diff.
#include "golden.h"

#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>

#include "test_files.h"
#include "topology/check_render.h"
#include "topology/checks.h"
#include "topology/sources/topology_reader.h"
#include "topology/topology_json.h"
#include "topology/topology_table.h"

using namespace nccltune;
using nccltune::test_support::expect_golden;

namespace {

NodeTopology read_fixture(const std::string& from) {
  const std::string path = test_support::fixture(from).string();
  auto source = parse_topology_source(path);
  if (!source) {
    source = parse_topology_source("nvidia-smi:" + path);
  }
  EXPECT_TRUE(source) << source.error();
  auto topology = read_node_topology(*source, {});
  EXPECT_TRUE(topology) << topology.error();
  return topology ? *topology : NodeTopology{};
}

class Golden : public ::testing::TestWithParam<std::string> {};

}  // namespace

TEST_P(Golden, TableJsonAndCheck) {
  const std::string fixture = GetParam();
  NodeTopology topology = read_fixture(fixture);
  topology.host = std::filesystem::path(fixture).stem().string();  // stable across renames of meta.yaml hosts
  std::string base = std::filesystem::path(fixture).stem().string();
  expect_golden(base + ".table.txt", render_topology_table(topology));
  expect_golden(base + ".json", topology_to_json(topology).dump(2) + "\n");
  expect_golden(base + ".check.txt", render_check_text(topology, check_node(topology, {})));
}

INSTANTIATE_TEST_SUITE_P(Fixtures, Golden,
                         ::testing::Values("nodes/dgx-h100", "nodes/dgx-h100-degraded", "nodes/dgx-a100",
                                           "nodes/gb200-tray", "nodes/roce-2nic-mtu1500",
                                           "nodes/dgx-h100-no-peermem", "nodes/vm-h100-2gpu",
                                           "nvidia-smi/dgx-a100-8gpu-8nic-tabs.txt",
                                           "nvidia-smi/old-driver-4gpu-pcie-soc.txt"),
                         [](const auto& param_info) {
                           std::string name = std::filesystem::path(param_info.param).stem().string();
                           for (auto& c : name)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return name;
                         });
