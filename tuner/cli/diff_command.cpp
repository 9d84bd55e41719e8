// `nccltune diff A B`: what changed between two profiles (shape, env, per-size choices, busbw
// per size), e.g. after an NCCL upgrade. Exit codes as diff(1): 0 identical, 1 different,
// 2 when a profile cannot be read or is not valid (one line naming the file and field).
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include "base/printable_text.h"
#include "cli/commands.h"
#include "profile/profile.h"
#include "report/profile_diff.h"

namespace nccltune::cli {

namespace {

constexpr int kIdentical = 0, kDifferent = 1, kBadProfile = 2;

struct DiffOptions {
  std::string a, b;
};

int run_diff(const DiffOptions& options) {
  auto a = read_profile(options.a);
  auto b = read_profile(options.b);
  for (const auto* profile : {&a, &b}) {
    if (!*profile) {
      print_error_line("nccltune diff", profile->error());
      return kBadProfile;
    }
  }
  const ProfileDiff diff = diff_profiles(*a, *b);
  std::cout << render_profile_diff(diff, *a, options.a, *b, options.b);
  return diff.identical() ? kIdentical : kDifferent;
}

}  // namespace

void add_diff_command(CLI::App& app, Command& command) {
  auto options = std::make_shared<DiffOptions>();
  auto* sub = app.add_subcommand(
      "diff", "What changed between two profiles (exit 0 identical, 1 different, 2 bad input)");
  command.usage_exit_codes[sub->get_name()] = kUsageError;  // its documented code for bad input
  sub->add_option("A", options->a, "The older profile")->required();
  sub->add_option("B", options->b, "The newer profile")->required();
  sub->callback([options, &command] { command.run = [options] { return run_diff(*options); }; });
}

}  // namespace nccltune::cli
