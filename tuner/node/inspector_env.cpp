#include "node/inspector_env.h"

#include <algorithm>
#include <cctype>

#include "base/printable_text.h"
#include "profile/env_names.h"

namespace nccltune {

namespace {

bool is_inspector_path_character(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '/' || c == '+' ||
         c == '-';
}

// Every value inspector_env makes: a checked path, a number or 1. Checked once more here, since a
// line of a shell or a prolog is the last place to stop one.
bool is_inspector_value(std::string_view value) {
  return !value.empty() && value.size() <= 1100 &&
         std::all_of(value.begin(), value.end(), is_inspector_path_character);
}

}  // namespace

bool is_safe_inspector_path(std::string_view path) {
  if (path.size() < 2 || path.size() > 1024 || path.front() != '/') return false;
  if (!std::all_of(path.begin(), path.end(), is_inspector_path_character)) return false;
  for (std::size_t start = 0; start <= path.size();) {
    const std::size_t end = std::min(path.find('/', start), path.size());
    if (path.substr(start, end - start) == "..") return false;
    start = end + 1;
  }
  return true;
}

bool is_safe_job_id(std::string_view id) {
  if (id.empty() || id.size() > 64 || id.front() == '.') return false;
  return std::all_of(id.begin(), id.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
  });
}

Result<std::vector<EnvSetting>> inspector_env(const InspectorConfig& config, std::string_view job_id,
                                              std::string_view job_id_from) {
  if (!config.enabled())
    return Error{"env.inspector.plugin: not set in the node config, so Inspector stays off"};
  if (!is_safe_inspector_path(config.plugin))
    return Error{"env.inspector.plugin: '" + printable_excerpt(config.plugin, 80) +
                 "' is not a safe absolute path"};
  if (!is_safe_inspector_path(config.dump_dir))
    return Error{"env.inspector.dump_dir: '" + printable_excerpt(config.dump_dir, 80) +
                 "' is not a safe absolute path"};
  const bool prometheus = config.output == InspectorOutput::prometheus;
  std::string dump_dir = config.dump_dir;
  if (!prometheus) {
    if (job_id.empty())
      return Error{std::string(job_id_from) +
                   ": no job id, so no directory of the job's own for Inspector's files"};
    if (!is_safe_job_id(job_id))
      return Error{std::string(job_id_from) + ": '" + printable_excerpt(job_id, 40) +
                   "' is not a job id of [A-Za-z0-9_.-] (not starting with '.')"};
    dump_dir += (dump_dir.back() == '/' ? "" : "/") + std::string(job_id);
  }
  std::vector<EnvSetting> settings{{"NCCL_PROFILER_PLUGIN", config.plugin},
                                   {"NCCL_INSPECTOR_ENABLE", "1"},
                                   {"NCCL_INSPECTOR_DUMP_DIR", dump_dir}};
  if (prometheus) settings.push_back({"NCCL_INSPECTOR_PROM_DUMP", "1"});
  // Without an interval Inspector (2.30.7) starts no dump thread and writes nothing at all, its
  // README notwithstanding (inspectorStartDumpThread returns at -1; the records are only written
  // by that thread), so an interval is always set: every second for JSON, 30 s (its minimum) for
  // textfiles.
  const int interval_s = config.interval_s > 0 ? config.interval_s
                         : prometheus          ? kInspectorPrometheusMinimumSeconds
                                               : kInspectorJsonDefaultSeconds;
  if (interval_s > 0)
    settings.push_back(
        {"NCCL_INSPECTOR_DUMP_THREAD_INTERVAL_MICROSECONDS", std::to_string(interval_s) + "000000"});
  return settings;
}

Result<std::string> render_inspector_env(const std::vector<EnvSetting>& settings, EnvFormat format) {
  if (format != EnvFormat::sh && format != EnvFormat::slurm && format != EnvFormat::systemd)
    return Error{"--format " + std::string(to_string(format)) +
                 ": Inspector reads its variables from the process's environment; only sh, slurm and systemd "
                 "set them, so it stays off"};
  std::string text;
  if (format != EnvFormat::systemd)
    text += "# nccltune inspector: NCCL Inspector on for this job (profiling costs it time)\n";
  for (const EnvSetting& setting : settings) {
    if (!is_safe_env_name(setting.name) || !is_inspector_value(setting.value))
      return Error{setting.name + ": '" + printable_excerpt(setting.value, 80) + "' refused"};
    switch (format) {
      case EnvFormat::sh: text += "export " + setting.name + "='" + setting.value + "'\n"; break;
      case EnvFormat::slurm: text += "export " + setting.name + "=" + setting.value + "\n"; break;
      default: text += setting.name + "=" + setting.value + "\n"; break;
    }
  }
  return text;
}

}  // namespace nccltune
