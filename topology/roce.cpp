#include "topology/roce.h"

#include <algorithm>
#include <array>
#include <cctype>

namespace nccltune {

bool is_roce(const Nic& nic) {
  return nic.link_layer == "Ethernet";
}

std::optional<std::string> normalize_gid(std::string_view text) {
  constexpr std::size_t kGidChars = 8 * 4 + 7;
  if (text.size() != kGidChars) return std::nullopt;
  std::string gid;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (i % 5 == 4) {
      if (c != ':') return std::nullopt;
    } else if (!std::isxdigit(c)) {
      return std::nullopt;
    }
    gid += static_cast<char>(std::tolower(c));
  }
  return gid;
}

bool is_empty_gid(std::string_view gid) {
  return std::all_of(gid.begin(), gid.end(), [](char c) { return c == '0' || c == ':'; });
}

std::optional<std::string> gid_ipv4(std::string_view gid) {
  constexpr std::string_view kMappedPrefix = "0000:0000:0000:0000:0000:ffff:";
  const auto normalized = normalize_gid(gid);
  if (!normalized || normalized->compare(0, kMappedPrefix.size(), kMappedPrefix) != 0) return std::nullopt;
  const std::string_view tail = std::string_view(*normalized).substr(kMappedPrefix.size());  // "0a00:0005"
  std::array<int, 4> octets{};
  for (std::size_t i = 0; i < 4; ++i) {
    const std::size_t at = i < 2 ? i * 2 : i * 2 + 1;
    octets[i] = std::stoi(std::string(tail.substr(at, 2)), nullptr, 16);
  }
  return std::to_string(octets[0]) + "." + std::to_string(octets[1]) + "." + std::to_string(octets[2]) + "." +
         std::to_string(octets[3]);
}

bool is_gid_type(std::string_view text) {
  return text == "IB/RoCE v1" || text == "RoCE v2";
}

std::optional<RoceGid> nccl_gid(const Nic& nic) {
  if (!nic.gids) return std::nullopt;
  std::optional<RoceGid> best;
  auto rank = [&](const RoceGid& g) { return std::pair(!(nic.netdev && g.ndev == nic.netdev), g.index); };
  for (const RoceGid& g : *nic.gids) {
    if (g.type != "RoCE v2" || !gid_ipv4(g.gid)) continue;
    if (!best || rank(g) < rank(*best)) best = g;
  }
  return best;
}

int roce_path_mtu(int interface_mtu) {
  const int payload = interface_mtu - kRoceHeaderBytes;
  for (int mtu = kRoceFullPathMtu; mtu >= 256; mtu /= 2)
    if (payload >= mtu) return mtu;
  return 0;
}

}  // namespace nccltune
