#include "daemon/metrics_textfile.h"

#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "daemon/drift.h"
#include "metric_samples.h"

using namespace nccltune;
using nccltune::test_support::metric_samples;

namespace {

NodeState sample() {
  NodeState s;
  s.node_type_key = "h100-80gb-hbm3.2gpu.nonic.nccl2.28";
  s.node_type.nccl_version = "2.28.9";
  s.scan_duration_s = 0.25;
  s.topology = {2, 1, 1, 3, true, {}};
  s.gpus = {{.id = "GPU0", .name = "NVIDIA \"H100\"\\x\n", .pci = "0000:18:00.0", .pcie = {5, 8, 5, 16}}};
  s.nics = {{.id = "NIC0",
             .name = "mlx5_0",
             .pci = "0000:19:00.0",
             .pcie = {5, 16, 5, 16},
             .port_state = "DOWN",
             .rate_gbps = 10.0}};
  s.checks = {
      {"a", "GPU0", Verdict::pass, ""}, {"b", "GPU0", Verdict::fail, ""}, {"c", "NIC0", Verdict::fail, ""}};
  s.drift = {{"port_not_active", "NIC0 mlx5_0", "down"}};
  return s;
}

}  // namespace

TEST(MetricsTextfile, EveryFamilyHasHelpAndTypeBeforeItsSamples) {
  const std::string text = render_metrics_textfile(sample(), std::nullopt, 1795964168.5);
  const std::regex sample_line(
      R"(^(nccltune_[a-z_]+)(\{[a-z_]+="([^"\\]|\\.)*"(,[a-z_]+="([^"\\]|\\.)*")*\})? -?[0-9.e+]+$)");
  std::set<std::string> helped, typed;
  std::istringstream in(text);
  int sample_count = 0;
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (line.rfind("# HELP ", 0) == 0) {
      helped.insert(line.substr(7, line.find(' ', 7) - 7));
    } else if (line.rfind("# TYPE ", 0) == 0) {
      typed.insert(line.substr(7, line.find(' ', 7) - 7));
      EXPECT_NE(line.find(" gauge"), std::string::npos) << line;
    } else {
      ASSERT_TRUE(std::regex_match(line, m, sample_line)) << "not a sample line: " << line;
      EXPECT_TRUE(helped.count(m[1]) && typed.count(m[1])) << m[1] << " has no HELP/TYPE before it";
      ++sample_count;
    }
  }
  EXPECT_GT(sample_count, 10);
  EXPECT_EQ(text.back(), '\n');
}

TEST(MetricsTextfile, ValuesFollowTheState) {
  const auto s = metric_samples(render_metrics_textfile(sample(), std::nullopt, 1795964168.5));
  EXPECT_EQ(s.at("nccltune_check_verdicts{verdict=\"pass\"}"), "1");
  EXPECT_EQ(s.at("nccltune_check_verdicts{verdict=\"warn\"}"), "0");
  EXPECT_EQ(s.at("nccltune_check_verdicts{verdict=\"fail\"}"), "2");
  EXPECT_EQ(s.at("nccltune_devices{kind=\"gpu\"}"), "2");
  EXPECT_EQ(s.at("nccltune_devices{kind=\"nic\"}"), "1");
  EXPECT_EQ(s.at("nccltune_last_scan_timestamp_seconds"), "1795964168.5");
  EXPECT_EQ(s.at("nccltune_scan_duration_seconds"), "0.25");
  EXPECT_EQ(
      s.at("nccltune_nic_port_active{device=\"NIC0\",name=\"mlx5_0\",pci=\"0000:19:00.0\",state=\"DOWN\"}"),
      "0");
  EXPECT_EQ(s.at("nccltune_pcie_link_width{device=\"NIC0\",name=\"mlx5_0\",pci=\"0000:19:00.0\"}"), "16");
  EXPECT_EQ(s.at("nccltune_drift{kind=\"port_not_active\"}"), "1");
  EXPECT_EQ(s.at("nccltune_degraded"), "0");
}

