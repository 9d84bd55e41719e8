// Feeds arbitrary bytes to parse_journal (the tune journal, one JSON line per trial, read by
// `tune --resume` and by report). For every entry it reads, computes the resume key and writes the
// entry again with journal_line, and asserts (abort) that the written line parses back to a line
// that is written the same way.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "search/journal.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> warnings;
  auto entries = nccltune::parse_journal(text, "fuzz.jsonl", &warnings);
  if (!entries) return 0;
  for (const auto& entry : *entries) {
    (void)nccltune::journal_key(entry);
    const std::string line = nccltune::journal_line(entry);
    auto again = nccltune::parse_journal_line(line);
    if (!again) {
      std::fprintf(stderr, "written journal line does not parse: %s\n%s\n", again.error().c_str(),
                   line.c_str());
      std::abort();
    }
    if (nccltune::journal_line(*again) != line) {
      std::fprintf(stderr, "journal line changes when written twice:\n%s\n%s\n", line.c_str(),
                   nccltune::journal_line(*again).c_str());
      std::abort();
    }
  }
  return 0;
}
