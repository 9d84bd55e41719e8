// Writing a profile as YAML (profile_to_yaml): what the reader reads back, every text quoted.
#include "profile/profile.h"

#include <charconv>
#include <cmath>
#include <sstream>

#include "base/clean_text.h"
#include "base/strict_yaml.h"
#include "profile/env_names.h"
#include "profile/nccl_names.h"

namespace nccltune {
namespace {

std::string key_text(std::string_view name) {
  return is_safe_env_name(name) ? std::string(name) : yaml_quoted(name);
}

std::string number_text(double value) {
  if (std::isnan(value)) return ".nan";
  if (std::isinf(value)) return value > 0 ? ".inf" : "-.inf";
  char buffer[64];
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
  return ec == std::errc() ? std::string(buffer, end) : std::string(".nan");
}

template <class T, class Format>
std::string flow_list(const std::vector<T>& values, Format format) {
  std::string out = "[";
  for (std::size_t i = 0; i < values.size(); ++i) out += (i ? ", " : "") + format(values[i]);
  return out + "]";
}

std::string flow_env(const std::map<std::string, std::string>& env) {
  std::string out = "{";
  bool first = true;
  for (const auto& [name, value] : env) {
    out += (first ? "" : ", ") + key_text(name) + ": " + yaml_quoted(value);
    first = false;
  }
  return out + "}";
}

void write_collective(std::ostream& out, const std::string& name, const CollectiveProfile& collective) {
  out << "  " << name << ":\n";
  if (collective.guard) out << "    guard: true\n";
  if (collective.measured.known())
    out << "    measured: {min_bytes: " << collective.measured.min_bytes
        << ", max_bytes: " << collective.measured.max_bytes << "}\n";
  if (collective.per_size.empty()) {
    out << "    per_size: []\n";
  } else {
    out << "    per_size:\n";
    for (const SizeChoice& choice : collective.per_size)
      out << "      - {min_bytes: " << choice.min_bytes << ", max_bytes: " << choice.max_bytes
          << ", algo: " << yaml_quoted(choice.algo) << ", proto: " << yaml_quoted(choice.proto)
          << ", channels: " << choice.channels
          << (choice.chunk_bytes > 0 ? ", chunk_bytes: " + std::to_string(choice.chunk_bytes) : "") << "}\n";
  }
  // Only when there are some: a profile without them is byte for byte what was written before.
  if (!collective.switches.empty()) {
    out << "    switches:\n";
    for (const SizeSwitch& s : collective.switches)
      out << "      - {lo: " << s.lo << ", hi: " << s.hi << ", bytes: " << s.bytes
          << ", fit: " << yaml_quoted(s.fit) << ", below: " << yaml_quoted(s.below)
          << ", above: " << yaml_quoted(s.above) << ", below_latency_us: " << number_text(s.below_latency_us)
          << ", below_gbps: " << number_text(s.below_gbps)
          << ", above_latency_us: " << number_text(s.above_latency_us)
          << ", above_gbps: " << number_text(s.above_gbps) << "}\n";
  }
  const ProfileResults& results = collective.results;
  const auto integer_text = [](std::uint64_t value) { return std::to_string(value); };
  out << "    results:\n"
      << "      sizes: " << flow_list(results.sizes, integer_text) << "\n"
      << "      baseline: " << flow_list(results.baseline, number_text) << "\n"
      << "      tuned: " << flow_list(results.tuned, number_text) << "\n"
      << "      speedup_geomean: " << number_text(results.speedup_geomean) << "\n"
      << "      worst_size_ratio: " << number_text(results.worst_size_ratio) << "\n";
  if (!results.with_plugin.empty())
    out << "      with_plugin: " << flow_list(results.with_plugin, number_text) << "\n"
        << "      with_plugin_speedup_geomean: " << number_text(results.with_plugin_speedup_geomean) << "\n";
  if (results.peak_busbw_gbps)
    out << "      peak_busbw_gbps: " << number_text(*results.peak_busbw_gbps) << "\n";
  if (!results.peak_bottleneck.empty())
    out << "      peak_bottleneck: " << yaml_quoted(cleaned_text(results.peak_bottleneck)) << "\n";
  if (collective.plugin.status != PluginStatus::none)
    out << "    plugin: {status: " << to_string(collective.plugin.status)
        << ", why: " << yaml_quoted(cleaned_text(collective.plugin.why)) << "}\n";
}

}  // namespace

std::string profile_to_yaml(const Profile& profile) {
  std::ostringstream out;
  const ProfileShape& shape = profile.shape;
  const bool v3 = !profile.shapes.empty() || !profile.withheld.empty();
  out << "schema: " << (v3 ? kProfileSchemaV3 : kProfileSchema) << "\n";
  out << "shape:\n"
      << "  key: " << yaml_quoted(shape.node_type_key) << "\n"
      << "  nodes: " << shape.nodes << "\n"
      << "  gpus_per_node: " << shape.gpus_per_node << "\n"
      << "  ranks: " << shape.ranks << "\n";
  // Only an MNNVL profile says how many hosts its NCCL nodes span: every other one is written
  // byte for byte as before.
  if (shape.mnnvl) out << "  hosts: " << shape.host_count() << "\n" << "  mnnvl: true\n";
  out << "  gpu: " << yaml_quoted(cleaned_text(shape.gpu)) << "\n"
      << "  nvswitch: " << (shape.nvswitch ? "true" : "false") << "\n"
      << "  nics_per_node: " << shape.nics_per_node << "\n"
      << "  nic: " << yaml_quoted(cleaned_text(shape.nic)) << "\n"
      << "  gpu_nic_affinity: " << yaml_quoted(cleaned_text(shape.gpu_nic_affinity)) << "\n"
      << "  nccl_version: " << yaml_quoted(cleaned_text(shape.nccl_version)) << "\n"
      << "  cuda_driver: " << yaml_quoted(cleaned_text(shape.cuda_driver)) << "\n";
  out << "keep_defaults: " << (profile.keep_defaults ? "true" : "false") << "\n";
  if (profile.env.empty()) {
    out << "env: {}\n";
  } else {
    out << "env:\n";
    for (const auto& [name, value] : profile.env)
      out << "  " << key_text(name) << ": " << yaml_quoted(value) << "\n";
  }
  if (v3) {
    if (!profile.withheld.empty()) {
      out << "withheld:\n";
      for (const WithheldSetting& setting : profile.withheld)
        out << "  - {env: " << flow_env(setting.env) << ", why: " << yaml_quoted(cleaned_text(setting.why))
            << "}\n";
    }
    out << "communicators:\n";
    const auto write_section = [&](int nodes, int ranks_per_node, CommRole role,
                                   const std::map<std::string, CollectiveProfile>& collectives) {
      out << "  - nodes: " << nodes << "\n"
          << "    ranks_per_node: " << ranks_per_node << "\n"
          << "    role: " << to_string(role) << "\n"
          << (collectives.empty() ? "    collectives: {}\n" : "    collectives:\n");
      // v2's block for each collective, four spaces further in.
      for (const auto& [name, collective] : collectives) {
        std::ostringstream block;
        write_collective(block, name, collective);
        std::istringstream lines(block.str());
        for (std::string line; std::getline(lines, line);) out << "    " << line << "\n";
      }
    };
    write_section(shape.nodes, shape.gpus_per_node, CommRole::world, profile.collectives);
    for (const CommunicatorSection& section : profile.shapes)
      write_section(section.nodes, section.ranks_per_node, section.role, section.collectives);
  } else {
    out << (profile.collectives.empty() ? "collectives: {}\n" : "collectives:\n");
    for (const auto& [name, collective] : profile.collectives) write_collective(out, name, collective);
  }
  const ProfileProvenance& provenance = profile.provenance;
  out << "provenance:\n"
      << "  tool: " << yaml_quoted(cleaned_text(provenance.tool)) << "\n"
      << "  date: " << yaml_quoted(cleaned_text(provenance.date)) << "\n"
      << "  trials: " << provenance.trials << "\n";
  if (provenance.pairs > 0) out << "  pairs: " << provenance.pairs << "\n";  // profiles without pairs as before
  out << "  failed_trials: " << provenance.failed_trials << "\n"
      << "  duration_s: " << number_text(provenance.duration_s) << "\n"
      << "  objective: " << yaml_quoted(cleaned_text(provenance.objective)) << "\n"
      << "  hosts: " << provenance.hosts << "\n"
      << "  noise_floor: " << number_text(provenance.noise_floor) << "\n"
      << "  confirmation: " << yaml_quoted(cleaned_text(provenance.confirmation)) << "\n";
  if (!provenance.plugin_confirmation.empty())
    out << "  plugin_confirmation: " << yaml_quoted(cleaned_text(provenance.plugin_confirmation)) << "\n";
  write_nccl_observed(out, provenance.nccl_observed);
  if (profile.failed.empty()) {
    out << "failed: []\n";
  } else {
    out << "failed:\n";
    for (const FailedTrial& trial : profile.failed)
      out << "  - {env: " << flow_env(trial.env)
          << ", outcome: " << yaml_quoted(std::string(to_string(trial.outcome)))
          << ", reason: " << yaml_quoted(cleaned_text(trial.reason)) << "}\n";
  }
  if (!profile.notes.empty()) {
    out << "notes:\n";
    for (const std::string& note : profile.notes) out << "  - " << yaml_quoted(cleaned_text(note)) << "\n";
  }
  return out.str();
}

}  // namespace nccltune
