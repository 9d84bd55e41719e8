#include "mpi_runtime/rank_group.h"

namespace nccltune {

std::string RankGroup::broadcast(const std::string& value, int root) {
  uint64_t length = value.size();
  broadcast(&length, sizeof length, root);
  std::string result = rank() == root ? value : std::string(length, '\0');
  if (length > 0) broadcast(result.data(), length, root);
  return result;
}

}  // namespace nccltune
