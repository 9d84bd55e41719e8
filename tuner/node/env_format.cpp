#include "node/env_format.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <nlohmann/json.hpp>
#include <utility>

#include "base/collective_names.h"
#include "base/printable_text.h"
#include "node/env_config.h"
#include "profile/env_names.h"
#include "profile/nccl_names.h"

namespace nccltune {

namespace {

constexpr std::array<std::pair<std::string_view, EnvFormat>, 6> kFormats = {{
    {"sh", EnvFormat::sh},
    {"slurm", EnvFormat::slurm},
    {"systemd", EnvFormat::systemd},
    {"nccl-conf", EnvFormat::nccl_conf},
    {"json", EnvFormat::json},
    {"tuner-csv", EnvFormat::tuner_csv},
}};

// NCCL 2.24 reads NCCL_ALGO and NCCL_PROTO as "[list;]func:list;...": a list per collective,
// function names matched case-insensitively (src/graph/tuning.cc, parseList, and the NCCL_ALGO /
// NCCL_PROTO entries of NCCL's environment variable documentation). The tuner's choice of these
// two holds for the collectives it tuned, so it is scoped to them there: the others keep NCCL's.

// The NCCL function names of the collectives the profile tuned (not its guards), in the order
// NCCL lists its functions; allreduce for a profile that names none.
std::vector<std::string_view> tuned_functions(const Profile& profile) {
  std::vector<std::string_view> functions;
  for (const CollectiveName& collective : kCollectiveTable) {
    const CollectiveProfile* measured = profile.collective(collective.name);
    if (measured && !measured->guard && !collective.function.empty()) functions.push_back(collective.function);
  }
  if (functions.empty()) functions.push_back("allreduce");
  return functions;
}

// "Ring,Tree" as "allgather:Ring,Tree;allreduce:Ring,Tree".
std::string scoped_value(const std::vector<std::string_view>& functions, const std::string& value) {
  std::string scoped;
  for (std::string_view function : functions)
    scoped += (scoped.empty() ? "" : ";") + std::string(function) + ":" + value;
  return scoped;
}

bool is_collective_scoped(std::string_view name) {
  return name == "NCCL_ALGO" || name == "NCCL_PROTO";
}

bool uses_scoped_syntax(const ProfileShape& shape) {
  const Result<int> version = parse_nccl_version(shape.nccl_version);
  return version && *version >= kScopedListsNcclVersion;
}

std::string shown(std::string_view text) {
  return printable_excerpt(text, 40);
}

}  // namespace

std::vector<EnvSetting> checked_env(const Profile& profile, const std::vector<std::string>& allow_names,
                                    std::vector<std::string>& warnings) {
  const bool scoped = uses_scoped_syntax(profile.shape);
  const std::vector<std::string_view> functions = tuned_functions(profile);
  std::vector<EnvSetting> variables;
  for (const auto& [name, value] : profile.env) {
    if (is_denied_env_name(name)) {
      warnings.push_back("dropped '" + shown(name) +
                         "': it loads code, changes the loader or a shell, or names a file");
      continue;
    }
    const bool allowed = is_allowable_env_name(name) &&
                         std::find(allow_names.begin(), allow_names.end(), name) != allow_names.end();
    if (!is_safe_env_name(name) && !allowed) {
      warnings.push_back("dropped '" + shown(name) +
                         "': not a name matching ^NCCL_[A-Z0-9_]+$ nor in env.allow_names");
      continue;
    }
    if (!is_safe_env_setting(name, value)) {
      warnings.push_back("dropped " + name + ": its value '" + shown(value) +
                         "' is empty, longer than 1024 or has characters outside " +
                         std::string(kSafeValueCharacters));
      continue;
    }
    // A value that names a collective already ("allreduce:Tree") is kept as written.
    const bool scope = scoped && is_collective_scoped(name) && value.find(':') == std::string::npos;
    variables.push_back({name, scope ? scoped_value(functions, value) : value});
  }
  return variables;
}

namespace {

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

// The example tuner plugin's names (NCCL ext-tuner/example/plugin.c, parseAlgorithm and
// parseProtocol): lower case, with an underscore where NCCL's own names have none. It reads any
// other name as ring / simple, so only these are written.
std::optional<std::string> csv_algorithm(std::string_view algo) {
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 7> kNames = {{
      {"tree", "tree"},
      {"ring", "ring"},
      {"collnetdirect", "collnet_direct"},
      {"collnetchain", "collnet_chain"},
      {"nvls", "nvls"},
      {"nvlstree", "nvls_tree"},
      {"pat", "pat"},
  }};
  const std::string key = lower(algo);
  for (const auto& [nccl, csv] : kNames)
    if (key == nccl) return std::string(csv);
  return std::nullopt;
}

std::optional<std::string> csv_protocol(std::string_view proto) {
  const std::string key = lower(proto);
  if (key == "ll" || key == "ll128" || key == "simple") return key;
  return std::nullopt;
}

// collective_type,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks: one line per
// per_size range. nNodes and nRanks are -1 (any): `env` already chose this profile for the job,
// possibly from a neighbouring node count, and the file is meant for that job.
//
// The example plugin (NCCL 2.28 ext-tuner/example/plugin.c, pluginGetCollInfo) sets *nChannels = 1
// before it looks for a row and changes it only for a matching row whose channels is not -1; NCCL
// (src/enqueue.cc, getAlgoInfo) then uses that count in place of its own. So every collective
// without a matching row, and every row with channels -1 (NCCL's own choice in the profile), runs
// on ONE channel. Hence the warning below on every render; our own plugin,
// libnccl-tuner-nccltune.so, leaves NCCL's channel count alone unless the profile sets one.
constexpr std::string_view kTunerCsvChannelWarning =
    "tuner-csv: NCCL's example tuner plugin runs every collective without a matching row, and every row with "
    "channels -1, on 1 channel (it starts from nChannels = 1); use libnccl-tuner-nccltune.so "
    "(NCCL_TUNER_PLUGIN) instead, which keeps NCCL's own channel count";

// One row per range of one collective's per_size.
void append_csv_rows(std::string& out, std::string_view function, const std::vector<SizeChoice>& per_size,
                     std::vector<std::string>& warnings) {
  for (const SizeChoice& choice : per_size) {
    const std::string range = std::string(function) + " " + std::to_string(choice.min_bytes) + "-" +
                              std::to_string(choice.max_bytes);
    if (choice.algo.empty() && choice.proto.empty()) continue;  // NCCL's own choice: nothing to say
    const std::optional<std::string> algorithm = csv_algorithm(choice.algo);
    const std::optional<std::string> protocol = csv_protocol(choice.proto);
    if (!algorithm || !protocol) {
      warnings.push_back("tuner-csv: range " + range +
                         " skipped: the plugin's format needs one algorithm and one protocol, not '" +
                         shown(choice.algo) + "' / '" + shown(choice.proto) + "'");
      continue;
    }
    const int channels = choice.channels > 0 ? choice.channels : -1;
    out += std::string(function) + "," + std::to_string(choice.min_bytes) + "," +
           std::to_string(choice.max_bytes) + "," + *algorithm + "," + *protocol + "," +
           std::to_string(channels) + ",-1,-1\n";
  }
}

std::string tuner_csv(const Profile& profile, std::vector<std::string>& warnings) {
  warnings.emplace_back(kTunerCsvChannelWarning);
  std::string out = "# nccltune profile " + shown(profile.shape.node_type_key) + ", tuned at " +
                    std::to_string(profile.shape.nodes) + " nodes x " +
                    std::to_string(profile.shape.gpus_per_node) +
                    " GPUs (NCCL_TUNER_CONFIG_FILE for the NCCL example tuner plugin)\n" +
                    "# collective_type,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks\n";
  for (const auto& [collective, measured] : profile.collectives) {
    const std::optional<std::string_view> function = nccl_function_name(collective);
    if (!function) {
      if (!measured.per_size.empty())
        warnings.push_back("tuner-csv: " + collective +
                           " skipped: NCCL runs it as send/recv, which no tuner row applies to");
      continue;
    }
    append_csv_rows(out, *function, measured.per_size, warnings);
  }
  return out;
}

// A comment's text: at most 4096 bytes, each character outside [A-Za-z0-9_./:+=,^() -] as '?'.
std::string comment_text(std::string_view text) {
  std::string shown(text.substr(0, 4096));
  for (char& c : shown)
    if (!std::isalnum(static_cast<unsigned char>(c)) &&
        std::string_view("_./:+=,^() -").find(c) == std::string_view::npos)
      c = '?';
  return shown;
}

}  // namespace

std::optional<EnvFormat> parse_env_format(std::string_view name) {
  for (const auto& [text, format] : kFormats)
    if (text == name) return format;
  return std::nullopt;
}

std::string_view to_string(EnvFormat format) {
  for (const auto& [text, value] : kFormats)
    if (value == format) return text;
  return "?";
}

std::string describe_kept(const KeptOwnSetting& kept) {
  return kept.name + "='" + printable_excerpt(kept.own_value, 200) +
         "' is set by the job: left as it is, not " + "the profile's '" +
         printable_excerpt(kept.profile_value, 200) + "'";
}

EnvEmission render_env(const Profile& profile, EnvFormat format, const std::vector<std::string>& allow_names,
                       const EnvOrigin& origin, const JobOwnEnv& own) {
  EnvEmission emission;
  if (format == EnvFormat::sh || format == EnvFormat::slurm) {
    for (const std::string& source : origin.sources)
      emission.text += "# nccltune profile: " + comment_text(source) + "\n";
    for (const std::string& withheld : origin.withheld)
      emission.text += "# nccltune withheld: " + comment_text(withheld) + "\n";
    if (!origin.domains.empty()) emission.text += "# nccltune domains: " + comment_text(origin.domains) + "\n";
  }
  if (format == EnvFormat::tuner_csv) {
    emission.text = tuner_csv(profile, emission.warnings);
    return emission;
  }
  std::vector<EnvSetting> variables;
  for (EnvSetting& variable : checked_env(profile, allow_names, emission.warnings)) {
    if (const auto set = own.find(variable.name); set != own.end()) {
      emission.kept.push_back({variable.name, set->second, variable.value});
      continue;
    }
    variables.push_back(std::move(variable));
  }
  if (format == EnvFormat::json) {
    nlohmann::ordered_json env = nlohmann::ordered_json::object();
    for (const EnvSetting& variable : variables) env[variable.name] = variable.value;
    nlohmann::ordered_json kept = nlohmann::ordered_json::array();
    for (const KeptOwnSetting& setting : emission.kept)
      kept.push_back(
          {{"name", setting.name}, {"own", setting.own_value}, {"profile", setting.profile_value}});
    nlohmann::ordered_json object = {
        {"env", env}, {"profiles", origin.sources}, {"withheld", origin.withheld}, {"kept", kept}};
    if (!origin.domains.empty())
      object["domains"] = {
          {"hosts", origin.hosts}, {"nvlink_domains", origin.nvlink_domains}, {"why", origin.domains}};
    emission.text = object.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
    return emission;
  }
  // Values hold only [A-Za-z0-9_,.:^=+-]: nothing any of these readers treats specially, so only
  // the shell gets quotes (and single quotes stop everything there). Slurm's TaskProlog protocol,
  // systemd's EnvironmentFile and nccl.conf would keep quotes as part of the value.
  for (const EnvSetting& variable : variables) {
    switch (format) {
      case EnvFormat::sh: emission.text += "export " + variable.name + "='" + variable.value + "'\n"; break;
      case EnvFormat::slurm: emission.text += "export " + variable.name + "=" + variable.value + "\n"; break;
      case EnvFormat::systemd:
      case EnvFormat::nccl_conf: emission.text += variable.name + "=" + variable.value + "\n"; break;
      case EnvFormat::json:
      case EnvFormat::tuner_csv: break;  // handled above
    }
  }
  return emission;
}

}  // namespace nccltune
