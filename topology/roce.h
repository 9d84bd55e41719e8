// RoCE facts as NCCL needs them: which GID index NCCL_IB_GID_INDEX should name, and the path MTU
// an interface MTU leaves RoCE. Pure functions of the GID table and MTU that sysfs gives a Nic.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "topology/node_topology.h"

namespace nccltune {

// The GID table indexes read per port. ConnectX RoCE ports have 256 entries at most; a longer
// table (a damaged snapshot) is cut here with a note rather than read for minutes.
inline constexpr int kMaxGidsPerPort = 256;

// The largest RoCE path MTU (the largest InfiniBand MTU), which NCCL's RDMA messages are cut to.
inline constexpr int kRoceFullPathMtu = 4096;
// RoCE v2's headers within the interface MTU (the kernel's iboe_get_mtu: GRH 40, UDP 8, BTH 12,
// XRC 4, AtomicETH 28, ICRC 4).
inline constexpr int kRoceHeaderBytes = 40 + 8 + 12 + 4 + 28 + 4;
// The interface MTU below which `check` warns on a RoCE NIC. The full path MTU needs 96 bytes more
// (roce_path_mtu), which check reports but does not warn about.
inline constexpr int kRoceMinInterfaceMtu = 4096;

// A RoCE port: an RDMA NIC whose link layer is Ethernet.
bool is_roce(const Nic& nic);

// "0000:0000:0000:0000:0000:FFFF:0a00:0005" -> lower case; nullopt unless eight groups of four
// hex digits, as sysfs writes a GID.
std::optional<std::string> normalize_gid(std::string_view text);
bool is_empty_gid(std::string_view gid);  // all zero: an unused table entry
// The IPv4 address of an IPv4-mapped GID (::ffff:a.b.c.d), "10.0.0.5"; nullopt for any other.
std::optional<std::string> gid_ipv4(std::string_view gid);
// "IB/RoCE v1" or "RoCE v2", the two types the kernel writes to gid_attrs/types/<N>.
bool is_gid_type(std::string_view text);

// The entry NCCL should use on this port: a RoCE v2 GID with an IPv4-mapped address (routable
// over UDP/IP, and NCCL_IB_ADDR_FAMILY's default AF_INET), preferring one on the NIC's own
// netdev, then the lowest index. Null when the table has none or was not read.
std::optional<RoceGid> nccl_gid(const Nic& nic);

// The path MTU RoCE gets on an interface of this MTU: the largest InfiniBand MTU (256 ... 4096)
// that fits once RoCE's headers (kRoceHeaderBytes, 96) are taken off, 0 below that. 1500 gives
// 1024; 4192 and above 4096.
int roce_path_mtu(int interface_mtu);

}  // namespace nccltune
