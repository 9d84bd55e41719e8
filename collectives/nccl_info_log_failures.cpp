// What went wrong, as a log says it: NCCL's WARN lines, and the failure texts of NCCL, PyTorch's
// watchdog or a launcher anywhere in the log (NcclFailure).
#include "collectives/nccl_info_log_lines.h"

#include <algorithm>
#include <cctype>
#include <utility>

namespace nccltune::nccl_info_detail {
namespace {

// ibv_wc_status of "status=12", "status=IBV_WC_RETRY_EXC_ERR(12)" (2.28+) or, in 2.18's
// wording, "with error 12,".
std::optional<int> completion_status(std::string_view body) {
  if (const size_t at = body.find("status="); at != std::string_view::npos) {
    std::string_view word = body.substr(at + 7);
    word = word.substr(0, word.find_first_of(" \t,"));
    if (const size_t open = word.find('('); open != std::string_view::npos) {
      word = word.substr(open + 1);
      word = word.substr(0, word.find(')'));
    }
    return to_count(word);
  }
  if (const size_t at = body.find("with error "); at != std::string_view::npos) {
    std::string_view word = body.substr(at + 11);
    word = word.substr(0, word.find_first_of(" \t,"));
    return to_count(word);
  }
  return std::nullopt;
}

bool contains_ci(std::string_view text, std::string_view needle) {
  return std::search(text.begin(), text.end(), needle.begin(), needle.end(), [](char a, char b) {
           return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
         }) != text.end();
}

std::optional<NcclFailureKind> failure_kind(std::string_view body) {
  if (body.find("Got completion from peer") != std::string_view::npos) return NcclFailureKind::ib_completion;
  if (contains_ci(body, "unhandled system error")) return NcclFailureKind::system_error;
  if (contains_ci(body, "remote process exited or there was a network error"))
    return NcclFailureKind::remote_error;
  // PyTorch's watchdog ("Watchdog caught collective operation timeout"), NCCL's own
  // ("... timeout", "Timed out") and the launcher's.
  if (contains_ci(body, "collective operation timeout") || contains_ci(body, "timed out") ||
      (body.find("NCCL") != std::string_view::npos && contains_ci(body, "timeout")))
    return NcclFailureKind::timeout;
  return std::nullopt;
}

}  // namespace

void LineReader::read_problems(std::string_view body, bool warn, int number) {
  if (warn) {
    if (log_.warnings.size() < kMaxLogWarnings)
      log_.warnings.push_back(line_at(body, number));
    else
      ++log_.warnings_dropped;
  }
  if (const auto kind = failure_kind(body); kind && log_.failures.size() < kMaxFailures) {
    NcclFailure failure{*kind, std::nullopt, line_at(body, number)};
    if (*kind == NcclFailureKind::ib_completion) failure.status = completion_status(body);
    log_.failures.push_back(std::move(failure));
  }
}

}  // namespace nccltune::nccl_info_detail
