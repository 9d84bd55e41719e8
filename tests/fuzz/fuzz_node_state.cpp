// Feeds arbitrary bytes to parse_node_state (/run/nccltune/node.yaml, written by nccltuned and read
// by `nccltune env`, the tuner plugin and the daemon's next scan). When it parses, renders it with
// render_node_state, parses that again and renders it again: asserts (abort) that the rendered
// text parses and that both rendered texts are the same.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "node/node_state.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto state = nccltune::parse_node_state(text, "node.yaml");
  if (!state) return 0;
  const std::string rendered = nccltune::render_node_state(*state);
  auto again = nccltune::parse_node_state(rendered, "rendered.yaml");
  if (!again) {
    std::fprintf(stderr, "rendered node state does not parse: %s\n--- rendered:\n%s\n", again.error().c_str(),
                 rendered.c_str());
    std::abort();
  }
  const std::string rerendered = nccltune::render_node_state(*again);
  if (rerendered != rendered) {
    std::fprintf(stderr, "node state changes when rendered twice\n--- first:\n%s\n--- second:\n%s\n",
                 rendered.c_str(), rerendered.c_str());
    std::abort();
  }
  return 0;
}
