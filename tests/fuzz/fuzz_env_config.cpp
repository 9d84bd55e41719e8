// Feeds arbitrary bytes to parse_env_config (the `env:` section of the node config
// /etc/nccltune/nccltune.yaml, read by `nccltune env`, nccltune-env in prologs, the tuner plugin
// and nccltuned). Asserts only what the sanitizers and a clean return assert.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "node/env_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)nccltune::parse_env_config(text, "nccltune.yaml");
  return 0;
}
