#include "topology/sources/ibverbs_source.h"

#include <infiniband/verbs.h>

#include <filesystem>

namespace nccltune {

double ib_rate_from_verbs(int active_speed, int active_width) {
  double lane_gbps = 0;
  switch (active_speed) {
    case 1: lane_gbps = 2.5; break;  // SDR
    case 2: lane_gbps = 5; break;    // DDR
    case 4:
    case 8: lane_gbps = 10; break;     // QDR, FDR10
    case 16: lane_gbps = 14; break;    // FDR
    case 32: lane_gbps = 25; break;    // EDR
    case 64: lane_gbps = 50; break;    // HDR
    case 128: lane_gbps = 100; break;  // NDR
    case 256: lane_gbps = 200; break;  // XDR
    default: return 0;
  }
  int lanes = 0;
  switch (active_width) {
    case 1: lanes = 1; break;
    case 2: lanes = 4; break;
    case 4: lanes = 8; break;
    case 8: lanes = 12; break;
    case 16: lanes = 2; break;
    default: return 0;
  }
  return lane_gbps * lanes;
}

namespace {

std::string port_state_name(ibv_port_state state) {
  switch (state) {
    case IBV_PORT_ACTIVE: return "ACTIVE";
    case IBV_PORT_DOWN: return "DOWN";
    case IBV_PORT_INIT: return "INIT";
    case IBV_PORT_ARMED: return "ARMED";
    case IBV_PORT_ACTIVE_DEFER: return "ACTIVE_DEFER";
    default: return "NOP";
  }
}

RdmaDevice describe(ibv_device* device) {
  RdmaDevice result;
  result.name = ibv_get_device_name(device);
  const std::filesystem::path sys_path(device->ibdev_path);
  std::error_code ec;
  auto target = std::filesystem::read_symlink(sys_path / "device", ec);
  if (!ec) result.pci = normalize_pci_address(target.filename().string());
  ibv_context* context = ibv_open_device(device);
  if (!context) return result;
  ibv_device_attr attr{};
  if (ibv_query_device(context, &attr) == 0) {
    for (uint8_t port = 1; port <= attr.phys_port_cnt; ++port) {
      ibv_port_attr port_attr{};
      if (ibv_query_port(context, port, &port_attr) != 0) continue;
      IbPort entry;
      entry.port = port;
      entry.state = port_state_name(port_attr.state);
      entry.link_layer = port_attr.link_layer == IBV_LINK_LAYER_ETHERNET ? "Ethernet" : "InfiniBand";
      const double rate = ib_rate_from_verbs(port_attr.active_speed, port_attr.active_width);
      if (rate > 0) entry.rate_gbps = rate;
      result.ports.push_back(entry);
    }
  }
  ibv_close_device(context);
  return result;
}

}  // namespace

std::vector<RdmaDevice> read_ibverbs_devices() {
  std::vector<RdmaDevice> devices;
  int count = 0;
  ibv_device** list = ibv_get_device_list(&count);
  if (!list) return devices;
  for (int i = 0; i < count; ++i) devices.push_back(describe(list[i]));
  ibv_free_device_list(list);
  return devices;
}

}  // namespace nccltune
