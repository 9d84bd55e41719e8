// The skimmer behind ProfileParts::for_jobs: the text of a profile less what serving a job never
// reads (provenance, failed, notes, results), so that a prolog parses a fraction of it. A section
// is skipped only when profile_skim_check proves the whole parse would read it; a torn or broken
// one, or a layout not proven, sends the file to the whole parse, which decides.
#include <set>
#include <utility>
#include <vector>

#include "profile/profile.h"
#include "profile/profile_skim_check.h"

namespace nccltune {
namespace {

std::size_t indent_of(std::string_view line) {
  const std::size_t first = line.find_first_not_of(' ');
  return first == std::string_view::npos ? line.size() : first;
}

// Whether `line`, indented by exactly `indent`, is the key `key` of a block map.
bool is_block_key(std::string_view line, std::size_t indent, std::string_view key) {
  if (indent_of(line) != indent) return false;
  line.remove_prefix(indent);
  return line.starts_with(key) && line.size() > key.size() && line[key.size()] == ':';
}

constexpr std::string_view kSkipped[] = {"provenance", "failed", "notes", "results"};

// A line that could name a skipped key in a spelling the skim does not match ("results :",
// "\"results\":", "? results"): the whole parse reads such a file.
bool names_a_skipped_key_otherwise(std::string_view content) {
  if (content.starts_with('?')) return true;
  if (content.starts_with('"') || content.starts_with('\'')) content.remove_prefix(1);
  for (std::string_view key : kSkipped)
    if (content.starts_with(key) && content.size() > key.size() && content[key.size()] != ':') {
      const std::size_t after = content.find_first_not_of(' ', key.size());
      if (after == std::string_view::npos || content[after] == ':' || content[after] == '"' ||
          content[after] == '\'')
        return true;
    }
  return false;
}

// The key of `line` ("  all_reduce:" -> all_reduce) when the line is only that key.
std::string_view bare_key(std::string_view line) {
  line.remove_prefix(indent_of(line));
  return line.ends_with(':') ? line.substr(0, line.size() - 1) : std::string_view();
}

// Whether YAML may read the line after `line` as more of a value `line` starts: a quoted text or
// a flow collection left open (as far as a scan that ignores YAML's finer rules can tell; it may
// say so of a line that does not, which only costs a whole parse). `state` carries what is open.
struct OpenValue {
  bool in_double = false, in_single = false;
  int depth = 0;
  bool open() const { return in_double || in_single || depth > 0; }
};
void scan_line(std::string_view line, OpenValue& state) {
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (state.in_double) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        state.in_double = false;
    } else if (state.in_single) {
      if (c == '\'' && i + 1 < line.size() && line[i + 1] == '\'')
        ++i;
      else if (c == '\'')
        state.in_single = false;
    } else if (c == '#' && (i == 0 || line[i - 1] == ' ')) {
      return;  // a comment
    } else if (c == '"') {
      state.in_double = true;
    } else if (c == '\'') {
      state.in_single = true;
    } else if (c == '[' || c == '{') {
      ++state.depth;
    } else if ((c == ']' || c == '}') && state.depth > 0) {
      --state.depth;
    }
  }
}

}  // namespace

std::optional<std::string> profile_text_for_jobs(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  // The indentation whose key is being skipped (0: provenance, failed, notes, and a v1 profile's
  // results; 4: a collective's results; 8: one under v3's communicators); npos when not skipping.
  std::size_t skipping = std::string_view::npos;
  std::string_view skipped_key;
  std::vector<std::string_view> section;
  bool in_collectives = false, in_communicators = false;
  bool top_level_results = false, v1 = false;
  OpenValue open_value;  // what the kept lines so far leave open
  // The lines a new line may belong to (indentation, line), innermost last; and each skipped key
  // with the line it belongs to, which YAML allows once.
  std::vector<std::pair<std::size_t, std::string_view>> open;
  std::set<std::pair<std::string_view, const char*>> skipped_keys;
  const auto close_section = [&] {
    const bool proven = skim_check::section_reads_whole(skipped_key, section);
    section.clear();
    skipping = std::string_view::npos;
    return proven;
  };
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    const std::string_view line = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    const std::size_t indent = indent_of(line);
    const bool blank = indent == line.size() || line[indent] == '#';
    if (skipping != std::string_view::npos) {
      // A section ends at the next line as little indented as its key, but for the items of a
      // block sequence written at the key's own indentation ("notes:\n- x").
      const bool item =
          indent == skipping && (line.substr(indent).starts_with("- ") || line.substr(indent) == "-");
      if (blank || indent > skipping || item) {
        if (line.find_first_of("&*!") != std::string_view::npos) return std::nullopt;
        section.push_back(line);
        if (end != std::string_view::npos) out += '\n';
        continue;
      }
      if (!close_section()) return std::nullopt;
    }
    if (blank) {
      if (end != std::string_view::npos) out += '\n';
      continue;
    }
    while (!open.empty() && open.back().first >= indent) open.pop_back();
    const std::string_view parent = open.empty() ? std::string_view() : open.back().second;
    const std::string_view grandparent = open.size() < 2 ? std::string_view() : open[open.size() - 2].second;
    open.emplace_back(indent, line);
    if (indent == 0) {
      in_collectives = is_block_key(line, 0, "collectives");
      in_communicators = is_block_key(line, 0, "communicators");
      if (line == "schema: nccltune/profile/v1" || line == "schema: \"nccltune/profile/v1\"") v1 = true;
    }
    std::string_view key;
    if (indent == 0) {
      for (std::string_view name : kSkipped)
        if (is_block_key(line, 0, name)) key = name;
      top_level_results |= key == "results";
    } else if (((in_collectives && indent == 4) || (in_communicators && indent == 8)) &&
               is_block_key(line, indent, "results")) {
      // A collective's results only: under "<collective>:" two spaces in, under "collectives:"
      // two more; in another layout the file is read whole.
      if (indent_of(parent) != indent - 2 || !is_collective_name(bare_key(parent)) ||
          indent_of(grandparent) != indent - 4 || bare_key(grandparent) != "collectives")
        return std::nullopt;
      key = "results";
    }
    if (key.empty() && names_a_skipped_key_otherwise(line.substr(indent))) return std::nullopt;
    if (!key.empty()) {
      // A key line that may be more of a value the line before left open (a quoted text, a flow
      // map) is not a section to skip: the whole parse reads such a file.
      if (open_value.open()) return std::nullopt;
      if (line.find_first_of("&*!") != std::string_view::npos) return std::nullopt;
      if (!skipped_keys.emplace(key, parent.data()).second) return std::nullopt;  // twice: YAML refuses
      skipping = indent;
      skipped_key = key;
      section.push_back(line);
    } else {
      scan_line(line, open_value);
      out += line;
    }
    if (end != std::string_view::npos) out += '\n';
  }
  if (skipping != std::string_view::npos && !close_section()) return std::nullopt;
  // Only v1 has results at the top level; elsewhere the whole parse names the unknown key.
  if (top_level_results && !v1) return std::nullopt;
  return out;
}

}  // namespace nccltune
