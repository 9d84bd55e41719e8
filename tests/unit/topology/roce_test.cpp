// RoCE: the GID table and MTU as sysfs gives them, the GID index NCCL should use, and check's
// verdicts on them.
#include "topology/roce.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "test_files.h"
#include "topology/check_render.h"
#include "topology/checks.h"
#include "topology/sources/sysfs_source.h"

using namespace nccltune;
using nccltune::test_support::TempDir;
using nccltune::test_support::write_file;

namespace {

constexpr const char* kLinkLocal = "fe80:0000:0000:0000:ba3f:d2ff:fe78:4500";
constexpr const char* kMapped = "0000:0000:0000:0000:0000:ffff:0a00:0005";  // ::ffff:10.0.0.5

// One GID table entry under a port directory, as the kernel lays it out.
void write_gid(const std::filesystem::path& port, int index, const std::string& gid, const std::string& type,
               const std::string& ndev) {
  const std::string name = std::to_string(index);
  write_file(port / "gids" / name, gid + "\n");
  if (!type.empty()) write_file(port / "gid_attrs/types" / name, type + "\n");
  if (!ndev.empty()) write_file(port / "gid_attrs/ndevs" / name, ndev + "\n");
}

// A RoCE port mlx5_0/1 on ens1f0np0 with the usual four entries (link-local and ::ffff:10.0.0.5,
// RoCE v1 and v2 each) under `sys`.
std::filesystem::path roce_port(const std::filesystem::path& sys) {
  const auto port = sys / "class/infiniband/mlx5_0/ports/1";
  write_file(port / "state", "4: ACTIVE\n");
  write_file(port / "rate", "100 Gb/sec (4X EDR)\n");
  write_file(port / "link_layer", "Ethernet\n");
  write_gid(port, 0, kLinkLocal, "IB/RoCE v1", "ens1f0np0");
  write_gid(port, 1, kLinkLocal, "RoCE v2", "ens1f0np0");
  write_gid(port, 2, kMapped, "IB/RoCE v1", "ens1f0np0");
  write_gid(port, 3, kMapped, "RoCE v2", "ens1f0np0");
  return port;
}

RoceGid gid(int index, const std::string& address, const std::string& type, const std::string& ndev) {
  return {index, address, type, ndev};
}

// GPU i and NIC i under one switch, every NIC a RoCE port whose IPv4 RoCE v2 GID is at index_of[i].
NodeTopology roce_node(const std::vector<int>& index_of, int mtu) {
  NodeTopology t;
  t.host = "test";
  for (std::size_t i = 0; i < index_of.size(); ++i) {
    Gpu g;
    g.index = static_cast<int>(i);
    g.numa = 0;
    t.gpus.push_back(g);
    Nic nic;
    nic.index = static_cast<int>(i);
    nic.name = "mlx5_" + std::to_string(i);
    nic.netdev = "ens" + std::to_string(i + 1) + "f0np0";
    nic.numa = 0;
    nic.state = "ACTIVE";
    nic.link_layer = "Ethernet";
    nic.mtu = mtu;
    nic.gids = std::vector<RoceGid>{gid(0, kLinkLocal, "IB/RoCE v1", *nic.netdev),
                                    gid(1, kLinkLocal, "RoCE v2", *nic.netdev)};
    nic.gids->push_back(gid(index_of[i] - 1, kMapped, "IB/RoCE v1", *nic.netdev));
    nic.gids->push_back(gid(index_of[i], kMapped, "RoCE v2", *nic.netdev));
    t.nics.push_back(nic);
  }
  for (std::size_t i = 0; i < index_of.size(); ++i)
    for (std::size_t j = 0; j < index_of.size(); ++j)
      t.set_link(gpu_id(static_cast<int>(i)), nic_id(static_cast<int>(j)),
                 {i == j ? LinkKind::pix : LinkKind::node, 0}, FactSource::hwloc);
  return t;
}

const Finding* find(const CheckReport& r, const std::string& check, const std::string& subject) {
  auto it = std::find_if(r.findings.begin(), r.findings.end(), [&](const Finding& f) {
    return f.check == check && f.subject.rfind(subject, 0) == 0;
  });
  return it == r.findings.end() ? nullptr : &*it;
}

const Recommendation* recommended(const CheckReport& r, const std::string& name) {
  auto it = std::find_if(r.recommendations.begin(), r.recommendations.end(),
                         [&](const Recommendation& x) { return x.name == name; });
  return it == r.recommendations.end() ? nullptr : &*it;
}

}  // namespace

