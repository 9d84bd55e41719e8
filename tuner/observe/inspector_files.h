// Finding and reading Inspector's files. A job's files are read side by side, one line from each
// in turn, so that every rank's record of one collective arrives close together and the match
// window (observed_job.h) stays small; each file is read as a stream, never whole.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "observe/observed_job.h"

namespace nccltune {

struct InspectorFiles {
  std::vector<std::filesystem::path> files;       // JSON records, sorted
  std::vector<std::filesystem::path> prom_files;  // Prometheus textfiles, sorted
  std::vector<std::string> problems;              // "DIR: no Inspector records (...)"
};

// The Inspector files under each directory, recursively: JSON records (<hostname>-pid<pid>.log)
// and Prometheus textfiles (nccl_inspector_metrics_<UUID>.prom); a path that is a file is taken
// as one whatever its name (a textfile when it ends in .prom). A directory without any, or a path
// that does not exist, is a problem line; the others are still listed.
InspectorFiles find_inspector_files(const std::vector<std::string>& paths);

// Reads `files` into `accumulator`, a line of each in turn. A file that cannot be opened is a
// problem line.
void read_inspector_files(const std::vector<std::filesystem::path>& files, ObserveAccumulator& accumulator);

// Inspector's textfile holds a GPU's communicators, two lines each per collective, size range and
// algorithm: tens of KB. A file past this is not one (nccltuned reads a directory every job can
// write) and is a problem line, unread.
inline constexpr std::uintmax_t kMaxInspectorPromFileBytes = 16 << 20;

// Reads Inspector's Prometheus textfiles into `accumulator`, one file after the other. A line
// longer than kMaxInspectorPromLine is skipped, and a last line without its newline (Inspector
// rewrites the file in place: a read during the rewrite ends in a line cut short) is a problem
// line, not a sample: its value may be cut too.
void read_inspector_prom_files(const std::vector<std::filesystem::path>& files,
                               ObserveAccumulator& accumulator);

}  // namespace nccltune