TEST(MetricsTextfile, BaseUnitsAndTheLinkSpeed) {
  const auto s = metric_samples(render_metrics_textfile(sample(), std::nullopt, 0));
  const std::string nic = "{device=\"NIC0\",name=\"mlx5_0\",pci=\"0000:19:00.0\"}";
  EXPECT_EQ(s.at("nccltune_nic_rate_bits_per_second" + nic), "10000000000");              // 10 Gb/s
  EXPECT_EQ(s.at("nccltune_pcie_link_speed_transfers_per_second" + nic), "32000000000");  // Gen5
  EXPECT_EQ(s.at("nccltune_pcie_link_max_speed_transfers_per_second" + nic), "32000000000");
  EXPECT_EQ(s.count("nccltune_nic_rate_gbps" + nic), 0u);
}

TEST(MetricsTextfile, TheHardwarePeakPerCollective) {
  NodeState s = sample();
  EXPECT_EQ(metric_samples(render_metrics_textfile(s, std::nullopt, 0))
                .count("nccltune_peak_bandwidth_bytes_per_second{path=\"intra_node\",bottleneck=\"\"}"),
            0u)
      << "unknown: no sample";
  s.topology.peak = {{450.0, "NVLink4 x18", {}}, {50.0, "1x mlx5 400 Gb/s per GPU", {}}, std::nullopt};
  const auto m = metric_samples(render_metrics_textfile(s, std::nullopt, 0));
  EXPECT_EQ(m.at("nccltune_peak_bandwidth_bytes_per_second{path=\"intra_node\",bottleneck=\"NVLink4 x18\"}"),
            "450000000000");
  EXPECT_EQ(m.at("nccltune_peak_bandwidth_bytes_per_second{path=\"inter_node_per_gpu\",bottleneck=\"1x mlx5 "
                 "400 Gb/s per GPU\"}"),
            "50000000000");
  // Two GPUs: one node is NVLink's 450; two nodes, two 50 GB/s rails.
  EXPECT_EQ(m.at("nccltune_peak_busbw_bytes_per_second{collective=\"all_reduce\",nodes=\"1\",bottleneck="
                 "\"NVLink4 x18\"}"),
            "450000000000");
  EXPECT_EQ(m.at("nccltune_peak_busbw_bytes_per_second{collective=\"all_reduce\",nodes=\"2\",bottleneck="
                 "\"network, 1x "
                 "mlx5 400 Gb/s per GPU x 2 GPUs\"}"),
            "100000000000");
  EXPECT_EQ(
      m.count(
          "nccltune_peak_busbw_bytes_per_second{collective=\"alltoall\",nodes=\"2\",bottleneck=\"network, 1x "
          "mlx5 400 Gb/s per GPU; alltoall sends 2/3 of its bytes off the node\"}"),
      1u);
}

TEST(MetricsTextfile, EachCheckFindingByName) {
  const auto s = metric_samples(render_metrics_textfile(sample(), std::nullopt, 0));
  EXPECT_EQ(s.at("nccltune_check_status{check=\"a\",subject=\"GPU0\"}"), "0");
  EXPECT_EQ(s.at("nccltune_check_status{check=\"b\",subject=\"GPU0\"}"), "2");
  EXPECT_EQ(s.at("nccltune_check_status{check=\"c\",subject=\"NIC0\"}"), "2");
}

TEST(MetricsTextfile, TheActiveProfileAndItsAge) {
  const ActiveProfile profile{"/shared/store/k/1n.yaml", "k", 1, "2026-11-29T12:00:00Z"};
  const double two_days_later = 1795953600.0 + 2 * 86400;  // 2026-11-29T12:00:00Z is 1795953600
  const auto s = metric_samples(render_metrics_textfile(sample(), profile, two_days_later));
  EXPECT_EQ(s.at("nccltune_profile_info{key=\"k\",nodes=\"1\",date=\"2026-11-29T12:00:00Z\",file=\"/shared/"
                 "store/k/1n.yaml\"}"),
            "1");
  EXPECT_EQ(s.at("nccltune_profile_age_seconds"), "172800");
  const auto none = metric_samples(render_metrics_textfile(sample(), std::nullopt, 0));
  EXPECT_EQ(none.count("nccltune_profile_age_seconds"), 0u);
}

