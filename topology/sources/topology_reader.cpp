// Reading one node: the live machine, a snapshot or one tool's file, through the sources (each
// filesystem through its root), then merged by merge_topology (topology_merge.cpp, pure).
#include "topology/sources/topology_reader.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <map>

#include "base/atomic_file.h"
#include "base/child_process.h"
#include "base/strict_yaml.h"
#include "topology/nvidia_smi_topo.h"
#include "topology/roce.h"
#include "topology/sources/gpudirect_source.h"
#include "topology/sources/ibverbs_source.h"
#include "topology/sources/nvml_source.h"

extern char** environ;

namespace nccltune {
namespace fs = std::filesystem;

Result<TopologySource> parse_topology_source(std::string_view from) {
  TopologySource source;
  if (from.empty()) return source;
  auto with_prefix = [&](std::string_view prefix, TopologySource::Kind kind) -> bool {
    if (from.substr(0, prefix.size()) != prefix) return false;
    source.kind = kind;
    source.path = std::string(from.substr(prefix.size()));
    return true;
  };
  if (!with_prefix("nvidia-smi:", TopologySource::Kind::nvidia_smi) &&
      !with_prefix("nvidia-smi-q:", TopologySource::Kind::nvidia_smi_query) &&
      !with_prefix("hwloc:", TopologySource::Kind::hwloc)) {
    source.kind = TopologySource::Kind::snapshot;
    source.path = std::string(from);
  }
  std::error_code ec;
  if (source.path.empty()) return Error{"--from " + std::string(from) + ": no file named"};
  if (source.kind == TopologySource::Kind::snapshot && !fs::is_directory(source.path, ec))
    return Error{
        "--from " + source.path.string() +
        ": not a snapshot directory (use nvidia-smi:FILE, nvidia-smi-q:FILE or hwloc:FILE for single "
        "files)"};
  return source;  // a single file is checked when read: regular, and within its size cap
}

namespace {

std::string local_hostname() {
  std::array<char, 256> name{};
  if (gethostname(name.data(), name.size() - 1) != 0) return "localhost";
  return name.data();
}

// How long nvidia-smi may take: it hangs exactly when a GPU falls off the bus. Its output is
// kept as a snapshot file, so it may be as large as one.
constexpr std::chrono::seconds kNvidiaSmiTimeout{10};
constexpr std::size_t kNvidiaSmiMaxOutput = kMaxSnapshotBytes;

}  // namespace

std::optional<std::string> run_nvidia_smi(const std::string& program, const std::vector<std::string>& args,
                                          std::vector<std::string>& notes) {
  CommandOptions options;
  options.timeout = kNvidiaSmiTimeout;
  options.max_output = kNvidiaSmiMaxOutput;
  options.search_path = true;
  std::vector<std::string> argv{program};
  argv.insert(argv.end(), args.begin(), args.end());
  const Result<CommandOutput> run = run_command(argv, environ, options);
  if (!run) return std::nullopt;  // not installed: NVML's note already says what is unknown
  if (run->timed_out) {
    const std::string command = fmt::format("nvidia-smi {}", fmt::join(args, " "));
    if (run->out.size() > kNvidiaSmiMaxOutput)
      notes.push_back(
          fmt::format("{}: printed more than {} MiB, stopped", command, kNvidiaSmiMaxOutput >> 20));
    else
      notes.push_back(fmt::format("{}: no answer in {} s, killed", command, kNvidiaSmiTimeout.count()));
    return std::nullopt;
  }
  if (!run->exit.exited_cleanly() || run->out.empty()) return std::nullopt;
  return run->out;
}

namespace {

Result<NodeTopology> read_live(const ReadOptions& options) {
  TopologyInputs in;
  in.host = local_hostname();
  if (auto hwloc = read_hwloc_live())
    in.hwloc = std::move(hwloc.value());
  else
    in.notes.push_back("hwloc: " + hwloc.error() + "; PCIe link types unknown");
  if (auto nvml = read_nvml_live(options.nvml_library)) {
    in.nvml = std::move(nvml.value());
  } else {
    in.notes.push_back("NVML: " + nvml.error() + "; GPU names and NVLinks unknown");
    if (auto text = run_nvidia_smi(options.nvidia_smi, {"topo", "-m"}, in.notes)) {
      if (auto smi = parse_nvidia_smi_topo(*text, "nvidia-smi topo -m"))
        in.nvidia_smi = std::move(smi.value());
      else
        in.notes.push_back(smi.error());
    }
  }
  SysfsSource sysfs(options.sys_root);
  in.sysfs = &sysfs;
  in.ibverbs = read_ibverbs_devices();
  in.gpudirect = read_gpudirect_facts(options.sys_root, options.proc_root);
  return merge_topology(in);
}

Result<NvidiaSmiQuery> read_nvidia_smi_query(const fs::path& file) {
  auto text = read_text_file(file, kMaxSnapshotBytes);
  if (!text) return Error{text.error()};
  return parse_nvidia_smi_query(*text, file.string());
}

Result<NodeTopology> read_snapshot(const fs::path& dir) {
  TopologyInputs in;
  in.host = dir.filename().string();
  const fs::path meta = dir / "meta.yaml";
  std::error_code ec;
  if (fs::exists(meta, ec)) {
    const Status read = read_strict_yaml(meta, [&](const YAML::Node& root) {
      yaml_check_keys(root, "", {"schema", "host", "date", "tool", "hwloc", "nvml", "note"});
      if (const YAML::Node host = root["host"]) in.host = yaml_text(host, "host");
    });
    if (!read) return Error{read.error()};
  }
  if (fs::exists(dir / "hwloc.xml", ec)) {
    auto hwloc = read_hwloc_xml(dir / "hwloc.xml");
    if (!hwloc) return Error{hwloc.error()};
    in.hwloc = std::move(hwloc.value());
  }
  if (fs::exists(dir / "nvml.yaml", ec)) {
    auto nvml = read_nvml_yaml(dir / "nvml.yaml");
    if (!nvml) return Error{nvml.error()};
    in.nvml = std::move(nvml.value());
  }
  if (fs::exists(dir / "nvidia-smi-topo.txt", ec)) {
    auto text = read_text_file(dir / "nvidia-smi-topo.txt", kMaxSnapshotBytes);
    if (!text) return Error{text.error()};
    auto smi = parse_nvidia_smi_topo(*text, (dir / "nvidia-smi-topo.txt").string());
    if (!smi) return Error{smi.error()};
    in.nvidia_smi = std::move(smi.value());
  }
  if (fs::exists(dir / "nvidia-smi-q.txt", ec)) {
    auto query = read_nvidia_smi_query(dir / "nvidia-smi-q.txt");
    if (!query) return Error{query.error()};
    in.nvidia_smi_query = std::move(query.value());
  }
  if (!in.hwloc && !in.nvml && !in.nvidia_smi && !in.nvidia_smi_query)
    return Error{dir.string() +
                 ": not a node snapshot (no hwloc.xml, nvml.yaml, nvidia-smi-topo.txt or nvidia-smi-q.txt)"};
  SysfsSource sysfs(dir / "sysfs");
  if (fs::is_directory(sysfs.root(), ec)) {
    in.sysfs = &sysfs;
    in.gpudirect = read_gpudirect_facts(sysfs.root(), dir / "proc");
  }
  return merge_topology(in);
}

}  // namespace

Result<NodeTopology> read_node_topology(const TopologySource& source, const ReadOptions& options) {
  switch (source.kind) {
    case TopologySource::Kind::live: return read_live(options);
    case TopologySource::Kind::snapshot: return read_snapshot(source.path);
    case TopologySource::Kind::nvidia_smi: {
      auto text = read_text_file(source.path, kMaxSnapshotBytes);
      if (!text) return Error{text.error()};
      auto smi = parse_nvidia_smi_topo(*text, source.path.string());
      if (!smi) return Error{smi.error()};
      TopologyInputs in;
      in.host = source.path.stem().string();
      in.nvidia_smi = std::move(smi.value());
      return merge_topology(in);
    }
    case TopologySource::Kind::nvidia_smi_query: {
      auto query = read_nvidia_smi_query(source.path);
      if (!query) return Error{query.error()};
      TopologyInputs in;
      in.host = source.path.stem().string();
      in.nvidia_smi_query = std::move(query.value());
      return merge_topology(in);
    }
    case TopologySource::Kind::hwloc: {
      auto hwloc = read_hwloc_xml(source.path);
      if (!hwloc) return Error{hwloc.error()};
      TopologyInputs in;
      in.host = source.path.stem().string();
      in.hwloc = std::move(hwloc.value());
      return merge_topology(in);
    }
  }
  return Error{"unknown topology source"};
}

}  // namespace nccltune
