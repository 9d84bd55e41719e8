// Feeds arbitrary bytes to parse_daemon_config (the `daemon:` section of the node config
// /etc/nccltune/nccltune.yaml, read by nccltuned). Asserts only what the sanitizers and a clean
// return assert.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "daemon/daemon_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)nccltune::parse_daemon_config(text, "nccltune.yaml");
  return 0;
}
