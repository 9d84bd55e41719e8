// Rendering a profile's environment for the places that consume it (README.md, "Giving each job
// its profile"): a shell (`sh`), Slurm's TaskProlog protocol (`slurm`), a systemd EnvironmentFile
// (`systemd`), /etc/nccl.conf (`nccl-conf`), JSON (`json`) and the NCCL example tuner plugin's CSV
// config (`tuner-csv`).
//
// tuner-csv is a compatibility format with a trap: NCCL's example plugin starts every call from
// nChannels = 1 and keeps it unless a row matches with channels other than -1, so collectives
// without a row, and rows with -1, run on one channel. Rendering it always warns so, and points to
// our plugin, libnccl-tuner-nccltune.so, which does not.
//
// The scoped NCCL_ALGO / NCCL_PROTO syntax ("allreduce:Tree", NCCL >= 2.24) follows the NCCL
// version the PROFILE was measured with (shape.nccl_version), not the NCCL the job loads: the env
// command cannot know the job's NCCL (a Python wheel, a container). A job running an older NCCL
// than its profile would reject the scoped value, so a store's profiles should be measured with
// the NCCL version the jobs use.
//
// Profiles are parsed strictly already; rendering checks every name and value again (defence in
// depth, and names the admin allows in the config) and drops what fails, with one warning each,
// so whatever reaches a shell or an env file cannot run anything.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "profile/profile.h"

namespace nccltune {

enum class EnvFormat { sh, slurm, systemd, nccl_conf, json, tuner_csv };

// "sh", "slurm", "systemd", "nccl-conf", "json", "tuner-csv"; nullopt for anything else.
std::optional<EnvFormat> parse_env_format(std::string_view name);
std::string_view to_string(EnvFormat format);

// A profile's setting the job's environment already gives a value of its own: left out, since
// the job's own setting wins (as the TaskProlog and the env plugin leave it).
struct KeptOwnSetting {
  std::string name, own_value, profile_value;
};

struct EnvEmission {
  std::string text;                   // empty when nothing is to be set
  std::vector<std::string> warnings;  // one line per dropped name or value
  std::vector<KeptOwnSetting> kept;   // one per setting left out for the job's own value
};

// The values the job's environment gives the names it sets (set counts, even to ""): a name in
// it is never emitted, whatever the profile says.
using JobOwnEnv = std::map<std::string, std::string, std::less<>>;

// kept's one line for stderr: "NCCL_MIN_NCHANNELS=8 is the job's own: the profile's 32 is not
// set", both values quoted and shown printable (never for a shell to read).
std::string describe_kept(const KeptOwnSetting& kept);

// Where a job's env came from: the profile file(s) (one for a measured node count, the two around
// it otherwise), and the settings the serving rule withheld (node_count_rule.h), one line each.
// On a multi-node NVLink system, how the job's hosts were taken as NCCL's nodes (job_domains.h):
// `domains` says it for people ("4 hosts taken as 1 NVLink domain (...)"); empty otherwise.
struct EnvOrigin {
  std::vector<std::string> sources;
  std::vector<std::string> withheld;
  std::string domains = {};
  int hosts = 0, nvlink_domains = 0;
};

struct EnvSetting {
  std::string name, value;
};

// The profile's env as a job may get it, in the profile's order: the names and values render_env
// emits (below), NCCL_ALGO / NCCL_PROTO scoped where the profile's NCCL understands it; one line in
// `warnings` per name or value dropped. For the renderers and the NCCL env plugin alike.
std::vector<EnvSetting> checked_env(const Profile& profile, const std::vector<std::string>& allow_names,
                                    std::vector<std::string>& warnings);

// The profile's env in `format`. A name is emitted when it matches ^NCCL_[A-Z0-9_]+$ or is one of
// `allow_names` (which must match ^[A-Z][A-Z0-9_]*$ themselves) and is not is_denied_env_name
// (env_config.h: names that load code, change the loader or a shell, or name files); a value when it
// is 1..1024 characters of [A-Za-z0-9_,.:^=+-]. For a profile measured with NCCL 2.24 or newer, NCCL_ALGO and
// NCCL_PROTO are emitted scoped to the collectives it tuned. sh and slurm output name each of
// `origin`'s sources in a comment line ("# nccltune profile: /shared/...yaml"), each withheld
// setting ("# nccltune withheld: NCCL_ALGO=Ring: ...") and an MNNVL job's domains ("# nccltune
// domains: 4 hosts taken as 1 NVLink domain ..."), with any character outside
// [A-Za-z0-9_./:+=,^() -] as '?'; json is {"env": {...}, "profiles": [...], "withheld": [...],
// "kept": [{"name", "own", "profile"}...]}, and for an MNNVL job "domains": {"hosts",
// "nvlink_domains", "why"}.
//
// A name that `own` holds (the job sets it) is left out of every format and listed in `kept`: the
// job's own setting wins. tuner-csv sets no variable, so `own` changes nothing there.
EnvEmission render_env(const Profile& profile, EnvFormat format, const std::vector<std::string>& allow_names,
                       const EnvOrigin& origin = {}, const JobOwnEnv& own = {});

}  // namespace nccltune
