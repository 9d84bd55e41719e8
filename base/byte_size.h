// Byte sizes as nccl-tests writes them on its command line: "8", "64K", "1M", "16G" (powers of
// 1024), and back for messages.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "base/result.h"

namespace nccltune {

Result<std::size_t> parse_byte_size(std::string_view text);
std::string format_byte_size(std::size_t bytes);  // "64M", "1G", "1000"

}  // namespace nccltune
