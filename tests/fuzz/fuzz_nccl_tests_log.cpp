// Feeds arbitrary bytes to read_nccl_tests_log (nccl-tests console output, `nccltune import LOG`)
// and, when it parses, does what `import` does with the result: re-checks the busbw arithmetic
// and dumps the nccltune/bench/v1 JSON (which throws, and so aborts here, on strings that are not
// valid UTF-8), then reads that JSON back. Asserts only what the sanitizers and a clean return
// assert.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "collectives/bench_json.h"
#include "collectives/nccl_tests_log.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto log = nccltune::read_nccl_tests_log(text, "fuzz.log");
  if (!log) return 0;
  (void)nccltune::check_bus_bandwidth(log->bench, log->time_step_us);
  (void)nccltune::check_average_bus_bandwidth(log->bench);
  (void)nccltune::implied_bus_factor(log->bench);  // read_nccl_tests_log already ranks it
  const std::string json = nccltune::bench_result_to_json(log->bench).dump(2);
  (void)nccltune::parse_bench_json(json, "fuzz.json");
  return 0;
}
