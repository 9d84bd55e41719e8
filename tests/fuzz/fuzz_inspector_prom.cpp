// Feeds arbitrary bytes to observe's reader of NCCL Inspector's Prometheus textfiles: the input's
// lines, split between two GPUs' files in turn; then the report (what ran against the profile's
// choice, the suspects) without and with a profile that has a world of 2 nodes x 1, the text and
// the nccltune/observe/v1 JSON. Asserts (abort) that the JSON parses again, that a row's busbw
// count is its records, that every problem is one line and that the exit code is 0, 1 or 2.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "observe_fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  nccltune::ObserveAccumulator accumulator;
  std::uint64_t lines = 0;
  for (std::size_t start = 0; start < input.size();) {
    const std::size_t end = std::min(input.find('\n', start), input.size());
    ++lines;
    accumulator.add_prom_line(lines % 2 ? "a.prom" : "b.prom", lines, input.substr(start, end - start));
    start = end + 1;
  }
  const nccltune::ObservedJob job = accumulator.finish();
  for (const auto& [id, communicator] : job.communicators)
    if (int(communicator.ranks.size()) > communicator.n_ranks) observe_fuzz::fail("more GPUs than ranks", id);
  observe_fuzz::check_job(accumulator, job);
  return 0;
}
