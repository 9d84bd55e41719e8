// Link types between two devices, in the vocabulary of `nvidia-smi topo -m`.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace nccltune {

// Ordered from nearest to farthest, so that `<` means "closer".
enum class LinkKind { self, nvlink, pix, pxb, phb, node, sys };

struct LinkType {
  LinkKind kind = LinkKind::sys;
  int nvlinks = 0;  // bonded NVLinks, only for LinkKind::nvlink

  friend bool operator==(const LinkType&, const LinkType&) = default;
};

// "X", "NV18", "PIX", "PXB", "PHB", "NODE", "SYS".
std::string to_string(LinkType type);
std::string_view to_string(LinkKind kind);

// Parses a matrix cell; "SOC" (older drivers) reads as SYS. Returns nullopt for anything else.
std::optional<LinkType> parse_link_type(std::string_view cell);

// Parses only the PCIe vocabulary (PIX..SYS), as used in `--expect` files.
std::optional<LinkKind> parse_pcie_link_kind(std::string_view text);

}  // namespace nccltune
