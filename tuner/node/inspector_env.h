// Switching NCCL Inspector on for one job: the variables `nccltune env` adds to a job's profile
// (or prints alone, where no profile fits) when the node config names the plugin (env.inspector,
// env_config.h) and the job asks for it (NCCLTUNE_INSPECTOR=1, `env --inspector`) or the config
// says every job. Inspector is NVIDIA's profiler plugin, built from NCCL's
// plugins/profiler/inspector; it reads its own variables with getenv, so they must be in the
// process's environment: sh, slurm (TaskProlog) and systemd only, never nccl.conf.
//
//   NCCL_PROFILER_PLUGIN=<plugin>                 NCCL loads it (NCCL 2.28 and later: profiler v5)
//   NCCL_INSPECTOR_ENABLE=1
//   NCCL_INSPECTOR_DUMP_DIR=<dump_dir>/<job id>   json; prometheus: <dump_dir> as is
//   NCCL_INSPECTOR_PROM_DUMP=1                    prometheus only
//   NCCL_INSPECTOR_DUMP_THREAD_INTERVAL_MICROSECONDS=<interval_s x 10^6>
//                                                 prometheus always (30 s unless set), json when set
//
// Inspector creates the job's directory with one mkdir, so <dump_dir> must exist and be
// writable by the jobs' users. Every path and the job id are checked before they reach a line:
// what fails is refused with one line naming where it came from, and no Inspector line is printed.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "node/env_config.h"
#include "node/env_format.h"

namespace nccltune {

inline constexpr std::string_view kInspectorPathCharacters = "[A-Za-z0-9_./+-]";
inline constexpr int kInspectorPrometheusMinimumSeconds = 30;
// JSON records without an interval in the config: written every second (Inspector keeps the last
// 1024 collectives of each communicator between writes).
inline constexpr int kInspectorJsonDefaultSeconds = 1;

// Absolute, at most 1024 characters of kInspectorPathCharacters, no ".." part: nothing a shell,
// an env file or slurmstepd reads specially, and no way out of the directory it names.
bool is_safe_inspector_path(std::string_view path);

// 1..64 characters of [A-Za-z0-9_.-], not starting with '.': one directory name (Slurm's are
// numbers; `env --job-id` takes others for other schedulers).
bool is_safe_job_id(std::string_view id);

// The variables, in the order above. `job_id` is needed for json output; `job_id_from` names
// where it came from in the error ("SLURM_JOB_ID", "--job-id").
Result<std::vector<EnvSetting>> inspector_env(const InspectorConfig& config, std::string_view job_id,
                                              std::string_view job_id_from);

// The lines of `settings` in `format`, after a comment for sh and slurm; an error for the formats
// that cannot carry them (nccl-conf, json, tuner-csv).
Result<std::string> render_inspector_env(const std::vector<EnvSetting>& settings, EnvFormat format);

}  // namespace nccltune