TEST(Roce, GidTextIsEightGroupsOfFourHexDigits) {
  EXPECT_EQ(normalize_gid("0000:0000:0000:0000:0000:FFFF:0A00:0005"), kMapped);
  EXPECT_FALSE(normalize_gid("::ffff:10.0.0.5"));  // sysfs never abbreviates
  EXPECT_FALSE(normalize_gid("0000:0000:0000:0000:0000:ffff:0a00:00g5"));
  EXPECT_FALSE(normalize_gid("0000:0000:0000:0000:0000:ffff:0a00:0005:"));
  EXPECT_FALSE(normalize_gid(""));
  EXPECT_TRUE(is_empty_gid("0000:0000:0000:0000:0000:0000:0000:0000"));
  EXPECT_FALSE(is_empty_gid(kLinkLocal));
  EXPECT_EQ(gid_ipv4(kMapped), "10.0.0.5");
  EXPECT_EQ(gid_ipv4("0000:0000:0000:0000:0000:ffff:c0a8:0101"), "192.168.1.1");
  EXPECT_FALSE(gid_ipv4(kLinkLocal));
  EXPECT_FALSE(gid_ipv4("0000:0000:0000:0000:0000:fffe:c0a8:0101"));
  EXPECT_TRUE(is_gid_type("RoCE v2"));
  EXPECT_TRUE(is_gid_type("IB/RoCE v1"));
  EXPECT_FALSE(is_gid_type("RoCE v3"));
}

TEST(Roce, PathMtuIsTheLargestIbMtuThatFitsAfterTheHeaders) {
  EXPECT_EQ(roce_path_mtu(9000), 4096);
  EXPECT_EQ(roce_path_mtu(4192), 4096);
  EXPECT_EQ(roce_path_mtu(4191), 2048);
  EXPECT_EQ(roce_path_mtu(4096), 2048);
  EXPECT_EQ(roce_path_mtu(1500), 1024);
  EXPECT_EQ(roce_path_mtu(300), 0);
}

TEST(Roce, NcclUsesTheRoceV2GidWithAnIpv4AddressOnItsOwnNetdev) {
  Nic nic;
  nic.link_layer = "Ethernet";
  nic.netdev = "ens1f0np0";
  EXPECT_FALSE(nccl_gid(nic)) << "no table read";
  nic.gids = std::vector<RoceGid>{gid(0, kLinkLocal, "IB/RoCE v1", "ens1f0np0"),
                                  gid(1, kLinkLocal, "RoCE v2", "ens1f0np0"),
                                  gid(2, kMapped, "IB/RoCE v1", "ens1f0np0")};
  EXPECT_FALSE(nccl_gid(nic)) << "IPv4 only as RoCE v1";
  nic.gids->push_back(gid(5, "0000:0000:0000:0000:0000:ffff:0a00:0105", "RoCE v2", "ens1f0np0.100"));
  nic.gids->push_back(gid(7, kMapped, "RoCE v2", "ens1f0np0"));
  ASSERT_TRUE(nccl_gid(nic));
  EXPECT_EQ(nccl_gid(nic)->index, 7) << "the NIC's own netdev before a VLAN's lower index";
  nic.gids->push_back(gid(3, kMapped, "RoCE v2", "ens1f0np0"));
  EXPECT_EQ(nccl_gid(nic)->index, 3);
}

TEST(Sysfs, ReadsARocePortsGidTableAndItsNetdevsMtu) {
  const TempDir sys("nccltune-sysfs");
  const auto port = roce_port(sys.path());
  write_file(port / "gids/4", "0000:0000:0000:0000:0000:0000:0000:0000\n");  // unused: no attrs
  write_file(sys / "class/net/ens1f0np0/mtu", "9000\n");
  write_file(sys / "class/net/ens1f0np0/operstate", "up\n");
  std::vector<std::string> notes;
  const SysfsSource source(sys.path());
  const auto devices = source.rdma_devices(&notes);
  ASSERT_EQ(devices.size(), 1u);
  ASSERT_EQ(devices[0].ports.size(), 1u);
  ASSERT_TRUE(devices[0].ports[0].gids);
  const auto& table = *devices[0].ports[0].gids;
  ASSERT_EQ(table.size(), 4u);
  EXPECT_EQ(table[3], gid(3, kMapped, "RoCE v2", "ens1f0np0"));
  EXPECT_TRUE(notes.empty()) << notes.front();
  const auto interfaces = source.net_interfaces(&notes);
  ASSERT_EQ(interfaces.size(), 1u);
  EXPECT_EQ(interfaces[0].mtu, 9000);
}

