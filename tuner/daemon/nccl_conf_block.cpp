#include "daemon/nccl_conf_block.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <vector>

#include "base/atomic_file.h"

namespace nccltune {

namespace {

// The marker a line is, by its text without trailing blanks; the marker's own words may follow
// the fixed prefix, so a later wording still finds an earlier block.
bool starts_marker(std::string_view line, std::string_view marker_prefix) {
  while (!line.empty() &&
         (line.back() == '\n' || line.back() == '\r' || line.back() == ' ' || line.back() == '\t'))
    line.remove_suffix(1);
  return line.substr(0, marker_prefix.size()) == marker_prefix &&
         (line.size() == marker_prefix.size() || line[marker_prefix.size()] == ' ');
}

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    const auto end = text.find('\n');
    const auto length = end == std::string_view::npos ? text.size() : end + 1;
    lines.push_back(text.substr(0, length));
    text.remove_prefix(length);
  }
  return lines;
}

}  // namespace

Result<std::string> update_nccl_conf_block(std::string_view existing, std::string_view body,
                                           std::string_view origin) {
  const std::string where(origin);
  const std::vector<std::string_view> lines = split_lines(existing);
  std::optional<std::size_t> begin, end;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string line_no = std::to_string(i + 1);
    if (starts_marker(lines[i], "# BEGIN nccltuned")) {
      if (begin)
        return Error{where + ":" + line_no + ": a second '# BEGIN nccltuned' marker; fix the file by hand"};
      begin = i;
    } else if (starts_marker(lines[i], "# END nccltuned")) {
      if (!begin || end)
        return Error{where + ":" + line_no +
                     ": '# END nccltuned' without its BEGIN marker; fix the file by hand"};
      end = i;
    }
  }
  if (begin && !end)
    return Error{where + ":" + std::to_string(*begin + 1) +
                 ": '# BEGIN nccltuned' without its END marker; fix the file by hand"};

  std::string block;
  if (!body.empty()) {
    block = std::string(kNcclConfBegin) + "\n" + std::string(body);
    if (block.back() != '\n') block += '\n';
    block += std::string(kNcclConfEnd) + "\n";
  }
  std::string out;
  if (!begin) {
    out = std::string(existing);
    if (!out.empty() && out.back() != '\n' && !block.empty()) out += '\n';
    return out + block;
  }
  for (std::size_t i = 0; i < *begin; ++i) out += lines[i];
  out += block;
  for (std::size_t i = *end + 1; i < lines.size(); ++i) out += lines[i];
  return out;
}

std::string nccl_conf_symlink_refused(const std::filesystem::path& file) {
  return file.string() +
         ": is a symbolic link; nccltuned manages a regular file only (point daemon.nccl_conf.path at the "
         "file itself)";
}

Status write_nccl_conf(const std::filesystem::path& file, std::string_view content) {
  const std::string name = file.string();
  struct stat was {};
  const bool exists = ::lstat(file.c_str(), &was) == 0;
  if (!exists && errno != ENOENT) return Error{name + ": cannot stat: " + std::strerror(errno)};
  if (exists && S_ISLNK(was.st_mode)) return Error{nccl_conf_symlink_refused(file)};
  if (exists && !S_ISREG(was.st_mode)) return Error{name + ": not a regular file"};
  FileAttributes keep;  // the admin's mode and owner, on a file that was there
  if (exists) keep = {was.st_mode & 07777, was.st_uid, was.st_gid};
  return write_file_atomically(file, content, keep);
}

}  // namespace nccltune
