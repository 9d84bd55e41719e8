#include "nccl_log/nccl_log_verdicts.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "collectives/nccl_info_mnnvl.h"
#include "nccl_log/nccl_log_words.h"
#include "topology/affinity.h"

namespace nccltune {
namespace {

using namespace nccl_log_words;

// The verbs devices of the node with an ACTIVE port: what NCCL's IB transport could use.
std::vector<std::string> active_rdma_ports(const NodeTopology& node) {
  std::vector<std::string> names;
  for (const Nic& nic : node.nics)
    if (nic.name && nic.state == "ACTIVE") names.push_back(*nic.name);
  std::sort(names.begin(), names.end(), natural_less);
  return names;
}

bool is_rdma_transport(const std::optional<std::string>& transport) {
  return transport == "IB" || transport == "RoCE";
}

// Whether every GPU's nearest NIC is close enough for NCCL's default GPUDirect RDMA level
// (NCCL_NET_GDR_LEVEL=PXB: through PCIe switches only; since 2.27 also a NIC on the GPU's own
// CPU reached over NVLink-C2C). nullopt when the topology does not say.
std::optional<bool> topology_allows_gdr(const NodeTopology& node) {
  if (node.gpus.empty() || node.nics.empty()) return std::nullopt;
  bool all = true;
  for (const NicAssignment& assignment : assign_nearest_nics(node)) {
    if (!assignment.nic || !assignment.link) return std::nullopt;
    const Gpu* gpu = nullptr;
    for (const Gpu& g : node.gpus)
      if (g.index == assignment.gpu) gpu = &g;
    const Nic* nic = nullptr;
    for (const Nic& n : node.nics)
      if (n.index == *assignment.nic) nic = &n;
    const bool c2c = gpu && nic && reaches_nic_through_c2c(*gpu, *nic);
    all = all && (assignment.link->kind <= LinkKind::pxb || c2c);
  }
  return all;
}

// NVLS needs NVSwitch and Hopper or newer (compute capability 9.0+). nullopt when unknown.
std::optional<bool> node_supports_nvls(const NodeTopology& node) {
  if (!node.nvswitch) return std::nullopt;
  if (!*node.nvswitch) return false;
  for (const Gpu& gpu : node.gpus)
    if (gpu.sm && *gpu.sm < 90) return false;
  return true;
}

void check_transport(const NcclInfoLog& log, const NodeTopology* node, std::vector<LogVerdict>& out) {
  if (log.transport != "Socket" || log.nodes == 1) return;
  std::string evidence;
  if (log.ib_devices_listed) {
    evidence = "the log lists verbs devices";
  } else if (node) {
    const auto active = active_rdma_ports(*node);
    if (!active.empty())
      evidence = fmt::format("the node has {} ACTIVE RDMA ports ({})", active.size(), joined(active));
  }
  if (!evidence.empty()) {
    out.push_back({LogVerdictLevel::fail, "transport",
                   fmt::format("NCCL sends between nodes over sockets although {}: check NCCL_IB_DISABLE and "
                               "NCCL_NET, that libibverbs is in the container and /dev/infiniband is mapped",
                               evidence)});
    return;
  }
  out.push_back({LogVerdictLevel::info, "transport",
                 "NCCL sends between nodes over sockets; no RDMA device shows in the log (give --from to "
                 "compare with the node's NICs)"});
}

void check_gdr(const NcclInfoLog& log, const NodeTopology* node, std::vector<LogVerdict>& out) {
  if (log.net_connections == 0 || log.transport == "Socket") return;
  if (log.gdr_connections == log.net_connections) {
    out.push_back({LogVerdictLevel::info, "gdr",
                   fmt::format("GPUDirect RDMA on all {} network connections", log.net_connections)});
    return;
  }
  const std::string share = log.gdr_connections == 0
                                ? fmt::format("off on all {} network connections", log.net_connections)
                                : fmt::format("off on {} of {} network connections",
                                              log.net_connections - log.gdr_connections, log.net_connections);
  std::string advice;
  const std::optional<bool> allows = node ? topology_allows_gdr(*node) : std::nullopt;
  if (!log.gdr_causes.empty()) {
    // The log says why: that comes first, and the advice follows the cause it names.
    const NcclLogLine& cause = log.gdr_causes.front();
    std::string hint;
    if (cause.text.find("disabling GDR") != std::string::npos || cause.text.starts_with("NET/OFI"))
      hint = "the net plugin turned it off: check that the plugin and libfabric were built with CUDA "
             "(HMEM) support and that the EFA/verbs driver allows device memory (FI_EFA_USE_DEVICE_RDMA=1 on "
             "EFA)";
    else if (cause.text.find("distance") != std::string::npos)
      hint = "the GPU-NIC path is longer than NCCL_NET_GDR_LEVEL allows: raise it (e.g. PHB) only where "
             "the platform supports GPUDirect RDMA across that path";
    else if (cause.text.find("for HCA") != std::string::npos)
      hint = "the network device does not accept GPU memory: load nvidia-peermem, or use DMA-BUF (kernel "
             "5.12+, open driver, NCCL_DMABUF_ENABLE=1)";
    else
      hint = "check nvidia-peermem or DMA-BUF and NCCL_NET_GDR_LEVEL";
    advice = fmt::format("the log says why at {}: \"{}\"{}; {}", where(cause), cause.text,
                         log.gdr_causes.size() > 1
                             ? fmt::format(" ({} more such line(s) in --format json)", log.gdr_causes.size() - 1)
                             : std::string(),
                         hint);
  } else if (allows == true) {
    advice =
        "the node's GPU-NIC paths (PIX/PXB) allow it, so load nvidia-peermem or use DMA-BUF "
        "(kernel 5.12+, open driver) and check NCCL_NET_GDR_LEVEL and NCCL_NET_GDR_READ";
  } else if (allows == false) {
    advice =
        "some GPUs reach their nearest NIC only through the CPU (PHB/NODE/SYS), where NCCL keeps "
        "it off unless NCCL_NET_GDR_LEVEL allows that path";
  } else {
    advice =
        "data is staged through host memory; check nvidia-peermem or DMA-BUF and "
        "NCCL_NET_GDR_LEVEL (with --from, nccltune says whether the topology allows it)";
  }
  out.push_back(
      {LogVerdictLevel::warn, "gdr", fmt::format("GPUDirect RDMA is {} (no /GDRDMA): {}", share, advice)});
}

void check_hcas(const NcclInfoLog& log, const NodeTopology* node, std::vector<LogVerdict>& out) {
  if (!node || !is_rdma_transport(log.transport) || log.devices.empty()) return;
  std::set<std::string> used;
  for (const NcclNetDevice& device : log.devices) {
    // A merged device ("mlx5_0+mlx5_1", NCCL_IB_MERGE_NICS) uses each of its parts.
    std::string_view name = device.name;
    while (!name.empty()) {
      const size_t plus = name.find('+');
      used.emplace(name.substr(0, plus));
      if (plus == std::string_view::npos) break;
      name.remove_prefix(plus + 1);
    }
  }
  const auto active = active_rdma_ports(*node);
  std::vector<std::string> unused;
  for (const std::string& name : active)
    if (!used.contains(name)) unused.push_back(name);
  if (unused.empty()) return;
  const auto hca = log.env.find("NCCL_IB_HCA");
  out.push_back(
      {LogVerdictLevel::warn, "hcas",
       fmt::format("NCCL uses {} HCA(s) but the node has {} ACTIVE RDMA ports; unused: {}: {}", used.size(),
                   active.size(), joined(unused),
                   hca != log.env.end() ? fmt::format("NCCL_IB_HCA={} leaves them out", hca->second)
                                        : std::string("check NCCL_IB_HCA and the container's devices"))});
}

void check_nvls(const NcclInfoLog& log, const NodeTopology* node, std::vector<LogVerdict>& out) {
  // NVLS multicast joins a communicator's GPUs on one node: NCCL turns it off for a communicator
  // with fewer than 2 of them there (ncclNvlsInit's gpuCount, src/transport/nvls.cc), so a rail
  // (one GPU per node) has no NVLS on any fabric, and its "not available" says nothing of one.
  if (log.local_ranks == 1) return;
  const std::optional<bool> node_nvls = node ? node_supports_nvls(*node) : std::nullopt;
  if (log.nvls_available == false && node_nvls == true) {
    out.push_back(
        {LogVerdictLevel::warn, "nvls",
         "NVLS multicast is not available on an NVSwitch node with Hopper or newer GPUs: check that the "
         "fabric manager runs, the driver supports multicast (R530+) and CUDA is 12.1+"});
    return;
  }
  // NCCL sets up NVLS channels before it applies NCCL_ALGO, so channels alone do not say NVLS ran:
  // what NCCL says it enabled (its tuning table, the enabled matrix) does.
  const std::optional<bool> enabled = nvls_enabled(log);
  if (enabled == false && (log.nvls_available == true || node_nvls == true)) {
    const auto algo = log.env.find("NCCL_ALGO");
    out.push_back({LogVerdictLevel::info, "nvls",
                   fmt::format("NVLS is off: {}; NVLS multicast {} but NCCL does not choose NVLS{}",
                               algo != log.env.end() ? fmt::format("NCCL_ALGO={} leaves it out", algo->second)
                                                     : std::string("NCCL's tuning table disables it"),
                               log.nvls_available == true ? "is available" : "should be (NVSwitch node)",
                               log.nvls_channels && *log.nvls_channels > 0
                                   ? fmt::format(" (the {} NVLS channels it set up stay unused)", *log.nvls_channels)
                                   : std::string())});
    return;
  }
  if ((log.nvls_available == true || node_nvls == true) && log.nvls_channels == 0) {
    std::string why = "NCCL_NVLS_ENABLE=0 or too little memory for NVLS buffers";
    if (const auto algo = log.env.find("NCCL_ALGO"); algo != log.env.end())
      why = fmt::format("NCCL_ALGO={} is set; also check NCCL_NVLS_ENABLE", algo->second);
    if (const auto enable = log.env.find("NCCL_NVLS_ENABLE");
        enable != log.env.end() && enable->second == "0")
      why = "NCCL_NVLS_ENABLE=0 is set";
    out.push_back(
        {LogVerdictLevel::warn, "nvls",
         fmt::format("{} but NCCL built 0 NVLS channels: {}",
                     log.nvls_available == true ? "NVLS multicast is available" : "the node has NVSwitch",
                     why)});
    return;
  }
  if (log.nvls_available == true && log.nvls_channels && *log.nvls_channels > 0 && enabled != false)
    out.push_back(
        {LogVerdictLevel::info, "nvls", fmt::format("NVLS on with {} channels", *log.nvls_channels)});
}

// GB200/GB300 NVL72: NVML's fabric state and health mask as each rank printed them
// (collectives/nccl_info_mnnvl.h). NCCL turns multi-node NVLink on only when every rank's state
// is COMPLETED (src/mnnvl.cc), and never looks at the health mask; nor is a nonzero mask a
// problem, since its fields read 2 (FALSE) when all is well: only a TRUE field or an incorrect
// configuration is.
void check_mnnvl(const NcclInfoLog& log, std::vector<LogVerdict>& out) {
  int lines = 0, not_completed = 0, unhealthy = 0;
  const NcclMnnvlFabric* first_not_completed = nullptr;
  const NcclMnnvlFabric* first_unhealthy = nullptr;
  std::set<std::string> states, masks;
  for (const NcclMnnvlFabric& f : log.mnnvl_fabrics) {
    if (mnnvl_uuid_is_zero(f.fabric_uuid)) continue;  // not a multi-node fabric
    lines += f.lines;
    if (f.state != kMnnvlStateCompleted) {
      not_completed += f.lines;
      states.emplace(mnnvl_state_name(f.state));
      if (!first_not_completed || f.first.line < first_not_completed->first.line) first_not_completed = &f;
    }
    if (!mnnvl_health_problems(f.health_mask).empty()) {
      unhealthy += f.lines;
      if (masks.size() < 4) masks.insert(health_text(f.health_mask));
      if (!first_unhealthy || f.first.line < first_unhealthy->first.line) first_unhealthy = &f;
    }
  }
  if (first_not_completed) {
    out.push_back(
        {LogVerdictLevel::warn, "mnnvl",
         fmt::format(
             "{} of {} rank line(s) report NVLink fabric state {} (first at {}), not COMPLETED: NCCL uses "
             "multi-node NVLink only when every rank's state is COMPLETED, so {}; check the fabric "
             "manager and IMEX on those nodes (nvidia-smi -q shows each GPU's fabric state)",
             not_completed, lines, joined(std::vector<std::string>(states.begin(), states.end())),
             where(first_not_completed->first),
             log.mnnvl == true ? "some communicators may have run without it"
                               : "traffic between trays went over the network")});
  }
  if (first_unhealthy) {
    out.push_back(
        {LogVerdictLevel::warn, "mnnvl",
         fmt::format(
             "{} of {} rank line(s) report an NVLink fabric health problem, health mask {} (first at {}): "
             "degraded or recovering NVLink paths in the NVLink domain lower the bandwidth between its "
             "GPUs; nvidia-smi -q on that node names the GPU (Fabric, Health) and the fabric manager's "
             "log the link. A mask of 0x1aa is healthy: only a field that reads TRUE, or a configuration "
             "other than NONE, is a problem",
             unhealthy, lines, joined(std::vector<std::string>(masks.begin(), masks.end())),
             where(first_unhealthy->first))});
  }
  if (first_not_completed || first_unhealthy || lines == 0) return;
  if (log.mnnvl == false) {
    out.push_back({LogVerdictLevel::info, "mnnvl",
                   fmt::format("the GPUs are on an NVLink fabric (state COMPLETED and healthy on all {} rank "
                               "line(s)) but NCCL did not turn multi-node NVLink on: NCCL_MNNVL_ENABLE=0, a "
                               "clique of one, or IMEX not working (a WARN line says so)",
                               lines)});
    return;
  }
  out.push_back(
      {LogVerdictLevel::info, "mnnvl",
       fmt::format("multi-node NVLink{}: fabric state COMPLETED and healthy on all {} rank line(s)",
                   log.mnnvl_clique_size ? fmt::format(" in cliques of {} GPUs", *log.mnnvl_clique_size)
                                         : std::string(),
                   lines)});
}

// Whether `library` (a path or a file name) is a net plugin's library: NCCL 2.21 to 2.27 probe
// NCCL_NET_PLUGIN's library for a tuner packed in it and print "Plugin name set by env" for it too.
bool is_net_plugin_library(const NcclInfoLog& log, std::string_view library) {
  const size_t slash = library.rfind('/');
  const std::string_view file = slash == std::string_view::npos ? library : library.substr(slash + 1);
  return file.starts_with("libnccl-net") || (log.net_plugin_requested && *log.net_plugin_requested == library);
}

void check_tuner(const NcclInfoLog& log, std::vector<LogVerdict>& out) {
  // Asked for: NCCL_TUNER_PLUGIN as NCCL reports it (2.21 to 2.25 "TUNER/Plugin: NCCL_TUNER_PLUGIN set
  // to X", 2.28+ "NCCL_TUNER_PLUGIN set by environment to X"), or the library it opened by name
  // (2.21 to 2.27 "Plugin name set by env to X") unless that is the net plugin probed for a tuner.
  // A variable the net plugin itself set (aws-ofi-nccl's "Adding NCCL_TUNER_PLUGIN=...") is not a
  // user's request.
  std::optional<std::string> requested = log.tuner_requested;
  if (const auto env = log.env.find("NCCL_TUNER_PLUGIN"); !requested && env != log.env.end()) {
    const auto by_plugin = log.plugin_env.find("NCCL_TUNER_PLUGIN");
    if (by_plugin == log.plugin_env.end() || by_plugin->second != env->second) requested = env->second;
  }
  if (!requested && log.tuner_library_from_env && !is_net_plugin_library(log, *log.tuner_library_from_env))
    requested = log.tuner_library_from_env;
  if (log.tuner_loaded && log.tuner_declined) {
    out.push_back({LogVerdictLevel::info, "tuner",
                   fmt::format("tuner plugin {} loaded but fell back to NCCL's tuner (\"{}\"): NCCL's own "
                               "model makes the choices",
                               *log.tuner_loaded, *log.tuner_declined)});
    return;
  }
  if (log.tuner_loaded) {
    if (requested && log.tuner_not_found) {
      out.push_back({LogVerdictLevel::warn, "tuner",
                     fmt::format("tuner plugin {} was asked for but NCCL could not find it; it uses {} (the "
                                 "tuner in the net plugin) instead: check NCCL_TUNER_PLUGIN's name and "
                                 "LD_LIBRARY_PATH",
                                 *requested, *log.tuner_loaded)});
      return;
    }
    out.push_back({LogVerdictLevel::info, "tuner",
                   fmt::format("tuner plugin {} loaded: its choices take precedence over NCCL's model",
                               *log.tuner_loaded)});
    return;
  }
  if (!log.tuner_fallback && !log.tuner_not_found) return;
  if (requested) {
    out.push_back(
        {LogVerdictLevel::warn, "tuner",
         fmt::format("tuner plugin {} was asked for but NCCL fell back to its internal tuner: {}", *requested,
                     log.tuner_not_found && !log.tuner_symbol_missing
                         ? "NCCL could not find or use the library (check NCCL_TUNER_PLUGIN's name and "
                           "LD_LIBRARY_PATH)"
                         : "the library has no ncclTunerPlugin symbol this NCCL knows")});
  } else if (log.tuner_symbol_missing) {
    out.push_back(
        {LogVerdictLevel::info, "tuner",
         "NCCL found no tuner symbol in the library it probed (often the net plugin) and uses its internal "
         "tuner: expected unless a tuner plugin was meant to load"});
  } else {
    out.push_back({LogVerdictLevel::info, "tuner", "NCCL uses its internal tuner"});
  }
}

void check_env(const NcclInfoLog& log, std::vector<LogVerdict>& out) {
  for (const char* name : {"NCCL_ALGO", "NCCL_PROTO"}) {
    const auto found = log.env.find(name);
    if (found == log.env.end()) continue;
    const std::string& value = found->second;
    // A net plugin that put the variable into the environment itself (aws-ofi-nccl forces
    // NCCL_PROTO=simple where the platform cannot order LL/LL128's flag writes): the platform
    // needs it, not a user's mistake.
    if (const auto by_plugin = log.plugin_env.find(name); by_plugin != log.plugin_env.end()) {
      std::string a = by_plugin->second, b = value;
      for (char& c : a) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      for (char& c : b) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if (a == b) {
        out.push_back({LogVerdictLevel::info, "env",
                       fmt::format("{}={} was set by the net plugin ({}){}: the platform needs it; leave it",
                                   name, value, log.ofi_lines ? "aws-ofi-nccl" : log.net_plugin.value_or("net plugin"),
                                   log.plugin_proto_reason && std::string_view(name) == "NCCL_PROTO"
                                       ? fmt::format(", because {}", *log.plugin_proto_reason)
                                       : std::string())});
        continue;
      }
    }
    const bool empty_entry =
        value.find(",,") != std::string::npos || value.starts_with(',') || value.ends_with(',');
    out.push_back(
        {LogVerdictLevel::warn, "env",
         fmt::format("{} is forced by the environment to {}{}: NCCL no longer chooses per size; unset it "
                     "unless a measured profile says otherwise",
                     name, value, empty_entry ? " (it has an empty entry)" : "")});
  }
}

std::string_view completion_cause(std::optional<int> status) {
  if (status == 12)
    return "retry exceeded: a link, a switch port or the peer went away; look for the first error on the "
           "peer "
           "and check the port counters and cables";
  if (status == 4)
    return "local protection error: memory registration failed, often GPUDirect RDMA (nvidia-peermem, "
           "DMA-BUF) or the locked-memory limit";
  if (status == 5)
    return "work request flushed: it follows an earlier error on the same connection; find that one";
  return "see ibv_wc_status for the code; the first error in time is the cause, later ones follow it";
}

void check_failures(const NcclInfoLog& log, std::vector<LogVerdict>& out) {
  std::map<int, std::vector<const NcclFailure*>> completions;  // status (-1 unknown) -> failures
  std::map<NcclFailureKind, std::vector<const NcclFailure*>> others;
  for (const NcclFailure& failure : log.failures) {
    if (failure.kind == NcclFailureKind::ib_completion)
      completions[failure.status.value_or(-1)].push_back(&failure);
    else
      others[failure.kind].push_back(&failure);
  }
  for (const auto& [status, list] : completions) {
    out.push_back({LogVerdictLevel::fail, "ib_completion",
                   fmt::format("IB completion error{} {} time(s), first at {}: {}",
                               status < 0 ? std::string() : fmt::format(" status {}", status), list.size(),
                               where(list.front()->where), completion_cause(list.front()->status))});
  }
  for (const auto& [kind, list] : others) {
    std::string_view check, cause;
    switch (kind) {
      case NcclFailureKind::system_error:
        check = "system_error";
        cause =
            "\"unhandled system error\": usually the network setup (NCCL_SOCKET_IFNAME on an interface the "
            "peers cannot reach, a firewall, a container without /dev/infiniband or enough /dev/shm) or a "
            "peer that died; NCCL_DEBUG_SUBSYS=INIT,NET shows the call that failed";
        break;
      case NcclFailureKind::remote_error:
        check = "remote_error";
        cause = "a peer exited or the network failed: the first rank that failed holds the cause";
        break;
      case NcclFailureKind::timeout:
        check = "timeout";
        cause =
            "a collective or a connection timed out: a rank hung or died (crash, out of memory, ranks "
            "calling different collectives or sizes) or the network stalled; find the first rank that "
            "stopped";
        break;
      case NcclFailureKind::ib_completion: break;
    }
    out.push_back(
        {LogVerdictLevel::fail, std::string(check),
         fmt::format("{} {} time(s), first at {}", cause, list.size(), where(list.front()->where))});
  }
  // WARN lines no signature explains.
  std::set<std::pair<std::string, int>> explained;
  for (const NcclFailure& failure : log.failures) explained.emplace(failure.where.source, failure.where.line);
  std::vector<const NcclLogLine*> unexplained;
  for (const NcclLogLine& warning : log.warnings)
    if (!explained.contains({warning.source, warning.line})) unexplained.push_back(&warning);
  if (!unexplained.empty())
    out.push_back(
        {LogVerdictLevel::warn, "warnings",
         fmt::format("{} NCCL WARN line(s), first at {}: {}", unexplained.size() + log.warnings_dropped,
                     where(*unexplained.front()), unexplained.front()->text)});
}

}  // namespace

std::string_view to_string(LogVerdictLevel level) {
  switch (level) {
    case LogVerdictLevel::info: return "info";
    case LogVerdictLevel::warn: return "warn";
    case LogVerdictLevel::fail: return "fail";
  }
  return "info";
}

std::vector<LogVerdict> explain_nccl_log(const NcclInfoLog& log, const NodeTopology* node) {
  std::vector<LogVerdict> out;
  // A version line ("NCCL version 2.29.3+cuda13.1", nccl-tests' "nccl-library=22903") or WARN lines
  // are printed without INFO: they say nothing of what NCCL chose.
  if (log.info_lines == 0)
    out.push_back(
        {LogVerdictLevel::warn, "log",
         fmt::format("no NCCL INFO lines{}{}: nothing of NCCL's own account (network, GPUDirect RDMA, NVLS, "
                     "tuner, its choices) can be checked; rerun with NCCL_DEBUG=INFO "
                     "NCCL_DEBUG_SUBSYS=INIT,ENV,TUNING (add NET for the connections)",
                     log.nccl_version ? fmt::format(" (NCCL {} printed its version only)", *log.nccl_version)
                                      : std::string(),
                     log.warnings.empty() ? std::string()
                                          : fmt::format(", {} WARN line(s)", log.warnings.size() + log.warnings_dropped))});
  check_transport(log, node, out);
  check_gdr(log, node, out);
  check_hcas(log, node, out);
  check_nvls(log, node, out);
  check_mnnvl(log, out);
  check_tuner(log, out);
  check_env(log, out);
  check_failures(log, out);
  return out;
}

int log_verdicts_exit_code(const std::vector<LogVerdict>& verdicts) {
  int code = 0;
  for (const LogVerdict& verdict : verdicts) {
    if (verdict.level == LogVerdictLevel::fail) code = 2;
    if (verdict.level == LogVerdictLevel::warn) code = std::max(code, 1);
  }
  return code;
}

nlohmann::ordered_json log_verdicts_to_json(const std::vector<LogVerdict>& verdicts) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const LogVerdict& v : verdicts)
    list.push_back({{"level", std::string(to_string(v.level))}, {"check", v.check}, {"message", v.message}});
  return list;
}

}  // namespace nccltune
