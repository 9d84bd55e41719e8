// Feeds arbitrary bytes to parse_profile (a profile from the store, read by prologs, the tuner
// plugin, the daemon, show, diff and report). When it parses, writes it with profile_to_yaml,
// parses that again and writes it again: asserts (abort) that the written text parses and that
// both written texts are the same, i.e. that writing and reading a profile loses nothing twice.
// And what env and the plugin read (ProfileParts::for_jobs) of any text the whole parse reads is
// the same profile less the parts jobs do not need.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "profile/profile.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto profile = nccltune::parse_profile(text, "fuzz.yaml");
  auto for_jobs = nccltune::parse_profile(text, "fuzz.yaml", nccltune::ProfileParts::for_jobs);
  if (!profile) return 0;
  const auto job_parts = [](nccltune::Profile p) {
    p.provenance = {};
    p.failed.clear();
    p.notes.clear();
    for (auto& [op, collective] : p.collectives) collective.results = {};
    for (auto& section : p.shapes)
      for (auto& [op, collective] : section.collectives) collective.results = {};
    return nccltune::profile_to_yaml(p);
  };
  if (!for_jobs || job_parts(*for_jobs) != job_parts(*profile)) {
    std::fprintf(stderr, "the job's parts differ from the whole parse's: %s\n",
                 for_jobs ? "another profile" : for_jobs.error().c_str());
    std::abort();
  }
  const std::string written = nccltune::profile_to_yaml(*profile);
  auto again = nccltune::parse_profile(written, "written.yaml");
  if (!again) {
    std::fprintf(stderr, "written profile does not parse: %s\n--- written:\n%s\n", again.error().c_str(),
                 written.c_str());
    std::abort();
  }
  const std::string rewritten = nccltune::profile_to_yaml(*again);
  if (rewritten != written) {
    std::fprintf(stderr, "profile changes when written twice\n--- first:\n%s\n--- second:\n%s\n",
                 written.c_str(), rewritten.c_str());
    std::abort();
  }
  return 0;
}
