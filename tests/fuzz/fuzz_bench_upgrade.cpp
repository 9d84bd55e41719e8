// Feeds arbitrary bytes to parse_upgrade_json (what `nccltune report --upgrade FILE` reads, the
// -J of `bench --baseline-nccl-lib`), and, when it parses, renders bench's table and writes the
// JSON again. Asserts that the JSON written parses again and is written the same.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "upgrade/upgrade_comparison.h"
#include "upgrade/upgrade_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto comparison = nccltune::parse_upgrade_json(text, "fuzz.json");
  if (!comparison) return 0;
  (void)nccltune::render_upgrade_table(*comparison);
  const auto replace = nlohmann::ordered_json::error_handler_t::replace;
  const std::string json = nccltune::upgrade_to_json(*comparison).dump(2, ' ', false, replace);
  const auto again = nccltune::parse_upgrade_json(json, "again.json");
  if (!again) std::abort();
  if (nccltune::upgrade_to_json(*again).dump(2, ' ', false, replace) != json) std::abort();
  return 0;
}
