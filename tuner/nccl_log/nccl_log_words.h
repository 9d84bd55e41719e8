// How explain's verdicts and its summary name things: a line of the log, a list, a fabric health
// mask. Private to nccltune_nccl_log.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <vector>

#include "collectives/nccl_info_log.h"
#include "collectives/nccl_info_mnnvl.h"

namespace nccltune::nccl_log_words {

inline std::string where(const NcclLogLine& line) {
  return fmt::format("{}:{}", line.source, line.line);
}

inline std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& name : names) out += (out.empty() ? "" : ", ") + name;
  return out;
}

inline std::string health_text(std::uint32_t mask) {
  const std::vector<std::string> problems = mnnvl_health_problems(mask);
  return problems.empty() ? fmt::format("0x{:x}", mask) : fmt::format("0x{:x} ({})", mask, joined(problems));
}

}  // namespace nccltune::nccl_log_words
