// The skimmer behind ProfileParts::for_jobs: the text of a profile less what serving a job never
// reads (provenance, failed trials, notes, results), so that a prolog parses a fraction of it.
#include "profile/profile.h"

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

}  // namespace

std::optional<std::string> profile_text_for_jobs(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  // The indentation whose key is being skipped (0: provenance, failed, notes, and a v1 profile's
  // results; 4: a collective's results; 8: one under v3's communicators); npos when not skipping.
  std::size_t skipping = std::string_view::npos;
  bool in_collectives = false, in_communicators = false;
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
        if (end != std::string_view::npos) out += '\n';
        continue;
      }
      skipping = std::string_view::npos;
    }
    if (!blank && indent == 0) {
      in_collectives = is_block_key(line, 0, "collectives");
      in_communicators = is_block_key(line, 0, "communicators");
    }
    const bool skip = is_block_key(line, 0, "provenance") || is_block_key(line, 0, "failed") ||
                      is_block_key(line, 0, "notes") || is_block_key(line, 0, "results") ||
                      (in_collectives && is_block_key(line, 4, "results")) ||
                      (in_communicators && is_block_key(line, 8, "results"));
    if (skip) {
      if (line.find_first_of("&*!") != std::string_view::npos) return std::nullopt;
      skipping = indent;
    } else {
      out += line;
    }
    if (end != std::string_view::npos) out += '\n';
  }
  return out;
}

}  // namespace nccltune
