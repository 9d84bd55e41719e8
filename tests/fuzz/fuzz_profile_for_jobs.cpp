// Feeds the same bytes to what serves jobs (parse_profile with ProfileParts::for_jobs: env,
// nccltune-env, the env and tuner plugins, nccltuned) and to the whole parse `show` runs, and
// aborts when they disagree: the lean path reads a profile the whole parse refuses (a torn file,
// a broken section the skim skipped), refuses one it reads, or refuses with another error. Where
// both read it, a job gets the same settings from either.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "profile/profile.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto whole = nccltune::parse_profile(text, "fuzz.yaml");
  const auto lean = nccltune::parse_profile(text, "fuzz.yaml", nccltune::ProfileParts::for_jobs);
  if (lean && !whole) {
    std::fprintf(stderr, "the lean path serves a profile the whole parse refuses: %s\n", whole.error().c_str());
    std::abort();
  }
  if (!lean && whole) {
    std::fprintf(stderr, "the lean path refuses a profile the whole parse reads: %s\n", lean.error().c_str());
    std::abort();
  }
  if (!lean) {
    if (lean.error() != whole.error()) {
      std::fprintf(stderr, "refused for another reason:\n  lean:  %s\n  whole: %s\n", lean.error().c_str(),
                   whole.error().c_str());
      std::abort();
    }
    return 0;
  }
  if (lean->env != whole->env || lean->keep_defaults != whole->keep_defaults || lean->shape != whole->shape ||
      lean->withheld != whole->withheld) {
    std::fprintf(stderr, "the lean path serves other settings than the whole parse reads\n");
    std::abort();
  }
  return 0;
}
