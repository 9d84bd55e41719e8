// Feeds arbitrary bytes to both readers of `nccltune import LOG`: read_nccl_tests_log (nccl-tests
// console output) and read_nccl_tests_json (the file of its -J), whatever the bytes look like,
// and, when one parses, does what `import` does with the result: re-checks the busbw arithmetic
// and dumps the nccltune/bench/v1 JSON (which throws, and so aborts here, on strings that are not
// valid UTF-8), then reads that JSON back. Asserts only what the sanitizers and a clean return
// assert.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "collectives/bench_json.h"
#include "collectives/nccl_tests_json.h"
#include "collectives/nccl_tests_log.h"

namespace {

void import_like(const nccltune::Result<nccltune::NcclTestsLog>& log) {
  if (!log) return;
  (void)nccltune::check_bus_bandwidth(log->bench, log->time_step_us);
  (void)nccltune::check_average_bus_bandwidth(log->bench);
  (void)nccltune::implied_bus_factor(log->bench);  // read_nccl_tests_log already ranks it
  const std::string json = nccltune::bench_result_to_json(log->bench).dump(2);
  (void)nccltune::parse_bench_json(json, "fuzz.json");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  import_like(nccltune::read_nccl_tests_log(text, "fuzz.log"));
  import_like(nccltune::read_nccl_tests_json(text, "fuzz.json"));
  return 0;
}
