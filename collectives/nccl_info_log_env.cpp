// The variables NCCL says the environment set ("NCCL_X set by environment to V" and alike).
#include "collectives/nccl_info_log_lines.h"

#include <algorithm>

#include "base/text_words.h"

namespace nccltune::nccl_info_detail {
namespace {

bool is_env_name(std::string_view word) {
  return word.size() > 5 && word.starts_with("NCCL_") && std::all_of(word.begin(), word.end(), [](char c) {
           return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
         });
}

}  // namespace

bool LineReader::read_env(const std::vector<std::string_view>& words) {
  // "NCCL_IB_HCA set by environment to mlx5_0", "NCCL_IB_HCA set to mlx5_4" (2.18 net_ib),
  // "NCCL_IB_PCI_RELAXED_ORDERING set by environment to 1." (integer parameters end in '.'),
  // aws-ofi-nccl's "NET/OFI Setting NCCL_NVLS_CHUNKSIZE to 512KiB".
  std::string_view name;
  size_t value_at = 0;
  if (words.size() >= 6 && is_env_name(words[0]) && words[1] == "set" && words[2] == "by" &&
      words[3] == "environment" && words[4] == "to") {
    name = words[0];
    value_at = 5;
  } else if (words.size() >= 4 && is_env_name(words[0]) && words[1] == "set" && words[2] == "to") {
    name = words[0];
    value_at = 3;
  } else if (words.size() >= 5 && words[0] == "NET/OFI" && words[1] == "Setting" && is_env_name(words[2])) {
    name = words[2];
    value_at =
        words[3] == "to" ? 4 : (words.size() >= 6 && words[4] == "variable" && words[5] == "to" ? 6 : 0);
    if (value_at == 0 || value_at >= words.size()) return false;
  } else {
    return false;
  }
  std::string value = join_words(words, value_at);
  if (value.size() > 1 && value.back() == '.' && to_int(std::string_view(value).substr(0, value.size() - 1)))
    value.pop_back();
  if (log_.env.size() < kMaxEnv || log_.env.contains(std::string(name))) log_.env[std::string(name)] = value;
  return true;
}

}  // namespace nccltune::nccl_info_detail
