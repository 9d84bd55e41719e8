// Feeds arbitrary bytes to observe's reader of NCCL Inspector's JSON records: the input's lines,
// split between two ranks' files in turn (as read_inspector_files interleaves them), with a match
// window of 4 so that the window's eviction is reached; then the report without and with a
// profile that has a world of 2 nodes x 1 and a rail, the text and the nccltune/observe/v1 JSON.
// Asserts (abort) that the JSON parses again, that the counts add up (every matched or unmatched
// collective is at most one per record) and that every problem is one line.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "observe_fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  nccltune::ObserveAccumulator accumulator(4);
  std::uint64_t lines = 0;
  for (std::size_t start = 0; start < input.size();) {
    const std::size_t end = std::min(input.find('\n', start), input.size());
    ++lines;
    accumulator.add_line(lines % 2 ? "a-pid1.log" : "b-pid2.log", lines, input.substr(start, end - start));
    start = end + 1;
  }
  const nccltune::ObservedJob job = accumulator.finish();
  for (const auto& [id, communicator] : job.communicators)
    if (communicator.matched + communicator.unmatched > job.records)
      observe_fuzz::fail("more collectives than records", id);
  observe_fuzz::check_job(accumulator, job);
  return 0;
}