TEST(Sysfs, AnInfinibandPortHasNoGidTableRead) {
  const TempDir sys("nccltune-sysfs");
  const auto port = sys / "class/infiniband/mlx5_0/ports/1";
  write_file(port / "link_layer", "InfiniBand\n");
  write_gid(port, 0, kLinkLocal, "", "");
  const auto devices = SysfsSource(sys.path()).rdma_devices();
  ASSERT_EQ(devices.size(), 1u);
  EXPECT_FALSE(devices[0].ports[0].gids);
}

TEST(Sysfs, DamagedGidEntriesAndMtuAreUnknownWithANote) {
  const TempDir sys("nccltune-sysfs");
  const auto port = roce_port(sys.path());
  write_file(port / "gids/5", "::ffff:10.0.0.9\n");
  write_gid(port, 6, kMapped, "RoCE v3", "../../etc");
  write_file(port / "gids/7", "\xff\xfe garbage\n");
  write_file(port / "gids/9", std::string(100 << 10, 'f'));  // over an attribute's size
  write_file(sys / "class/net/ens1f0np0/mtu", "jumbo\n");
  std::vector<std::string> notes;
  const SysfsSource source(sys.path());
  const auto devices = source.rdma_devices(&notes);
  const auto& table = *devices.at(0).ports.at(0).gids;
  ASSERT_EQ(table.size(), 5u);  // 0-3 and 6
  EXPECT_EQ(table[4].index, 6);
  EXPECT_FALSE(table[4].type);
  EXPECT_FALSE(table[4].ndev);
  const auto net = source.net_interfaces(&notes);
  EXPECT_FALSE(net.at(0).mtu);
  const std::string all = [&] {
    std::string s;
    for (const auto& n : notes) s += n + "\n";
    return s;
  }();
  EXPECT_NE(all.find("mlx5_0 port 1 GID 5: '::ffff:10.0.0.9' is not a GID"), std::string::npos) << all;
  EXPECT_NE(all.find("GID 6: type 'RoCE v3'"), std::string::npos) << all;
  EXPECT_NE(all.find("GID 6: netdev '../../etc'"), std::string::npos) << all;
  EXPECT_NE(all.find("GID 7: '?? garbage' is not a GID"), std::string::npos) << all;
  EXPECT_NE(all.find("ens1f0np0: MTU 'jumbo' is not one"), std::string::npos) << all;
  EXPECT_EQ(all.find("GID 9"), std::string::npos) << "an oversized file reads as absent: " << all;
}

TEST(Sysfs, GidTablesAreReadUpToTheCap) {
  const TempDir sys("nccltune-sysfs");
  const auto port = roce_port(sys.path());
  write_gid(port, kMaxGidsPerPort - 1, kLinkLocal, "RoCE v2", "ens1f0np0");
  write_gid(port, kMaxGidsPerPort, kMapped, "RoCE v2", "ens1f0np0");
  std::vector<std::string> notes;
  const auto devices = SysfsSource(sys.path()).rdma_devices(&notes);
  const auto& table = *devices.at(0).ports.at(0).gids;
  EXPECT_EQ(table.back().index, kMaxGidsPerPort - 1);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("longer than 256 entries"), std::string::npos) << notes[0];
}

TEST(RoceChecks, RecommendsTheGidIndexAfterTheHcas) {
  const auto report = check_node(roce_node({3, 3}, 9000), {});
  EXPECT_EQ(report.exit_code(), 0);
  ASSERT_GE(report.recommendations.size(), 2u);
  EXPECT_EQ(report.recommendations[0].name, "NCCL_IB_HCA");
  EXPECT_EQ(report.recommendations[1].name, "NCCL_IB_GID_INDEX");
  EXPECT_EQ(report.recommendations[1].value, "3");
  EXPECT_NE(report.recommendations[1].reason.find("all 2 RoCE NICs"), std::string::npos);
  const Finding* f = find(report, "roce_gid", "NIC1 (mlx5_1)");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->verdict, Verdict::pass);
  EXPECT_EQ(f->message, "RoCE v2 GID 3: ::ffff:10.0.0.5 on ens2f0np0");
  EXPECT_EQ(find(report, "roce_mtu", "NIC0")->message, "MTU 9000 on ens1f0np0: RoCE path MTU 4096");
}

