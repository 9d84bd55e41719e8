// Usage errors (an unknown flag, a bad value, a flag without its value) as every subcommand
// reports them: one line naming the subcommand and the flag, with the closest flag when one is
// near, and an exit code that never reads as one of the subcommand's verdicts.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "cli/commands.h"

namespace nccltune::cli {

// The exit code of a usage error in `subcommand` ("" for nccltune itself): the one its
// registration put in `command.usage_exit_codes`, else kUsageError (2). `env` is fail-open and
// decides for itself.
int usage_exit_code(const Command& command, std::string_view subcommand);

// Levenshtein distance between two words.
std::size_t edit_distance(std::string_view a, std::string_view b);

// The word of `candidates` closest to `word` ("reprot" -> "report"), or "" when none is near enough
// to be a likely typo: at most 2 edits, and at most half the word. Ties: the first in `candidates`.
std::string closest_word(std::string_view word, const std::vector<std::string>& candidates);

// The collective (its nccl-tests name, as the flags take it) that `typed` most likely means:
// NCCL's own spelling ("allreduce", "AllReduce"), another case or separator ("All-Reduce"), or a
// typo ("all_reduse"); "" when none is near.
std::string closest_collective(std::string_view typed);

// The long flag of `sub` (or `--help`) closest to `word` ("--form" -> "--from"), or "" when none
// is near enough to be a likely typo.
std::string closest_flag(const CLI::App& sub, std::string_view word);

// The one line (without "nccltune SUB: ") for a parse error of `sub`, given the command line's
// words (argv[1..]) and what CLI11 left unparsed (App::remaining): "unknown flag --form (did you
// mean --from?)", or CLI11's own message, which names the flag, with where to read more.
std::string usage_error_text(const CLI::App& sub, const std::string& invoked,
                             const std::vector<std::string>& words, const std::vector<std::string>& remaining,
                             const CLI::ParseError& error);

}  // namespace nccltune::cli
