// Finding and reading Inspector's files. A job's files are read side by side, one line from each
// in turn, so that every rank's record of one collective arrives close together and the match
// window (observed_job.h) stays small; each file is read as a stream, never whole.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "observe/observed_job.h"

namespace nccltune {

struct InspectorFiles {
  std::vector<std::filesystem::path> files;  // sorted
  std::vector<std::string> problems;         // "DIR: no Inspector files (<host>-pid<pid>.log)"
};

// The Inspector files (<hostname>-pid<pid>.log) under each directory, recursively; a path that
// is a file is taken as one whatever its name. A directory without any, or a path that does not
// exist, is a problem line; the others are still listed.
InspectorFiles find_inspector_files(const std::vector<std::string>& paths);

// Reads `files` into `accumulator`, a line of each in turn. A file that cannot be opened is a
// problem line.
void read_inspector_files(const std::vector<std::filesystem::path>& files, ObserveAccumulator& accumulator);

}  // namespace nccltune
