#include "nccl_config.h"

#include <algorithm>
#include <cstring>

namespace nccltune::fake {

std::optional<std::string> config_comm_name(const void* config) {
  NcclConfig copy;
  std::size_t size = 0;
  std::memcpy(&size, config, sizeof size);
  std::memcpy(&copy, config, std::min(size, sizeof copy));  // an older, smaller config keeps our defaults
  if (copy.magic != 0xcafebeef) return std::nullopt;
  if (size < offsetof(NcclConfig, commName) + sizeof copy.commName || copy.commName == nullptr) return "";
  return std::string(copy.commName);
}

}  // namespace nccltune::fake
