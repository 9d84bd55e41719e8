#include "topology/check_default_tuner.h"

namespace nccltune {

std::vector<std::string> nccl_plugin_library_names(std::string_view name, std::string_view prefix) {
  if (name.empty()) return {std::string(prefix) + ".so"};
  std::vector<std::string> names{std::string(name)};
  const bool library_name = name.starts_with("lib") && name.ends_with(".so");
  if (name.find('/') == std::string_view::npos && !library_name)
    names.push_back(std::string(prefix) + "-" + std::string(name) + ".so");
  return names;
}

bool loads_a_tuner(const std::optional<NcclTunerLibrary>& found) {
  return found && found->open_error.empty() && !found->symbol.empty();
}

namespace {

std::string where(const NcclTunerLibrary& found) {
  return found.library + (found.path.empty() || found.path == found.library ? "" : " (" + found.path + ")");
}

}  // namespace

Finding default_tuner_finding(const std::optional<NcclTunerLibrary>& found) {
  Finding finding{"default_tuner", "node", Verdict::pass, ""};
  if (!found) {
    finding.message = "none: NCCL finds no libnccl-tuner.so and no tuner in a net plugin, so jobs run NCCL's own choices";
  } else if (!found->open_error.empty()) {
    finding.verdict = Verdict::warn;
    finding.message = found->library + " is on the library path but cannot be loaded (" + found->open_error +
                      "): NCCL goes on without a tuner";
  } else if (found->symbol.empty()) {
    finding.verdict = Verdict::warn;
    finding.message = where(*found) +
                      " exports no tuner table NCCL reads (ncclTunerPlugin_v2 to _v6): NCCL says it is "
                      "unsupported and runs its own choices";
  } else {
    finding.message =
        where(*found) + " exports " + found->symbol + (found->from_net_plugin ? " (in the net plugin)" : "") +
        ": NCCL loads it in every job that leaves NCCL_TUNER_PLUGIN unset, so NCCL's defaults here are "
        "its choices; tune measures its baselines under it, and a profile's per_size (nccltune's tuner "
        "plugin) replaces it, since NCCL loads one tuner";
  }
  return finding;
}

std::string describe_default_tuner(const std::optional<NcclTunerLibrary>& found) {
  if (!found) return "none";
  if (!found->open_error.empty()) return "none (" + found->library + " cannot be loaded: " + found->open_error + ")";
  if (found->symbol.empty()) return "none (" + where(*found) + " exports no tuner table NCCL reads)";
  return where(*found) + " exports " + found->symbol + (found->from_net_plugin ? " (in the net plugin)" : "");
}

}  // namespace nccltune
