#include "topology/node_topology.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

namespace nccltune {

std::string_view to_string(FactSource source) {
  switch (source) {
    case FactSource::hwloc: return "hwloc";
    case FactSource::sysfs: return "sysfs";
    case FactSource::nvml: return "nvml";
    case FactSource::nvidia_smi: return "nvidia-smi";
    case FactSource::ibverbs: return "ibverbs";
  }
  return "?";
}

bool reaches_nic_through_c2c(const Gpu& gpu, const Nic& nic) {
  return gpu.c2c.value_or(false) && gpu.numa && nic.numa && *gpu.numa == *nic.numa;
}

std::string gpu_id(int index) {
  return "GPU" + std::to_string(index);
}
std::string nic_id(int index) {
  return "NIC" + std::to_string(index);
}

namespace {

// One key for the unordered pair {a, b}.
std::string link_key(std::string_view a, std::string_view b) {
  if (b < a) std::swap(a, b);
  std::string key(a);
  key += '\0';
  key += b;
  return key;
}

bool joins(const DeviceLink& link, std::string_view a, std::string_view b) {
  return (link.a == a && link.b == b) || (link.a == b && link.b == a);
}

}  // namespace

const DeviceLink* NodeTopology::find_link(std::string_view a, std::string_view b) const {
  if (link_at_.size() == links.size()) {
    const auto at = link_at_.find(link_key(a, b));
    return at == link_at_.end() ? nullptr : &links[at->second];
  }
  for (const auto& link : links)
    if (joins(link, a, b)) return &link;
  return nullptr;
}

void NodeTopology::set_link(const std::string& a, const std::string& b, LinkType type, FactSource source) {
  if (const DeviceLink* found = find_link(a, b)) {
    DeviceLink& link = links[static_cast<std::size_t>(found - links.data())];
    link.type = type;
    link.source = source;
    return;
  }
  if (link_at_.size() == links.size()) link_at_.emplace(link_key(a, b), links.size());
  links.push_back({a, b, type, source});
}

bool natural_less(std::string_view a, std::string_view b) {
  size_t i = 0, j = 0;
  auto is_digit = [](char c) { return c >= '0' && c <= '9'; };
  while (i < a.size() && j < b.size()) {
    if (is_digit(a[i]) && is_digit(b[j])) {
      size_t i_end = i, j_end = j;
      while (i_end < a.size() && is_digit(a[i_end])) ++i_end;
      while (j_end < b.size() && is_digit(b[j_end])) ++j_end;
      const auto na = std::stoull(std::string(a.substr(i, i_end - i)));
      const auto nb = std::stoull(std::string(b.substr(j, j_end - j)));
      if (na != nb) return na < nb;
      i = i_end;
      j = j_end;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i;
      ++j;
    }
  }
  return a.size() - i < b.size() - j;
}

std::optional<std::string> normalize_pci_address(std::string_view text) {
  unsigned domain = 0, bus = 0, dev = 0, fn = 0;
  std::string s(text);
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  int used = 0;
  if (std::sscanf(s.c_str(), "%x:%x:%x.%x%n", &domain, &bus, &dev, &fn, &used) == 4 &&
      static_cast<size_t>(used) == s.size()) {
  } else if (std::sscanf(s.c_str(), "%x:%x.%x%n", &bus, &dev, &fn, &used) == 3 &&
             static_cast<size_t>(used) == s.size()) {
    domain = 0;
  } else {
    return std::nullopt;
  }
  if (domain > 0xffff || bus > 0xff || dev > 0x1f || fn > 7) return std::nullopt;
  char buf[16];
  std::snprintf(buf, sizeof buf, "%04x:%02x:%02x.%x", domain, bus, dev, fn);
  return std::string(buf);
}

}  // namespace nccltune
