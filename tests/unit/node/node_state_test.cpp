#include "node/node_state.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "test_files.h"
#include "topology/checks.h"
#include "topology/sources/topology_reader.h"

using namespace nccltune;
using nccltune::test_support::fixture;
using nccltune::test_support::TempDir;
using nccltune::test_support::write_file;

namespace {

NodeState sample_state() {
  NodeState s;
  s.host = "node001";
  s.scanned_at = "2026-11-29T12:00:00Z";
  s.scan_duration_s = 0.031;
  s.node_type.gpu = "NVIDIA H100 80GB HBM3";
  s.node_type.gpus = 2;
  s.node_type.gpu_sm = 90;
  s.node_type.nvswitch = true;
  s.node_type.nvlinks = 18;
  s.node_type.nics = 1;
  s.node_type.nic = "mlx5 InfiniBand 400 Gb/s";
  s.node_type.nic_rate_gbps = 400;
  s.node_type.gpu_nic_affinity = "PIX";
  s.node_type.nccl_version = "2.28.9";
  s.node_type.cuda_driver = "13.0";
  s.node_type_key = node_type_key(s.node_type);
  s.topology = {2, 1, 1, 3, true, {}};
  s.topology.peak = {{450.0, "NVLink4 x18", {}}, {31.5076923, "1/2 of mlx5 400 Gb/s per GPU", {}}, 72};
  s.gpus = {{.id = "GPU0", .name = "NVIDIA H100 80GB HBM3", .pci = "0000:18:00.0", .pcie = {5, 16, 5, 16}},
            {.id = "GPU1"}};
  s.nics = {{.id = "NIC0",
             .name = "mlx5_0",
             .pci = "0000:19:00.0",
             .pcie = {5, 16, 5, 16},
             .port_state = "ACTIVE",
             .rate_gbps = 400.0},
            {.id = "NIC1",
             .name = "mlx5_1",
             .pci = "0000:29:00.0",
             .pcie = {4, 16, 4, 16},
             .port_state = "ACTIVE",
             .rate_gbps = 100.0,
             .roce_mtu = 9000,
             .roce_gid_index = 3}};
  s.checks = {{"pcie_link", "GPU0", Verdict::pass, "Gen5 x16"},
              {"nic_port", "NIC0 (mlx5_0)", Verdict::warn, "slow"}};
  s.gdr = GdrStatus{false, {"gdr_peer_memory", "pcie_acs"}};
  s.drift = {{"gpu_missing", "GPU2 0000:3a:00.0", "GPU2 0000:3a:00.0 is missing"}};
  s.degraded = {"NVML: not loaded"};
  return s;
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

}  // namespace

TEST(NodeState, RendersAndParsesBackEveryField) {
  const NodeState state = sample_state();
  const auto parsed = parse_node_state(render_node_state(state), "node.yaml");
  ASSERT_TRUE(parsed) << parsed.error();
  EXPECT_EQ(*parsed, state);
}

TEST(NodeState, CountsVerdictsInTheFile) {
  const std::string text = render_node_state(sample_state());
  EXPECT_NE(text.find("pass: 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("warn: 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("fail: 0\n"), std::string::npos) << text;
  EXPECT_NE(text.find("scan_duration_s: 0.031\n"), std::string::npos) << text;
}

TEST(NodeState, UntrustedTextStillParsesBack) {
  NodeState state = sample_state();
  state.host = "evil\nschema: x";
  state.checks[0].message = "quote \" backslash \\ tab \t bell \a";
  state.degraded = {std::string(5000, '\x01')};
  const auto parsed = parse_node_state(render_node_state(state), "node.yaml");
  ASSERT_TRUE(parsed) << parsed.error();
  EXPECT_EQ(parsed->host.find('\n'), std::string::npos);
  EXPECT_EQ(parsed->node_type_key, state.node_type_key);
}

// fuzz_node_state found long texts cut again, with another length noted, each time the state was
// read and written: a cut text now fits in the limit, so it is written back the same.
TEST(NodeState, CutTextIsWrittenBackTheSame) {
  NodeState state = sample_state();
  state.host = std::string(1500, 'h');
  state.degraded = {std::string(900, '\x01')};
  const std::string text = render_node_state(state);
  EXPECT_NE(text.find("... (1500 bytes)"), std::string::npos) << text;
  const auto parsed = parse_node_state(text, "node.yaml");
  ASSERT_TRUE(parsed) << parsed.error();
  EXPECT_LE(parsed->host.size(), 1000u);
  EXPECT_EQ(render_node_state(*parsed), text);
}

TEST(NodeState, DescribesASnapshotAsCheckAndTopoDo) {
  auto topology = read_node_topology({TopologySource::Kind::snapshot, fixture("nodes/dgx-h100")}, {});
  ASSERT_TRUE(topology) << topology.error();
  const TopologySummary summary = summarize_topology(*topology);
  EXPECT_EQ(summary.gpus, 8);
  EXPECT_EQ(summary.nics, 8);
  EXPECT_EQ(summary.numa_nodes, 2);
  EXPECT_EQ(summary.nvswitch, std::optional<bool>(true));
  EXPECT_EQ(summary.peak.intra_node, (LineRate{450.0, "NVLink4 x18", {}}));
  EXPECT_EQ(summary.peak.inter_node, (LineRate{50.0, "1x mlx5 400 Gb/s per GPU", {}}));
  const auto gpus = gpu_states(*topology);
  ASSERT_EQ(gpus.size(), 8u);
  EXPECT_EQ(gpus[7].pci, std::optional<std::string>("0000:db:00.0"));
  EXPECT_EQ(gpus[7].pcie.width, std::optional<int>(16));
  const auto nics = nic_states(*topology);
  ASSERT_EQ(nics.size(), 8u);
  EXPECT_EQ(nics[5].name, std::optional<std::string>("mlx5_5"));
  EXPECT_EQ(nics[5].port_state, std::optional<std::string>("ACTIVE"));
  const CheckReport report = check_node(*topology, {});
  const auto entries = check_entries(report);
  ASSERT_EQ(entries.size(), report.findings.size());
  EXPECT_EQ(entries.front().id, report.findings.front().check);
}

TEST(NodeState, CarriesRoceAndGpuDirectVerdictsOfASnapshot) {
  auto topology = read_node_topology({TopologySource::Kind::snapshot, fixture("nodes/pcie-4gpu")}, {});
  ASSERT_TRUE(topology) << topology.error();
  const auto nics = nic_states(*topology);
  ASSERT_EQ(nics.size(), 1u);
  EXPECT_EQ(nics[0].roce_mtu, 9000);
  EXPECT_EQ(nics[0].roce_gid_index, 3);
  auto dgx = read_node_topology({TopologySource::Kind::snapshot, fixture("nodes/dgx-h100")}, {});
  ASSERT_TRUE(dgx) << dgx.error();
  EXPECT_FALSE(nic_states(*dgx)[0].roce_mtu) << "InfiniBand";
  const std::string text = [&] {
    NodeState state;
    state.node_type_key = "k";
    state.gdr = check_node(*dgx, {}).gdr;
    return render_node_state(state);
  }();
  EXPECT_NE(text.find("gpudirect_rdma:\n  ready: true\n  blocked_by: []\n"), std::string::npos) << text;
}

TEST(NodeTypeKey, ReadsTheValidatedKey) {
  const TempDir dir("node_state_test");
  const auto file = dir / "node.yaml";
  write_file(file, render_node_state(sample_state()));
  const auto key = read_node_type_key(file);
  ASSERT_TRUE(key) << key.error();
  EXPECT_EQ(*key, "h100-80gb-hbm3.2gpu.nvswitch.1xib400.pix.nccl2.28");
}

TEST(NodeTypeKey, ToleratesFieldsANewerDaemonAdds) {
  const TempDir dir("node_state_test");
  const auto file = dir / "node.yaml";
  write_file(file, render_node_state(sample_state()) + "future_field: 1\n");
  EXPECT_TRUE(read_node_type_key(file));
  EXPECT_FALSE(read_node_state(file));  // the full reader stays strict
}

TEST(NodeTypeKey, ErrorsNameTheFileAndTheField) {
  const std::string good = render_node_state(sample_state());
  struct Case {
    std::string text, field;
  };
  const Case cases[] = {
      {replaced(good, "key: \"h100-80gb-hbm3", "key: \"../etc"), "node_type.key"},
      {replaced(good, "key: \"h100-80gb-hbm3", "key: \"h100 80gb$(reboot)"), "node_type.key"},
      {replaced(good, "schema: \"nccltune/node/v1\"", "schema: \"nccltune/node/v9\""), "schema"},
      {replaced(good, "  key: ", "  kee: "), "node_type.key"},
      {"schema: nccltune/node/v1\nhost: x\n", "node_type"},
      {"", "must be a map"},
  };
  const TempDir dir("node_state_test");
  for (const Case& c : cases) {
    const auto file = dir / "node.yaml";
    write_file(file, c.text);
    const auto key = read_node_type_key(file);
    ASSERT_FALSE(key) << c.text;
    EXPECT_NE(key.error().find(file.string()), std::string::npos) << key.error();
    EXPECT_NE(key.error().find(c.field), std::string::npos) << key.error();
  }
  const auto missing = read_node_type_key("/nonexistent/node.yaml");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().find("/nonexistent/node.yaml"), std::string::npos);
}

TEST(NodeState, StrictParserNamesLineAndKey) {
  const std::string text =
      replaced(render_node_state(sample_state()), "topology:\n", "topology:\n  bogus: 1\n");
  const auto parsed = parse_node_state(text, "node.yaml");
  ASSERT_FALSE(parsed);
  EXPECT_NE(parsed.error().find("node.yaml:"), std::string::npos) << parsed.error();
  EXPECT_NE(parsed.error().find("unknown key 'bogus'"), std::string::npos) << parsed.error();
  const auto level = parse_node_state(
      replaced(render_node_state(sample_state()), "level: \"warn\"", "level: \"maybe\""), "n");
  ASSERT_FALSE(level);
  EXPECT_NE(level.error().find("verdicts.checks[1].level"), std::string::npos) << level.error();
  const auto gdr =
      parse_node_state(replaced(render_node_state(sample_state()), "ready: false", "ready: maybe"), "n");
  ASSERT_FALSE(gdr);
  EXPECT_NE(gdr.error().find("gpudirect_rdma.ready"), std::string::npos) << gdr.error();
}

TEST(NodeTypeKey, ValidKeys) {
  EXPECT_TRUE(is_valid_node_type_key("h100-80gb-hbm3.8gpu.nvswitch.8xib400.pix.nccl2.28"));
  EXPECT_FALSE(is_valid_node_type_key(""));
  EXPECT_FALSE(is_valid_node_type_key(".."));
  EXPECT_FALSE(is_valid_node_type_key("a/b"));
  EXPECT_FALSE(is_valid_node_type_key("a b"));
  EXPECT_FALSE(is_valid_node_type_key(std::string(256, 'a')));
}
