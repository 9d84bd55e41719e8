// `nccltune show PROFILE`: a profile's summary for a terminal. Exit 0, or 2 when the profile
// cannot be read or is not valid (one line naming the file and field).
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

#include "base/printable_text.h"
#include "cli/commands.h"
#include "profile/profile.h"
#include "profile/profile_store.h"
#include "report/profile_summary.h"

namespace nccltune::cli {

namespace {

constexpr int kBadProfile = 2;

int run_show(const std::string& path) {
  auto profile = read_profile(path);
  if (!profile) {
    print_error_line("nccltune show", profile.error());
    return kBadProfile;
  }
  const std::filesystem::path directory = std::filesystem::path(path).parent_path();
  std::cout << render_profile_summary(*profile, path,
                                      stored_node_counts(directory.empty() ? "." : directory));
  return 0;
}

}  // namespace

void add_show_command(CLI::App& app, Command& command) {
  auto path = std::make_shared<std::string>();
  auto* sub =
      app.add_subcommand("show", "Summarise a profile: shape, env, per-size choices, busbw, provenance");
  sub->add_option("PROFILE", *path, "Profile YAML written by `nccltune tune`")->required();
  sub->callback([path, &command] { command.run = [path] { return run_show(*path); }; });
}

}  // namespace nccltune::cli
