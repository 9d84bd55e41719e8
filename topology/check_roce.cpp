#include "topology/check_roce.h"

#include <fmt/format.h>

#include <set>

#include "topology/roce.h"

namespace nccltune {

namespace {

std::string label(const Nic& nic) {
  return nic_id(nic.index) + (nic.name ? " (" + *nic.name + ")" : std::string());
}

std::string on_netdev(const std::optional<std::string>& netdev) {
  return netdev ? " on " + *netdev : std::string();
}

void check_gid(const Nic& nic, std::vector<Finding>& out) {
  if (!nic.gids) return;
  if (const auto gid = nccl_gid(nic)) {
    out.push_back(
        {"roce_gid", label(nic), Verdict::pass,
         fmt::format("RoCE v2 GID {}: ::ffff:{}{}", gid->index, *gid_ipv4(gid->gid), on_netdev(gid->ndev))});
    return;
  }
  out.push_back(
      {"roce_gid", label(nic), Verdict::warn,
       fmt::format("no RoCE v2 GID with an IPv4 address among the {} used entries: NCCL's RoCE traffic is "
                   "RoCE v2 over IPv4 by default (NCCL_IB_ROCE_VERSION_NUM=2, NCCL_IB_ADDR_FAMILY=AF_INET); "
                   "give{} an IPv4 address",
                   nic.gids->size(), nic.netdev ? " " + *nic.netdev : std::string(" the port's netdev"))});
}

void check_mtu(const Nic& nic, std::vector<Finding>& out) {
  if (!nic.mtu) return;
  const int path = roce_path_mtu(*nic.mtu);
  const std::string device = nic.netdev.value_or("<netdev>");
  if (*nic.mtu >= kRoceMinInterfaceMtu) {
    const std::string note = path >= kRoceFullPathMtu
                                 ? std::string()
                                 : fmt::format(" (an MTU of {} or more, such as 9000, gives {})",
                                               kRoceFullPathMtu + kRoceHeaderBytes, kRoceFullPathMtu);
    out.push_back({"roce_mtu", label(nic), Verdict::pass,
                   fmt::format("MTU {}{}: RoCE path MTU {}{}", *nic.mtu, on_netdev(nic.netdev), path, note)});
    return;
  }
  out.push_back(
      {"roce_mtu", label(nic), Verdict::warn,
       fmt::format("MTU {}{} is below {} and caps RoCE's path MTU at {} bytes of {}: enable jumbo frames, "
                   "`ip link set dev {} mtu 9000`, with the same MTU on the switch ports",
                   *nic.mtu, on_netdev(nic.netdev), kRoceMinInterfaceMtu, path, kRoceFullPathMtu, device)});
}

}  // namespace

void check_roce(const NodeTopology& topology, const std::vector<int>& nics, CheckReport& report) {
  std::vector<std::pair<const Nic*, RoceGid>> chosen;
  for (int index : nics) {
    const Nic& nic = topology.nics[static_cast<std::size_t>(index)];
    if (!is_roce(nic)) continue;
    check_gid(nic, report.findings);
    check_mtu(nic, report.findings);
    if (auto gid = nccl_gid(nic)) chosen.emplace_back(&nic, *gid);
  }
  if (chosen.empty()) return;
  std::set<int> indexes;
  std::string each;
  for (const auto& [nic, gid] : chosen) {
    indexes.insert(gid.index);
    each +=
        fmt::format("{}{}: {}", each.empty() ? "" : ", ", nic->name.value_or(nic_id(nic->index)), gid.index);
  }
  if (indexes.size() > 1) {
    report.findings.push_back(
        {"roce_gid_index", "node", Verdict::warn,
         "the RoCE v2 IPv4 GIDs are at different indexes (" + each +
             ") while NCCL_IB_GID_INDEX is one value for every NIC: configure the ports alike (the same "
             "addresses in the same order), or leave NCCL_IB_GID_INDEX unset on NCCL 2.21 and later, which "
             "picks the GID of each NIC itself"});
    return;
  }
  const auto& [first, gid] = chosen.front();
  const std::string where =
      chosen.size() == 1
          ? "::ffff:" + *gid_ipv4(gid.gid) + " on " + first->name.value_or(nic_id(first->index))
          : "at the same index on all " + std::to_string(chosen.size()) + " RoCE NICs";
  report.recommendations.push_back(
      {"NCCL_IB_GID_INDEX", std::to_string(gid.index),
       "the RoCE v2 GID with an IPv4 address (" + where +
           "); NCCL 2.21 and later find it themselves, older releases use index 0"});
}

}  // namespace nccltune
