// Feeds arbitrary bytes to parse_search_space (configs/search-space.yaml or `tune --space FILE`)
// and, when it parses, prunes the space for two cluster shapes (one with every fact unknown, one
// multi-node NVSwitch Hopper shape), which evaluates every knob and value condition. Asserts only
// what the sanitizers and a clean return assert.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "search/search_space.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto space = nccltune::parse_search_space(text, "fuzz.yaml");
  if (!space) return 0;
  (void)nccltune::prune(*space, nccltune::ShapeFacts{});
  (void)nccltune::prune(
      *space,
      nccltune::ShapeFacts{
          .nodes = 4, .gpus_per_node = 8, .nvswitch = true, .nics = 8, .nccl_version = 22809, .gpu_sm = 90});
  return 0;
}
