#include "cli/usage_error.h"

#include <algorithm>
#include <cctype>
#include <regex>
#include <sstream>

#include "base/collective_names.h"
#include "base/printable_text.h"
#include "cli/commands.h"

namespace nccltune::cli {

int usage_exit_code(const Command& command, std::string_view subcommand) {
  const auto said = command.usage_exit_codes.find(subcommand);
  return said == command.usage_exit_codes.end() ? kUsageError : said->second;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  // Optimal string alignment: insertions, deletions, substitutions and swaps of two neighbours
  // ("--form" is one edit from "--from").
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      d[i][j] =
          std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.size()][b.size()];
}

std::string closest_word(std::string_view word, const std::vector<std::string>& candidates) {
  // A typo: at most 2 edits, and at most half the word (so --bogus never becomes --budget).
  std::size_t best_distance = std::min<std::size_t>(2, word.size() / 2) + 1;
  std::string best;
  for (const std::string& candidate : candidates) {
    const std::size_t distance = edit_distance(word, candidate);
    if (distance < best_distance) {  // the first of equally near words
      best_distance = distance;
      best = candidate;
    }
  }
  return best;
}

namespace {

// Lower case, without '_' and '-': "All_Reduce" and "allreduce" alike.
std::string folded(std::string_view word) {
  std::string out;
  for (const char c : word)
    if (c != '_' && c != '-') out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

std::string closest_collective(std::string_view typed) {
  std::vector<std::string> names;
  for (const CollectiveName& row : kCollectiveTable) {
    names.emplace_back(row.name);
    for (const std::string_view spelling : {row.name, row.function, row.log})
      if (!spelling.empty() && folded(spelling) == folded(typed)) return std::string(row.name);
  }
  return closest_word(typed, names);
}

std::string closest_flag(const CLI::App& sub, std::string_view word) {
  if (word.substr(0, 2) != "--" || word.size() < 4) return "";
  std::vector<std::string> names = {"help"};
  for (const CLI::Option* option : sub.get_options()) {
    if (option->get_group().empty()) continue;  // hidden flags are never suggested
    for (const std::string& name : option->get_lnames()) names.push_back(name);
  }
  const std::string near = closest_word(word.substr(2), names);  // in --help's order
  return near.empty() ? near : "--" + near;
}

namespace {

// The words CLI11 did not expect, from its ExtrasError message (which lists them in reverse).
std::vector<std::string> unexpected_words(const CLI::ParseError& error) {
  const std::string message = error.what();
  const std::size_t colon = message.find(": ");
  std::vector<std::string> extras;
  if (colon == std::string::npos) return extras;
  std::istringstream list(message.substr(colon + 2));
  for (std::string word; list >> word;) extras.push_back(word);
  return extras;
}

}  // namespace

std::string usage_error_text(const CLI::App& sub, const std::string& invoked,
                             const std::vector<std::string>& words, const std::vector<std::string>& remaining,
                             const CLI::ParseError& error) {
  const std::string help = " (see " + invoked + " --help)";
  // CLI11 reports a missing required option before a flag it did not know, but the unknown flag
  // is the mistake to name (`report --jornal J` is not "--output is required").
  const bool unknown_flag_left = std::any_of(remaining.begin(), remaining.end(), [](const std::string& word) {
    return word.size() > 1 && word.front() == '-';
  });
  if (dynamic_cast<const CLI::ExtrasError*>(&error) || unknown_flag_left) {
    std::vector<std::string> extras = unexpected_words(error);
    if (!dynamic_cast<const CLI::ExtrasError*>(&error)) extras = remaining;
    // The first unexpected word in the order it was typed.
    std::string word = extras.empty() ? std::string() : extras.back();
    for (const std::string& typed : words) {
      if (std::find(extras.begin(), extras.end(), typed) != extras.end()) {
        word = typed;
        break;
      }
    }
    const std::string shown = printable_excerpt(word, 100);
    if (word.size() > 1 && word.front() == '-') {
      const std::string flag = word.substr(0, word.find('='));
      const std::string near = closest_flag(sub, flag);
      return "unknown flag " + printable_excerpt(flag, 100) +
             (near.empty() ? help : " (did you mean " + near + "?)");
    }
    return "unexpected argument '" + shown + "'" + help;
  }
  std::string message = error.what();
  // CLI11's open ranges end at the largest double, 309 digits: say "out of range" instead.
  static const std::regex unbounded(R"( not in range \S+ to [0-9]{30,}\.[0-9]+)");
  message = std::regex_replace(message, unbounded, " is out of range");
  return printable_excerpt(message, 500) + help;
}

}  // namespace nccltune::cli
