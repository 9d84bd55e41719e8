// What lets ProfileParts::for_jobs skip a section: proof that the whole parse would accept it
// (profile_skim_check.cpp says how). Used by profile_text_for_jobs only.
#pragma once

#include <string_view>
#include <vector>

namespace nccltune::skim_check {

// Whether the lines of the section `key` (provenance, failed, notes, results; its key's line
// first) are in the layout profile_to_yaml writes and hold what the whole parse reads there.
// false: not proven (the file is then parsed whole).
bool section_reads_whole(std::string_view key, const std::vector<std::string_view>& section_lines);

}  // namespace nccltune::skim_check