TEST(MetricsTextfile, EveryDriftKindIsWrittenSoAnAlertSeesItClear) {
  NodeState clean = sample();
  clean.drift.clear();
  const auto s = metric_samples(render_metrics_textfile(clean, std::nullopt, 0));
  for (const char* kind : kDriftKinds)
    EXPECT_EQ(s.at("nccltune_drift{kind=\"" + std::string(kind) + "\"}"), "0") << kind;
}

TEST(MetricsTextfile, LabelValuesAreEscaped) {
  const std::string text = render_metrics_textfile(sample(), std::nullopt, 0);
  EXPECT_NE(text.find(R"(name="NVIDIA \"H100\"\\x\n")"), std::string::npos) << text;
  EXPECT_EQ(escape_label_value("a\"b\\c\nd"), R"(a\"b\\c\nd)");
}

TEST(MetricsTextfile, GpuDirectRdmaAndRoceVerdicts) {
  NodeState s = sample();
  const auto none = metric_samples(render_metrics_textfile(s, std::nullopt, 0));
  EXPECT_EQ(none.count("nccltune_gdr_ready"), 0u) << "unknown: no sample";
  EXPECT_EQ(none.count("nccltune_roce_mtu_ok{device=\"NIC0\",name=\"mlx5_0\",pci=\"0000:19:00.0\"}"), 0u);
  s.gdr = GdrStatus{false, {"gdr_peer_memory"}};
  s.nics.push_back(
      {.id = "NIC1", .name = "mlx5_1", .pci = "0000:45:00.0", .roce_mtu = 1500, .roce_gid_index = 3});
  s.nics.push_back({.id = "NIC2", .name = "mlx5_2", .pci = "0000:c5:00.0", .roce_mtu = 9000});
  auto m = metric_samples(render_metrics_textfile(s, std::nullopt, 0));
  EXPECT_EQ(m.at("nccltune_gdr_ready"), "0");
  const std::string nic1 = "{device=\"NIC1\",name=\"mlx5_1\",pci=\"0000:45:00.0\"}";
  const std::string nic2 = "{device=\"NIC2\",name=\"mlx5_2\",pci=\"0000:c5:00.0\"}";
  EXPECT_EQ(m.at("nccltune_roce_gid_index" + nic1), "3");
  EXPECT_EQ(m.count("nccltune_roce_gid_index" + nic2), 0u);
  EXPECT_EQ(m.at("nccltune_roce_mtu_bytes" + nic1), "1500");
  EXPECT_EQ(m.at("nccltune_roce_mtu_ok" + nic1), "0");
  EXPECT_EQ(m.at("nccltune_roce_mtu_ok" + nic2), "1");
  s.gdr = GdrStatus{true, {}};
  m = metric_samples(render_metrics_textfile(s, std::nullopt, 0));
  EXPECT_EQ(m.at("nccltune_gdr_ready"), "1");
}

TEST(MetricsTextfile, WhatNcclLastSaidOfTheNetwork) {
  ObservedNetwork observed;
  observed.file = "/shared/store/k/2n.yaml";
  observed.date = "2026-11-29T12:00:00Z";
  observed.observation.transport = "Socket";
  observed.observation.net_plugin = "Socket";
  observed.observation.nccl_version = "2.28.9";
  observed.observation.hcas = {"eth0", "eth1"};
  observed.observation.connections = 8;
  observed.observation.gdr_connections = 2;
  const auto s = metric_samples(render_metrics_textfile(sample(), std::nullopt, 0, observed));
  EXPECT_EQ(
      s.at("nccltune_nccl_observed_info{transport=\"Socket\",net_plugin=\"Socket\",nccl_version=\"2.28.9\","
           "date=\"2026-11-29T12:00:00Z\",file=\"/shared/store/k/2n.yaml\"}"),
      "1");
  EXPECT_EQ(s.at("nccltune_nccl_observed_hcas"), "2");
  EXPECT_EQ(s.at("nccltune_nccl_observed_gdr_ratio"), "0.25");

  observed.observation.connections.reset();  // no connection lines: GDR unknown, not 0
  EXPECT_EQ(metric_samples(render_metrics_textfile(sample(), std::nullopt, 0, observed))
                .count("nccltune_nccl_observed_gdr_ratio"),
            0u);
  EXPECT_EQ(
      metric_samples(render_metrics_textfile(sample(), std::nullopt, 0)).count("nccltune_nccl_observed_hcas"),
      0u);
}
