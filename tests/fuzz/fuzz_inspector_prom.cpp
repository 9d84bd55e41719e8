// Feeds arbitrary bytes to observe's reader of NCCL Inspector's Prometheus textfiles: the input's
// lines, split between two GPUs' files in turn; then the report (what ran against the profile's
// choice, the suspects) without and with a profile that has a world of 2 nodes x 1, the text and
// the nccltune/observe/v1 JSON. Asserts (abort) that the JSON parses again, that a row's busbw
// count is its records, that every problem is one line and that the exit code is 0, 1 or 2.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "observe/observe_output.h"
#include "observe/observe_report.h"
#include "observe/observed_job.h"

namespace {

[[noreturn]] void fail(const char* what, const std::string& text) {
  std::fprintf(stderr, "%s\n%s\n", what, text.c_str());
  std::abort();
}

nccltune::Profile prom_fuzz_profile() {
  nccltune::Profile profile;
  profile.shape.nodes = 2;
  profile.shape.gpus_per_node = 1;
  profile.shape.ranks = 2;
  nccltune::CollectiveProfile all_reduce;
  all_reduce.results.sizes = {1024, 1048576};
  all_reduce.results.tuned = {1, 50};
  all_reduce.per_size = {{0, 1048576, "Ring", "LL128", 0, 0}};
  profile.collectives["all_reduce"] = all_reduce;
  return profile;
}

}  // namespace

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
  for (const std::string& problem : accumulator.problems())
    if (problem.find('\n') != std::string::npos) fail("a problem of more than one line", problem);
  for (const auto& [id, communicator] : job.communicators) {
    if (int(communicator.ranks.size()) > communicator.n_ranks) fail("more GPUs than ranks", id);
    for (const auto& [key, row] : communicator.rows)
      if (row.busbw.count() + row.busbw.nan_count() != row.records) fail("a row's busbw count", key.first);
  }
  static const nccltune::Profile profile = prom_fuzz_profile();
  for (const nccltune::Profile* with : {static_cast<const nccltune::Profile*>(nullptr), &profile}) {
    const nccltune::ObserveReport report = nccltune::build_observe_report(job, {"dir"}, with, "p.yaml", 0.1);
    (void)nccltune::render_observe_text(report);
    const std::string json = nccltune::render_observe_json(report);
    if (nlohmann::json::parse(json, nullptr, false).is_discarded()) fail("the JSON does not parse", json);
    const int code = nccltune::observe_exit_code(report);
    if (code < 0 || code > 2) fail("an exit code outside 0..2", json);
  }
  return 0;
}
