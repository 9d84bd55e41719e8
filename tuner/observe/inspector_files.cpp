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
      (std::filesystem::path(path).extension() == ".prom" ? found.prom_files : found.files)
          .emplace_back(path);
      continue;
    }
    if (!std::filesystem::is_directory(path, error)) {
      found.problems.push_back(path + ": no such directory");
      continue;
    }
    const std::size_t before = found.files.size() + found.prom_files.size();
    std::filesystem::recursive_directory_iterator it(
        path, std::filesystem::directory_options::skip_permission_denied, error);
    for (; !error && it != std::filesystem::recursive_directory_iterator(); it.increment(error))
      if (it->is_regular_file(error)) {
        const std::string name = it->path().filename().string();
        if (is_inspector_file_name(name)) found.files.push_back(it->path());
        if (is_inspector_prom_file_name(name)) found.prom_files.push_back(it->path());
      }
    if (error) found.problems.push_back(path + ": " + error.message());
    if (found.files.size() + found.prom_files.size() == before)
      found.problems.push_back(path +
                               ": no Inspector records (no <hostname>-pid<pid>.log or "
                               "nccl_inspector_metrics_<UUID>.prom file under it)");
  }
  for (auto* list : {&found.files, &found.prom_files}) {
    std::sort(list->begin(), list->end());
    list->erase(std::unique(list->begin(), list->end()), list->end());
  }
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

namespace nccltune {

void read_inspector_prom_files(const std::vector<std::filesystem::path>& files,
                               ObserveAccumulator& accumulator) {
  for (const auto& path : files) {
    const std::string name = path.string();
    std::error_code size_error;
    if (const std::uintmax_t size = std::filesystem::file_size(path, size_error);
        !size_error && size > kMaxInspectorPromFileBytes) {
      accumulator.add_problem(name + ": " + std::to_string(size) +
                              " bytes, more than an Inspector textfile's " +
                              std::to_string(kMaxInspectorPromFileBytes) + "; not read");
      continue;
    }
    std::ifstream stream(path, std::ios::binary);
    if (!stream) {
      accumulator.add_problem(name + ": cannot be read");
      continue;
    }
    std::streambuf& in = *stream.rdbuf();
    std::string text;
    std::uint64_t line = 0;
    bool too_long = false;
    for (int c = in.sbumpc();; c = in.sbumpc()) {
      if (c == std::char_traits<char>::eof()) {
        if (!text.empty() || too_long)
          accumulator.add_problem_at(name, line + 1,
                                     "the last line has no newline (cut short while Inspector rewrote "
                                     "the file?); skipped");
        break;
      }
      if (c != '\n') {
        if (text.size() < kMaxInspectorPromLine)
          text += char(c);
        else
          too_long = true;
        continue;
      }
      ++line;
      if (too_long)
        accumulator.add_problem_at(
            name, line, "a line longer than " + std::to_string(kMaxInspectorPromLine) + " bytes; skipped");
      else
        accumulator.add_prom_line(name, line, text);
      text.clear();
      too_long = false;
    }
  }
}

}  // namespace nccltune
