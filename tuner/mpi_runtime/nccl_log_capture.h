// NCCL's own account of a trial: the worker processes run NCCL with NCCL_DEBUG=INFO and the
// subsystems that say what it chose (INIT, ENV, NET, GRAPH, TUNING), writing to files in a
// private temporary directory of this rank (0700, never the user's NCCL_DEBUG_FILE), which
// collectives/nccl_info_log.h then reads. The directory goes away with the capture.
#pragma once

#include <filesystem>
#include <map>
#include <string>

#include "base/result.h"

namespace nccltune {

// The subsystems a capture asks NCCL for.
inline constexpr const char* kCaptureDebugSubsystems = "INIT,ENV,NET,GRAPH,TUNING";
// What a capture reads of one rank's files in all; beyond it the rest is cut with a note.
inline constexpr std::size_t kMaxCapturedLogBytes = std::size_t{8} << 20;

class NcclLogCapture {
 public:
  // A fresh directory under $TMPDIR (else /tmp).
  static Result<NcclLogCapture> create();

  NcclLogCapture(NcclLogCapture&& other) noexcept;
  NcclLogCapture& operator=(NcclLogCapture&& other) = delete;
  NcclLogCapture(const NcclLogCapture&) = delete;
  NcclLogCapture& operator=(const NcclLogCapture&) = delete;
  ~NcclLogCapture();  // removes the directory and what NCCL wrote there

  const std::filesystem::path& directory() const { return directory_; }

  // Sets NCCL_DEBUG, NCCL_DEBUG_SUBSYS and NCCL_DEBUG_FILE (one file per host and process) in a
  // trial's variables, replacing any the user set.
  void add_to(std::map<std::string, std::string>& env) const;

  // Every file NCCL wrote so far, in name order, each one's text after a "# file NAME" line; at
  // most kMaxCapturedLogBytes in all. Unreadable files are skipped with a note in the text.
  std::string read_all() const;

 private:
  explicit NcclLogCapture(std::filesystem::path directory) : directory_(std::move(directory)) {}
  std::filesystem::path directory_;
};

}  // namespace nccltune
