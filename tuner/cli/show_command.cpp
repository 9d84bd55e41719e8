// `nccltune show PROFILE [--format text|json]`: a profile's summary for a terminal, or the same
// view as `nccltune/show/v1` JSON for scripts (report/profile_json.h). Exit 0, or 2 when the
// profile cannot be read or is not valid (one line naming the file and field).
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "base/printable_text.h"
#include "cli/commands.h"
#include "profile/profile.h"
#include "profile/profile_store.h"
#include "report/profile_json.h"
#include "report/profile_summary.h"
#include "report/profile_view.h"

namespace nccltune::cli {

namespace {

constexpr int kBadProfile = 2;

struct ShowOptions {
  std::string path, format = "text";
};

int run_show(const ShowOptions& options) {
  const std::string& path = options.path;
  auto profile = read_profile(path);
  if (!profile) {
    print_error_line("nccltune show", profile.error());
    return kBadProfile;
  }
  const std::filesystem::path directory = std::filesystem::path(path).parent_path();
  // The counts beside it of its own layout (an MNNVL profile's: the same hosts per NVLink domain).
  const std::vector<int> counts = stored_node_counts(directory.empty() ? "." : directory, layout_of(profile->shape));
  if (options.format == "json")
    std::cout << render_profile_json(view_profile(*profile),
                                     {path, std::string("nccltune ") + NCCLTUNE_VERSION, counts});
  else
    std::cout << render_profile_summary(*profile, path, counts);
  return 0;
}

}  // namespace

void add_show_command(CLI::App& app, Command& command) {
  auto options = std::make_shared<ShowOptions>();
  auto* sub =
      app.add_subcommand("show", "Summarise a profile: shape, env, per-size choices, busbw, provenance");
  sub->add_option("PROFILE", options->path, "Profile YAML written by `nccltune tune`")->required();
  sub->add_option("--format", options->format, "text for people, json (nccltune/show/v1) for scripts")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  sub->callback([options, &command] { command.run = [options] { return run_show(*options); }; });
}

}  // namespace nccltune::cli
