#include "topology/checks.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <set>
#include <sstream>

#include "base/strict_yaml.h"
#include "topology/check_fabric.h"
#include "topology/check_gpudirect.h"
#include "topology/check_roce.h"

namespace nccltune {

std::string_view to_string(Verdict verdict) {
  switch (verdict) {
    case Verdict::pass: return "pass";
    case Verdict::warn: return "warn";
    case Verdict::fail: return "fail";
  }
  return "?";
}

Verdict CheckReport::overall() const {
  Verdict worst = Verdict::pass;
  for (const auto& f : findings) worst = std::max(worst, f.verdict);
  return worst;
}

int CheckReport::exit_code() const {
  return static_cast<int>(overall());
}

int CheckReport::count(Verdict verdict) const {
  return static_cast<int>(std::count_if(findings.begin(), findings.end(),
                                        [&](const Finding& f) { return f.verdict == verdict; }));
}

Result<Expectation> read_expectation(const std::filesystem::path& file) {
  Expectation expectation;
  const Status read = read_strict_yaml(file, [&](const YAML::Node& root) {
    if (root.IsNull()) return;  // an empty file expects nothing
    yaml_check_keys(root, "", {"gpus", "nics", "nic_rate_gbps", "max_gpu_nic_link", "min_peak_pct", "outlier"});
    if (const YAML::Node gpus = root["gpus"])
      expectation.gpus = static_cast<int>(yaml_integer(gpus, "gpus", 0, 4096));
    if (const YAML::Node nics = root["nics"])
      expectation.nics = static_cast<int>(yaml_integer(nics, "nics", 0, 4096));
    if (const YAML::Node rate = root["nic_rate_gbps"]) {
      expectation.nic_rate_gbps = yaml_number(rate, "nic_rate_gbps");
      if (*expectation.nic_rate_gbps < 0) yaml_fail(yaml_line(rate), "nic_rate_gbps", "must be >= 0");
    }
    if (const YAML::Node link = root["max_gpu_nic_link"]) {
      const std::string text = yaml_text(link, "max_gpu_nic_link");
      expectation.gpu_nic_link_c2c = text == "C2C";
      const auto kind =
          expectation.gpu_nic_link_c2c ? std::optional(LinkKind::pxb) : parse_pcie_link_kind(text);
      if (!kind) yaml_fail(yaml_line(link), "max_gpu_nic_link", "expected PIX, PXB, C2C, PHB, NODE or SYS");
      expectation.max_gpu_nic_link = kind;
    }
    if (const YAML::Node pct = root["min_peak_pct"]) {
      expectation.min_peak_pct = yaml_number(pct, "min_peak_pct");
      if (!(*expectation.min_peak_pct >= 0 && *expectation.min_peak_pct <= 100))
        yaml_fail(yaml_line(pct), "min_peak_pct", "must be from 0 to 100");
    }
    if (const YAML::Node outlier = root["outlier"]) {
      expectation.outlier = yaml_number(outlier, "outlier");
      if (!(*expectation.outlier > 0 && *expectation.outlier < 1))
        yaml_fail(yaml_line(outlier), "outlier", "must be between 0 and 1 (a fraction of the fleet's median)");
    }
  });
  if (!read) return Error{read.error()};
  return expectation;
}

namespace {

std::string nic_label(const Nic& nic) {
  return nic_id(nic.index) + (nic.name ? " (" + *nic.name + ")" : std::string());
}

std::string describe_link(const PcieLink& link) {
  std::ostringstream out;
  out << "Gen" << (link.gen ? std::to_string(*link.gen) : "?") << " x"
      << (link.width ? std::to_string(*link.width) : "?");
  return out.str();
}

std::string describe_max(const PcieLink& link) {
  std::ostringstream out;
  out << "Gen" << (link.max_gen ? std::to_string(*link.max_gen) : "?") << " x"
      << (link.max_width ? std::to_string(*link.max_width) : "?");
  return out.str();
}

void check_pcie(const std::string& subject, const PcieLink& link, std::vector<Finding>& out) {
  if (!link.known()) return;
  if (link.width_degraded()) {
    out.push_back({"pcie_link", subject, Verdict::fail,
                   "PCIe link width x" + std::to_string(*link.width) + " below its maximum x" +
                       std::to_string(*link.max_width) + " (" + describe_link(link) + " of " +
                       describe_max(link) + "): the link trained narrower; reseat or replace"});
  } else if (link.speed_degraded()) {
    out.push_back({"pcie_link", subject, Verdict::warn,
                   "PCIe link speed Gen" + std::to_string(*link.gen) + " below its maximum Gen" +
                       std::to_string(*link.max_gen) +
                       " (GPUs drop link speed when idle; recheck under load)"});
  } else {
    out.push_back({"pcie_link", subject, Verdict::pass, describe_link(link) + " at its maximum"});
  }
}

// A switch's downstream port reports the same physical link as the device below it; report
// a narrow bridge link only when no device under it already shows that narrowing.
bool same_link_as_a_device_below(const NodeTopology& topology, const PciBridge& bridge) {
  auto matches = [&](const PcieLink& link) {
    return link.width == bridge.pcie.width && link.max_width == bridge.pcie.max_width;
  };
  for (const auto& id : bridge.below) {
    for (const auto& gpu : topology.gpus)
      if (gpu_id(gpu.index) == id && matches(gpu.pcie)) return true;
    for (const auto& nic : topology.nics)
      if (nic_id(nic.index) == id && matches(nic.pcie)) return true;
  }
  return false;
}

void check_counts(const NodeTopology& topology, const Expectation& expect, std::vector<Finding>& out) {
  auto count = [&](const char* what, size_t have, std::optional<int> want) {
    if (!want) return;
    const bool ok = static_cast<int>(have) == *want;
    out.push_back(
        {"device_count", "node", ok ? Verdict::pass : Verdict::fail,
         std::to_string(have) + " " + what + (ok ? ", as expected" : ", expected " + std::to_string(*want))});
  };
  count("GPUs", topology.gpus.size(), expect.gpus);
  count("NICs", topology.nics.size(), expect.nics);
  // A node whose GPUs fell off the bus must not pass a health check that expects none of this.
  if (topology.gpus.empty() && !expect.gpus)
    out.push_back(
        {"gpu_present", "node", Verdict::warn,
         "no NVIDIA GPU found (none in the PCI tree, NVML or nvidia-smi); --expect gpus: 0 for a node "
         "without GPUs"});
}

void check_ports(const NodeTopology& topology, const Expectation& expect, std::vector<Finding>& out) {
  for (const auto& nic : topology.nics) {
    const std::string subject = nic_label(nic);
    if (nic.state && *nic.state != "ACTIVE") {
      out.push_back({"nic_port", subject, Verdict::fail,
                     "port " + std::to_string(nic.port.value_or(1)) + " is " + *nic.state + ", not ACTIVE" +
                         (nic.link_layer ? " (" + *nic.link_layer + ")" : std::string())});
      continue;
    }
    if (expect.nic_rate_gbps && nic.rate_gbps && *nic.rate_gbps + 1e-9 < *expect.nic_rate_gbps) {
      out.push_back({"nic_port", subject, Verdict::fail,
                     "port rate " + std::to_string(static_cast<int>(std::lround(*nic.rate_gbps))) +
                         " Gb/s below the expected " +
                         std::to_string(static_cast<int>(std::lround(*expect.nic_rate_gbps))) + " Gb/s"});
      continue;
    }
    if (nic.state)
      out.push_back(
          {"nic_port", subject, Verdict::pass,
           "ACTIVE" +
               (nic.rate_gbps ? ", " + std::to_string(static_cast<int>(std::lround(*nic.rate_gbps))) + " Gb/s"
                              : std::string()) +
               (nic.link_layer ? ", " + *nic.link_layer : std::string())});
  }
}

void check_affinity(const NodeTopology& topology, const CheckReport& report, const Expectation& expect,
                    std::vector<Finding>& out) {
  for (const auto& a : report.assignments) {
    const Gpu& gpu = topology.gpus[static_cast<size_t>(a.gpu)];
    const std::string subject = gpu_id(a.gpu);
    if (!a.nic || !a.link) continue;
    const Nic& nic = topology.nics[static_cast<size_t>(*a.nic)];
    const std::string where = nic_label(nic) + " at " + to_string(*a.link);
    const bool other_numa = gpu.numa && nic.numa && *gpu.numa != *nic.numa;
    const bool own_numa_has_nics =
        gpu.numa && std::any_of(topology.nics.begin(), topology.nics.end(),
                                [&](const Nic& n) { return n.numa && *n.numa == *gpu.numa; });
    const bool c2c = reaches_nic_through_c2c(gpu, nic);
    if (expect.max_gpu_nic_link && a.link->kind > *expect.max_gpu_nic_link &&
        !(expect.gpu_nic_link_c2c && c2c)) {
      out.push_back({"gpu_nic_affinity", subject, Verdict::fail,
                     "nearest NIC " + where + ", farther than the expected " +
                         (expect.gpu_nic_link_c2c ? std::string("C2C")
                                                  : std::string(to_string(*expect.max_gpu_nic_link)))});
    } else if (other_numa && own_numa_has_nics) {
      out.push_back({"gpu_nic_affinity", subject, Verdict::fail,
                     "nearest NIC " + where + " is on NUMA node " + std::to_string(*nic.numa) +
                         " while the GPU's NUMA node " + std::to_string(*gpu.numa) +
                         " has NICs: traffic crosses the CPU interconnect"});
    } else if (a.link->kind >= LinkKind::phb && c2c) {
      // Grace superchips (GH200, GB200, GB300): every NIC hangs off a Grace CPU, so the PCI tree
      // says NODE/SYS, but NCCL reaches the NICs of the GPU's own Grace over NVLink-C2C (path
      // P2C) and keeps GPUDirect RDMA on there: NCCL_NET_GDR_C2C, default 1 since NCCL 2.27
      // (0 in 2.26; src/graph/paths.cc, ncclTopoCheckGdr). A NIC on the other Grace is not
      // reached this way and falls through to the warning below.
      out.push_back({"gpu_nic_affinity", subject, Verdict::pass,
                     "nearest NIC " + nic_label(nic) +
                         " through NVLink-C2C to its Grace CPU: NCCL uses GPUDirect RDMA over C2C "
                         "(NCCL_NET_GDR_C2C, default since NCCL 2.27)"});
    } else if (a.link->kind >= LinkKind::phb && !a.numa_decided) {
      out.push_back({"gpu_nic_affinity", subject, Verdict::warn,
                     "nearest NIC " + where +
                         ": GPUDirect RDMA is off by default beyond PXB (NCCL_NET_GDR_LEVEL), so "
                         "network traffic is staged through host memory"});
    } else {
      out.push_back({"gpu_nic_affinity", subject, Verdict::pass,
                     "nearest NIC " + where + (a.numa_decided ? " (PCI path hidden; same NUMA node)" : "")});
    }
  }
}

void check_crowding(const NodeTopology& topology, const CheckReport& report, std::vector<Finding>& out) {
  std::vector<std::vector<int>> served(topology.nics.size());
  for (const auto& a : report.assignments)
    if (a.nic) served[static_cast<size_t>(*a.nic)].push_back(a.gpu);
  std::vector<std::string> idle;
  for (const auto& nic : topology.nics)
    if (served[static_cast<size_t>(nic.index)].empty()) idle.push_back(nic_label(nic));
  for (const auto& nic : topology.nics) {
    const auto& gpus = served[static_cast<size_t>(nic.index)];
    if (gpus.size() < 2 || idle.empty()) continue;
    std::string list;
    for (int g : gpus) list += (list.empty() ? "" : ",") + gpu_id(g);
    std::string idle_list;
    for (const auto& name : idle) idle_list += (idle_list.empty() ? "" : ", ") + name;
    out.push_back({"nic_balance", nic_label(nic), Verdict::warn,
                   std::to_string(gpus.size()) + " GPUs (" + list + ") share this NIC while " + idle_list +
                       " serve" + (idle.size() == 1 ? "s" : "") + " none"});
  }
}

void check_acs(const NodeTopology& topology, std::vector<Finding>& out) {
  for (const auto& bridge : topology.bridges) {
    if (!bridge.acs_redirect || !*bridge.acs_redirect) continue;
    const bool has_gpu = std::any_of(bridge.below.begin(), bridge.below.end(),
                                     [](const std::string& id) { return id.rfind("GPU", 0) == 0; });
    if (!has_gpu) continue;
    std::string below;
    for (const auto& id : bridge.below) below += (below.empty() ? "" : ",") + id;
    out.push_back({"pcie_acs", "bridge " + bridge.pci, Verdict::warn,
                   "ACS P2P redirect is enabled above " + below +
                       ": it sends GPUDirect P2P and RDMA traffic up to the root complex (disable ACS "
                       "redirect on bare metal, e.g. setpci or the BIOS)"});
  }
}

std::string binary_size_text(std::uint64_t bytes) {  // "256 MiB", "128 GiB"
  constexpr std::uint64_t kMiB = 1ull << 20, kGiB = 1ull << 30;
  if (bytes % kGiB == 0) return std::to_string(bytes / kGiB) + " GiB";
  return std::to_string(bytes / kMiB) + " MiB";
}

// GPUDirect RDMA maps GPU memory for the NIC through the GPU's BAR1 aperture: a BAR1 smaller than
// the framebuffer caps how much of it NCCL can register for the network (consumer boards ship
// 256 MiB without resizable BAR). Judged only where the node has RDMA NICs and both sizes are known.
void check_bar1(const NodeTopology& topology, std::vector<Finding>& out) {
  if (topology.nics.empty()) return;
  for (const auto& gpu : topology.gpus) {
    if (!gpu.bar1_bytes || !gpu.memory_bytes) continue;
    const std::string sizes =
        "BAR1 " + binary_size_text(*gpu.bar1_bytes) + ", memory " + binary_size_text(*gpu.memory_bytes);
    if (*gpu.bar1_bytes >= *gpu.memory_bytes) {
      out.push_back({"bar1", gpu_id(gpu.index), Verdict::pass, sizes + ": GPUDirect RDMA can map all of it"});
    } else {
      out.push_back({"bar1", gpu_id(gpu.index), Verdict::warn,
                     sizes +
                         ": BAR1 is smaller than the GPU's memory, so GPUDirect RDMA cannot map all of it; "
                         "registrations beyond it fail and those transfers lose GPUDirect RDMA (enable "
                         "Resizable BAR and Above 4G Decoding in the BIOS, or use a GPU with a full BAR1)"});
    }
  }
}

// The NICs NCCL should use: those nearest to the GPUs, with their port ACTIVE (or its state
// unknown), in index order. `skipped` gets the names of those left out for a port not ACTIVE.
std::vector<int> nccl_nics(const NodeTopology& topology, const CheckReport& report, std::string& skipped) {
  std::set<int> serving;
  for (const auto& a : report.assignments)
    if (a.nic) serving.insert(*a.nic);
  std::vector<int> nics;
  for (int index : serving) {
    const Nic& nic = topology.nics[static_cast<size_t>(index)];
    if (!nic.name) continue;
    if (nic.state && *nic.state != "ACTIVE") {
      skipped += (skipped.empty() ? "" : ", ") + *nic.name;
      continue;
    }
    nics.push_back(index);
  }
  return nics;
}

void recommend_hcas(const NodeTopology& topology, const std::vector<int>& nics, const std::string& skipped,
                    CheckReport& report) {
  std::string hcas;
  for (int index : nics) hcas += (hcas.empty() ? "=" : ",") + *topology.nics[static_cast<size_t>(index)].name;
  if (!hcas.empty())
    report.recommendations.push_back(
        {"NCCL_IB_HCA", hcas,
         "the NICs nearest to the GPUs, exact names" +
             (skipped.empty() ? std::string() : "; left out (port not ACTIVE): " + skipped)});
}

void recommend_socket_ifname(const NodeTopology& topology, CheckReport& report) {
  std::string ifnames;
  for (const auto& net : topology.interfaces) {
    if (!net.pci || net.rdma || net.operstate != "up") continue;
    ifnames += (ifnames.empty() ? "=" : ",") + net.name;
  }
  std::string rdma_ifnames;
  if (ifnames.empty()) {
    for (const auto& net : topology.interfaces)
      if (net.pci && net.rdma && net.operstate == "up")
        rdma_ifnames += (rdma_ifnames.empty() ? "=" : ",") + net.name;
  }
  if (!ifnames.empty())
    report.recommendations.push_back(
        {"NCCL_SOCKET_IFNAME", ifnames, "the node's up Ethernet interfaces, for NCCL's bootstrap"});
  else if (!rdma_ifnames.empty())
    report.recommendations.push_back(
        {"NCCL_SOCKET_IFNAME", rdma_ifnames, "no plain Ethernet interface is up; the RDMA NICs' netdevs"});
}

}  // namespace

CheckReport check_node(const NodeTopology& topology, const Expectation& expectation) {
  CheckReport report;
  report.assignments = assign_nearest_nics(topology);
  auto& out = report.findings;
  check_counts(topology, expectation, out);
  for (const auto& gpu : topology.gpus) check_pcie(gpu_id(gpu.index), gpu.pcie, out);
  for (const auto& nic : topology.nics) check_pcie(nic_label(nic), nic.pcie, out);
  for (const auto& bridge : topology.bridges)
    if (bridge.pcie.width_degraded() && !same_link_as_a_device_below(topology, bridge))
      check_pcie("bridge " + bridge.pci, bridge.pcie, out);
  check_ports(topology, expectation, out);
  check_affinity(topology, report, expectation, out);
  check_crowding(topology, report, out);
  check_acs(topology, out);
  check_bar1(topology, out);
  check_fabric(topology, out);
  std::string skipped;
  const std::vector<int> nics = nccl_nics(topology, report, skipped);
  recommend_hcas(topology, nics, skipped, report);
  check_roce(topology, nics, report);  // recommends NCCL_IB_GID_INDEX after NCCL_IB_HCA
  recommend_socket_ifname(topology, report);
  check_gpudirect(topology, report);  // after the ACS check, which it counts among GDR's blockers
  return report;
}

}  // namespace nccltune
