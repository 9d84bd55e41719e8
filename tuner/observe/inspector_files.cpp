#include "observe/inspector_files.h"

#include <algorithm>
#include <fstream>
#include <memory>
#include <system_error>

namespace nccltune {

InspectorFiles find_inspector_files(const std::vector<std::string>& paths) {
  InspectorFiles found;
  for (const std::string& path : paths) {
    std::error_code error;
    if (std::filesystem::is_regular_file(path, error)) {
      found.files.emplace_back(path);
      continue;
    }
    if (!std::filesystem::is_directory(path, error)) {
      found.problems.push_back(path + ": no such directory");
      continue;
    }
    std::size_t before = found.files.size();
    std::filesystem::recursive_directory_iterator it(
        path, std::filesystem::directory_options::skip_permission_denied, error);
    for (; !error && it != std::filesystem::recursive_directory_iterator(); it.increment(error))
      if (it->is_regular_file(error) && is_inspector_file_name(it->path().filename().string()))
        found.files.push_back(it->path());
    if (error) found.problems.push_back(path + ": " + error.message());
    if (found.files.size() == before)
      found.problems.push_back(path + ": no Inspector records (no <hostname>-pid<pid>.log file under it)");
  }
  std::sort(found.files.begin(), found.files.end());
  found.files.erase(std::unique(found.files.begin(), found.files.end()), found.files.end());
  return found;
}

void read_inspector_files(const std::vector<std::filesystem::path>& files, ObserveAccumulator& accumulator) {
  struct OpenFile {
    std::string name;
    std::ifstream stream;
    std::uint64_t line = 0;
  };
  std::vector<std::unique_ptr<OpenFile>> open;
  for (const auto& path : files) {
    auto file = std::make_unique<OpenFile>();
    file->name = path.string();
    file->stream.open(path, std::ios::binary);
    if (!file->stream) {
      accumulator.add_problem(file->name + ": cannot be read");
      continue;
    }
    open.push_back(std::move(file));
  }
  std::string text;
  while (!open.empty()) {
    for (auto& file : open) {
      if (!std::getline(file->stream, text)) {
        file.reset();
        continue;
      }
      accumulator.add_line(file->name, ++file->line, text);
    }
    open.erase(std::remove(open.begin(), open.end(), nullptr), open.end());
  }
}

}  // namespace nccltune
