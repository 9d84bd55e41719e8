// explain's readable summary of an NCCL INFO log (render_nccl_log_text, nccl_log_verdicts.h).
#include <fmt/format.h>

#include <string>
#include <type_traits>

#include "nccl_log/nccl_log_verdicts.h"
#include "nccl_log/nccl_log_words.h"

namespace nccltune {

using namespace nccl_log_words;

namespace {

template <typename T>
std::string or_unknown(const std::optional<T>& value) {
  if (!value) return "?";
  if constexpr (std::is_same_v<T, bool>)
    return *value ? "yes" : "no";
  else
    return fmt::format("{}", *value);
}

}  // namespace

std::string render_nccl_log_text(const NcclInfoLog& log, const std::vector<LogVerdict>& verdicts) {
  std::string out;
  auto row = [&out](std::string_view name, const std::string& value) {
    out += fmt::format("{:<10}{}\n", name, value);
  };
  row("NCCL", fmt::format("{} (CUDA {}{})", or_unknown(log.nccl_version), or_unknown(log.cuda_version),
                          log.cuda_driver ? ", driver " + *log.cuda_driver : std::string()));
  row("ranks", fmt::format("{} on {} node(s), {} per node{}", or_unknown(log.ranks), or_unknown(log.nodes),
                           or_unknown(log.local_ranks), log.hosts.empty() ? "" : ": " + joined(log.hosts)));
  std::vector<std::string> devices;
  for (const NcclNetDevice& d : log.devices)
    devices.push_back(d.name + (d.port ? fmt::format(":{}", *d.port) : "") +
                      (d.link_layer ? "/" + *d.link_layer : "") + (d.sharp ? "/SHARP" : ""));
  row("network", fmt::format("{} (plugin {}){}", or_unknown(log.transport), or_unknown(log.net_plugin),
                             devices.empty() ? "" : ": " + joined(devices)));
  if (log.plugin_library) row("", "library " + *log.plugin_library);
  row("GDR", log.net_connections == 0
                 ? std::string("no network connections in the log")
                 : fmt::format("{}/{} network connections", log.gdr_connections, log.net_connections));
  row("NVLS", fmt::format("available {}, {} channels, enabled {}; MNNVL {}", or_unknown(log.nvls_available),
                          or_unknown(log.nvls_channels), or_unknown(nvls_enabled(log)), or_unknown(log.mnnvl)));
  const auto on_fabric = [](const NcclMnnvlFabric& f) { return !mnnvl_uuid_is_zero(f.fabric_uuid); };
  if (std::any_of(log.mnnvl_fabrics.begin(), log.mnnvl_fabrics.end(), on_fabric) || log.mnnvl_clique_size) {
    row("MNNVL",
        fmt::format("{}{}{}", or_unknown(log.mnnvl),
                    log.mnnvl_clique_size ? fmt::format(", clique size {}", *log.mnnvl_clique_size) : "",
                    log.mnnvl_nvl_domain_size
                        ? fmt::format(", NVLink domain size {}", *log.mnnvl_nvl_domain_size)
                        : ""));
    constexpr std::size_t kShown = 8;
    std::size_t shown = 0, more = 0;
    for (const NcclMnnvlFabric& f : log.mnnvl_fabrics) {
      if (!on_fabric(f)) continue;
      if (shown++ >= kShown) {
        ++more;
        continue;
      }
      row("", fmt::format("fabric {} clique 0x{:x}: {}, health mask {}, {} rank line(s)", f.fabric_uuid,
                          f.clique_id, mnnvl_state_name(f.state), health_text(f.health_mask), f.lines));
    }
    if (more > 0) row("", fmt::format("{} more fabric values (--format json)", more));
  }
  row("channels", fmt::format("coll {}, collnet {}, nvls {}", or_unknown(log.coll_channels),
                              or_unknown(log.collnet_channels), or_unknown(log.nvls_channels)));
  if (log.env.empty()) row("env", "none reported");
  for (const auto& [name, value] : log.env) {
    const auto by_plugin = log.plugin_env.find(name);
    row("env", name + "=" + value + (by_plugin != log.plugin_env.end() ? " (set by the net plugin)" : ""));
  }
  const std::optional<std::string> tuner = tuner_in_effect(log);
  row("tuner", !tuner                          ? std::string("?")
               : log.tuner_loaded && *tuner == "internal" ? fmt::format("internal ({} fell back)", *log.tuner_loaded)
               : log.tuner_loaded                        ? *tuner + " (plugin)"
                                                         : *tuner);
  if (!log.choices.empty()) {
    out += fmt::format("\n{:<16} {:>14}  {:<14} {}\n", "op", "bytes", "algo", "proto");
    for (const NcclLoggedChoice& c : log.choices)
      out += fmt::format("{:<16} {:>14}  {:<14} {}\n", c.op.value_or("?"), c.bytes, c.algo, c.proto);
  }
  if (!log.kernel_choices.empty()) {
    out += fmt::format("\n{:<16} {:>14}  {:<12} {:<30} {}\n", "op", "bytes", "path", "kernel",
                       "channels/threads/works");
    for (const NcclKernelChoice& c : log.kernel_choices)
      out += fmt::format("{:<16} {:>14}  {:<12} {:<30} {}\n", c.op, c.bytes, c.path,
                         c.kernel + (c.nvls_sync ? " (NVLS sync)" : ""),
                         c.path == "symmetric" ? fmt::format("{}/{}/{}", or_unknown(c.channels),
                                                             or_unknown(c.threads), or_unknown(c.works))
                                               : std::string());
  }
  if (!log.model_tables.empty()) {
    const NcclModelTable& table = log.model_tables.front();
    out += fmt::format("\nNCCL's model (its tuning table{}{}; busbw where latency does not count):\n",
                       table.ranks ? fmt::format(", {} ranks", *table.ranks) : "",
                       log.model_tables.size() > 1
                           ? fmt::format("; {} more in --format json", log.model_tables.size() - 1)
                           : "");
    out += fmt::format("{:<16} {:<14} {:<7} {:>11} {:>9} {:>9}\n", "op", "algo", "proto", "latency_us",
                       "algbw", "busbw");
    for (const NcclModelCell& c : table.cells) {
      if (c.algbw <= 0) continue;  // disabled
      const std::optional<double> busbw = model_busbw(c, table.ranks);
      out += fmt::format("{:<16} {:<14} {:<7} {:>11.1f} {:>9.1f} {:>9}\n", c.op, c.algo, c.proto,
                         c.latency_us, c.algbw, busbw ? fmt::format("{:.1f}", *busbw) : "?");
    }
  }
  if (!log.warnings.empty()) {
    out += fmt::format("\nwarnings ({}):\n", log.warnings.size() + log.warnings_dropped);
    for (const NcclLogLine& w : log.warnings) out += fmt::format("  {}: {}\n", where(w), w.text);
  }
  out += "\nverdicts:\n";
  if (verdicts.empty()) out += "  pass  nothing to report\n";
  for (const LogVerdict& v : verdicts)
    out += fmt::format("  {:<5} {:<14} {}\n", to_string(v.level), v.check, v.message);
  return out;
}

}  // namespace nccltune
