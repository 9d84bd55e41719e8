// What an NCCL INFO log means for the people running the job: one verdict per finding, each a
// line that says what happened and what to do. A pure function of the parsed log and, when the
// node it ran on is known (`explain --from`), that node's topology: the log alone cannot say
// that a node had RDMA NICs NCCL did not use.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "collectives/nccl_info_log.h"
#include "topology/node_topology.h"

namespace nccltune {

enum class LogVerdictLevel { info, warn, fail };
std::string_view to_string(LogVerdictLevel level);

struct LogVerdict {
  LogVerdictLevel level = LogVerdictLevel::info;
  std::string check;    // "transport", "gdr", "hcas", "nvls", "tuner", "env", "ib_completion", ...
  std::string message;  // one line
};

// `node` may be null. Verdicts come in a fixed order of checks, so output is reproducible.
std::vector<LogVerdict> explain_nccl_log(const NcclInfoLog& log, const NodeTopology* node);

// 0 when nothing warns or fails, 1 warnings only, 2 failures (as `check`).
int log_verdicts_exit_code(const std::vector<LogVerdict>& verdicts);

nlohmann::ordered_json log_verdicts_to_json(const std::vector<LogVerdict>& verdicts);

// The readable summary `explain` prints: version, shape, network, GDR, NVLS, channels, env,
// tuner, the choices per size, warnings and verdicts (nccl_log_text.cpp).
std::string render_nccl_log_text(const NcclInfoLog& log, const std::vector<LogVerdict>& verdicts);

}  // namespace nccltune
