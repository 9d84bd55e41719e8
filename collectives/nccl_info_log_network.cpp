// The network NCCL chose: its plugin, its devices (NET/IB and NET/Socket lists) and the
// connections through it, with GPUDirect RDMA or without.
#include "collectives/nccl_info_log_lines.h"

#include <cctype>
#include <utility>

#include "base/text_words.h"

namespace nccltune::nccl_info_detail {

void LineReader::add_device(NcclNetDevice device) {
  if (const auto at = index_.device_at.find(device.name); at != index_.device_at.end()) {
    NcclNetDevice& known = log_.devices[at->second];
    if (!known.port) known.port = device.port;
    if (!known.link_layer) known.link_layer = device.link_layer;
    known.sharp = known.sharp || device.sharp;
    return;
  }
  if (log_.devices.size() >= kMaxDevices) return;
  index_.device_at.emplace(device.name, log_.devices.size());
  log_.devices.push_back(std::move(device));
}

void LineReader::read_ib_devices(std::string_view list) {
  // "[0]mlx5_0:1/IB [1]mlx5_3:1/RoCE/SHARP [RO]": index, device, port, link layer, flags.
  log_.ib_devices_listed = true;
  for (std::string_view word : split_words(list)) {
    if (!word.starts_with('[') || word == "[RO]") continue;
    const size_t close = word.find(']');
    if (close == std::string_view::npos) continue;
    word.remove_prefix(close + 1);
    const size_t colon = word.rfind(':');
    if (colon == std::string_view::npos || colon == 0) continue;
    NcclNetDevice device{std::string(word.substr(0, colon)), std::nullopt, std::nullopt, false};
    std::string_view rest = word.substr(colon + 1);
    const size_t slash = rest.find('/');
    device.port = to_count(rest.substr(0, slash));
    if (slash != std::string_view::npos) {
      rest.remove_prefix(slash + 1);
      const size_t next = rest.find('/');
      const std::string_view layer = rest.substr(0, next);
      if (layer == "IB" || layer == "RoCE") device.link_layer = std::string(layer);
      device.sharp = rest.find("SHARP") != std::string_view::npos;
    }
    add_device(std::move(device));
  }
}

void LineReader::read_socket_devices(std::string_view list) {
  // "[0]eth0:10.0.0.1<0> [1]ib0:fe80::1%ib0<0>": the interface name ends at the first colon.
  for (std::string_view word : split_words(list)) {
    if (!word.starts_with('[')) continue;
    const size_t close = word.find(']');
    if (close == std::string_view::npos) continue;
    word.remove_prefix(close + 1);
    const std::string_view name = word.substr(0, word.find(':'));
    if (!name.empty()) add_device({std::string(name), std::nullopt, std::nullopt, false});
  }
}

void LineReader::read_loaded_net_plugin(std::string_view body) {
  std::string_view name = trimmed(body.substr(body.find("net plugin ") + 11));
  if (const size_t open = name.rfind(" ("); open != std::string_view::npos && name.ends_with(')'))
    name = name.substr(0, open);
  if (!log_.net_plugin) log_.net_plugin = std::string(name);
}

void LineReader::read_connection(std::string_view body, size_t via) {
  // "via NET/<network name>/<device>[/GDRDMA][/Shared]": the network is named here too.
  ++log_.net_connections;
  if (!log_.connection_network) {
    const std::string_view rest = body.substr(via + 9);
    for (size_t slash = rest.find('/'); slash != std::string_view::npos;
         slash = rest.find('/', slash + 1)) {
      if (slash > 0 && slash + 1 < rest.size() &&
          std::isdigit(static_cast<unsigned char>(rest[slash + 1]))) {
        log_.connection_network = std::string(rest.substr(0, slash));
        break;
      }
    }
  }
  if (body.find("/GDRDMA", via) != std::string_view::npos) ++log_.gdr_connections;
}

}  // namespace nccltune::nccl_info_detail
