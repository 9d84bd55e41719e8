// The network NCCL chose: its plugin, its devices (NET/IB and NET/Socket lists) and the
// connections through it, with GPUDirect RDMA or without.
#include "collectives/nccl_info_log_lines.h"

#include <algorithm>
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

void LineReader::add_gdr_cause(NcclLogLine cause) {
  // The same words on every rank (host and device aside) are one cause.
  const auto same = [&](const NcclLogLine& known) { return known.text == cause.text; };
  if (log_.gdr_causes.size() >= kMaxGdrCauses ||
      std::any_of(log_.gdr_causes.begin(), log_.gdr_causes.end(), same))
    return;
  log_.gdr_causes.push_back(std::move(cause));
}

namespace {

// 'simple', "simple" -> simple: aws-ofi-nccl quotes some values it sets.
std::string_view unquoted(std::string_view value) {
  while (!value.empty() && (value.front() == '\'' || value.front() == '"')) value.remove_prefix(1);
  while (!value.empty() && (value.back() == '\'' || value.back() == '"')) value.remove_suffix(1);
  return value;
}

bool is_nccl_name(std::string_view word) {
  return word.size() > 5 && word.starts_with("NCCL_") && std::all_of(word.begin(), word.end(), [](char c) {
           return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
         });
}

}  // namespace

void LineReader::read_ofi(std::string_view body, const std::vector<std::string_view>& words, int number) {
  // aws-ofi-nccl (src/nccl_ofi_net.cpp, platform-aws.cpp, tuner/): what it sets in the environment
  // before NCCL reads it, why, whether it turned GPUDirect RDMA off, and its tuner's decisions.
  log_.ofi_lines = true;
  std::string_view name, value;
  if (words.size() >= 5 && words[1] == "Adding" && words[3] == "to" && words[4] == "environment") {
    // "NET/OFI Adding NCCL_PROTO=simple to environment" (1.14+)
    const size_t equals = words[2].find('=');
    if (equals != std::string_view::npos) {
      name = words[2].substr(0, equals);
      value = words[2].substr(equals + 1);
    }
  } else if (words.size() >= 4 && words[1] == "Setting" && is_nccl_name(words[2])) {
    // "NET/OFI Setting NCCL_PROTO to \"simple\"" (1.11), "NET/OFI Setting NCCL_NVLS_CHUNKSIZE to 512KiB",
    // "NET/OFI Setting NCCL_PROTO='simple' to prevent data corruption (reason: ...)".
    if (const size_t equals = words[2].find('='); equals != std::string_view::npos) {
      name = words[2].substr(0, equals);
      value = words[2].substr(equals + 1);
    } else if (words[3] == "to" && words.size() >= 5) {
      name = words[2];
      value = words[4];
    }
    if (const size_t reason = body.find("(reason: "); reason != std::string_view::npos && !log_.plugin_proto_reason)
      log_.plugin_proto_reason = std::string(trimmed(body.substr(reason + 9, body.rfind(')') - reason - 9)));
  }
  value = unquoted(value);
  if (is_nccl_name(name) && !value.empty() &&
      (log_.plugin_env.size() < kMaxEnv || log_.plugin_env.contains(std::string(name))))
    log_.plugin_env[std::string(name)] = std::string(value);

  // "NET/OFI Need to force simple protocol: GDR not supported"
  if (constexpr std::string_view kForce = "Need to force simple protocol: ";
      body.find(kForce) != std::string_view::npos && !log_.plugin_proto_reason)
    log_.plugin_proto_reason = std::string(trimmed(body.substr(body.find(kForce) + kForce.size())));
  // "NET/OFI Could not disable CUDA API usage for HMEM, disabling GDR"
  if (body.find("disabling GDR") != std::string_view::npos) add_gdr_cause(line_at(body, number));
  // "NET/OFI NCCL_OFI_TUNER is not available for platform : g4dn.8xlarge, Fall back to NCCL's tuner",
  // "NET/OFI Region Context is not ready. Fall back to NCCL's tuner."
  if (body.find("Fall back to NCCL's tuner") != std::string_view::npos && !log_.tuner_declined)
    log_.tuner_declined = line_at(body, number).text;
  // "NET/OFI Tuner init: comm with 8 ranks and 1 nodes."
  if (body.find(" Tuner init: ") != std::string_view::npos) log_.tuner_initialized = true;
  read_env(words);
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
