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

// "timeout" as a word of its own: not a part of a variable's name (NCCL_IB_TIMEOUT) nor a setting
// ("timeout=600", "timeout 22").
bool has_timeout_word(std::string_view text) {
  for (size_t at = 0; at + 7 <= text.size(); ++at) {
    if (!contains_ci(text.substr(at, 7), "timeout")) continue;
    const char before = at > 0 ? text[at - 1] : ' ';
    const char after = at + 7 < text.size() ? text[at + 7] : ' ';
    const bool in_name = std::isalnum(static_cast<unsigned char>(before)) || before == '_' ||
                         std::isalnum(static_cast<unsigned char>(after)) || after == '_' || after == '=';
    if (!in_name) return true;
  }
  return false;
}

// A timeout as NCCL and the programs around it report one, never a variable or a configured value
// ("NCCL_IB_TIMEOUT set by environment to 21.", "using timeout=600"):
//  - PyTorch's watchdog: "Watchdog caught collective operation timeout: WorkNCCL(...) ran for ... before timing out";
//  - a socket's ETIMEDOUT as strerror prints it, "Connection timed out", and alike "timed out";
//  - nccl-tests' -T: "Test timeout (%ds) %s:%d" (src/common.cu);
//  - NCCL's RAS ("RAS collective ... timeout error", "RAS send stuck timeout error") and 2.30's IB
//    resiliency ("NET/IB: ...: Alive message sequence timeout", "ACK message timeout");
//  - a WARN line with "timeout" as a word (ncclGetErrorString(ncclTimeout) is "timeout").
bool is_timeout(std::string_view body, bool warn) {
  if (contains_ci(body, "collective operation timeout") || contains_ci(body, "timed out") ||
      contains_ci(body, "Test timeout (") || contains_ci(body, "timeout error") ||
      contains_ci(body, "message sequence timeout") || contains_ci(body, "ACK message timeout"))
    return true;
  return warn && has_timeout_word(body);
}

std::optional<NcclFailureKind> failure_kind(std::string_view body, bool warn) {
  if (body.find("Got completion from peer") != std::string_view::npos) return NcclFailureKind::ib_completion;
  if (contains_ci(body, "unhandled system error")) return NcclFailureKind::system_error;
  if (contains_ci(body, "remote process exited or there was a network error"))
    return NcclFailureKind::remote_error;
  if (is_timeout(body, warn)) return NcclFailureKind::timeout;
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
  if (const auto kind = failure_kind(body, warn); kind && log_.failures.size() < kMaxFailures) {
    NcclFailure failure{*kind, std::nullopt, line_at(body, number)};
    if (*kind == NcclFailureKind::ib_completion) failure.status = completion_status(body);
    log_.failures.push_back(std::move(failure));
  }
}

}  // namespace nccltune::nccl_info_detail