TEST(RoceChecks, NicsThatDisagreeOnTheIndexWarnAndGetNoValue) {
  const auto report = check_node(roce_node({3, 5}, 9000), {});
  EXPECT_EQ(report.exit_code(), 1);
  const Finding* f = find(report, "roce_gid_index", "node");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->verdict, Verdict::warn);
  EXPECT_NE(f->message.find("mlx5_0: 3, mlx5_1: 5"), std::string::npos) << f->message;
  EXPECT_NE(f->message.find("NCCL_IB_GID_INDEX is one value"), std::string::npos);
  EXPECT_FALSE(recommended(report, "NCCL_IB_GID_INDEX"));
}

TEST(RoceChecks, AnMtuBelowWhatAFullPathMtuNeedsWarnsSayingWhatToDo) {
  const auto report = check_node(roce_node({3}, 1500), {});
  EXPECT_EQ(report.exit_code(), 1);
  const Finding* f = find(report, "roce_mtu", "NIC0 (mlx5_0)");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->verdict, Verdict::warn);
  EXPECT_NE(f->message.find("MTU 1500 on ens1f0np0 is below 4096 and caps RoCE's path MTU at 1024"),
            std::string::npos)
      << f->message;
  EXPECT_NE(f->message.find("jumbo frames, `ip link set dev ens1f0np0 mtu 9000`"), std::string::npos);
  EXPECT_EQ(find(check_node(roce_node({3}, 4095), {}), "roce_mtu", "NIC0")->verdict, Verdict::warn);
  // 4096 is where check stops warning; RoCE's 96 header bytes still leave a 2048-byte path there.
  const CheckReport report_4096 = check_node(roce_node({3}, 4096), {});
  const Finding* at_4096 = find(report_4096, "roce_mtu", "NIC0");
  ASSERT_TRUE(at_4096);
  EXPECT_EQ(at_4096->verdict, Verdict::pass);
  EXPECT_EQ(at_4096->message,
            "MTU 4096 on ens1f0np0: RoCE path MTU 2048 (an MTU of 4192 or more, such as 9000, gives 4096)");
  EXPECT_EQ(recommended(report, "NCCL_IB_GID_INDEX")->value, "3") << "the MTU does not change the index";
}

TEST(RoceChecks, APortWithoutAnIpv4RoceV2GidWarns) {
  auto t = roce_node({3}, 9000);
  t.nics[0].gids->pop_back();
  const auto report = check_node(t, {});
  const Finding* f = find(report, "roce_gid", "NIC0");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->verdict, Verdict::warn);
  EXPECT_NE(f->message.find("give ens1f0np0 an IPv4 address"), std::string::npos) << f->message;
  EXPECT_FALSE(recommended(report, "NCCL_IB_GID_INDEX"));
}

TEST(RoceChecks, InfinibandAndUnreadTablesAreNotJudged) {
  auto t = roce_node({3}, 1500);
  t.nics[0].gids.reset();
  t.nics[0].mtu.reset();
  auto report = check_node(t, {});
  EXPECT_FALSE(find(report, "roce_gid", "NIC0"));
  EXPECT_FALSE(find(report, "roce_mtu", "NIC0"));
  t = roce_node({3}, 1500);
  t.nics[0].link_layer = "InfiniBand";
  report = check_node(t, {});
  EXPECT_FALSE(find(report, "roce_mtu", "NIC0"));
  EXPECT_FALSE(recommended(report, "NCCL_IB_GID_INDEX"));
}

TEST(RoceChecks, CheckJsonCarriesTheGidIndexAndTheFindings) {
  const auto t = roce_node({3}, 1500);
  const auto doc = check_to_json(t, check_node(t, {}));
  EXPECT_EQ(doc["recommendations"]["NCCL_IB_GID_INDEX"]["value"], "3");
  bool mtu_warned = false;
  for (const auto& f : doc["findings"])
    if (f["check"] == "roce_mtu" && f["verdict"] == "WARN") mtu_warned = true;
  EXPECT_TRUE(mtu_warned) << doc.dump(2);
  EXPECT_TRUE(doc["gpudirect_rdma"].is_null()) << "nothing known of GPUDirect RDMA here";
}
