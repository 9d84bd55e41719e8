#include "topology/link_type.h"

#include <charconv>

namespace nccltune {

std::string_view to_string(LinkKind kind) {
  switch (kind) {
    case LinkKind::self: return "X";
    case LinkKind::nvlink: return "NV";
    case LinkKind::pix: return "PIX";
    case LinkKind::pxb: return "PXB";
    case LinkKind::phb: return "PHB";
    case LinkKind::node: return "NODE";
    case LinkKind::sys: return "SYS";
  }
  return "?";
}

std::string to_string(LinkType type) {
  if (type.kind == LinkKind::nvlink) return "NV" + std::to_string(type.nvlinks);
  return std::string(to_string(type.kind));
}

std::optional<LinkKind> parse_pcie_link_kind(std::string_view text) {
  if (text == "PIX") return LinkKind::pix;
  if (text == "PXB") return LinkKind::pxb;
  if (text == "PHB") return LinkKind::phb;
  if (text == "NODE") return LinkKind::node;
  if (text == "SYS" || text == "SOC") return LinkKind::sys;
  return std::nullopt;
}

std::optional<LinkType> parse_link_type(std::string_view cell) {
  if (cell == "X") return LinkType{LinkKind::self, 0};
  if (cell.size() > 2 && cell.substr(0, 2) == "NV") {
    int count = 0;
    const char* end = cell.data() + cell.size();
    auto [ptr, ec] = std::from_chars(cell.data() + 2, end, count);
    if (ec != std::errc() || ptr != end || count <= 0) return std::nullopt;
    return LinkType{LinkKind::nvlink, count};
  }
  if (auto kind = parse_pcie_link_kind(cell)) return LinkType{*kind, 0};
  return std::nullopt;
}

}  // namespace nccltune
