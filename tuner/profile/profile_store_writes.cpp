// Writing a profile into the store: its path, the directories (mode 0755 whatever the umask) and
// the atomic write of a profile that reads back.
#include "profile/profile.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <system_error>

#include "base/atomic_file.h"
#include "base/printable_text.h"

namespace nccltune {

std::string profile_file_name(const ProfileShape& shape) {
  return std::to_string(shape.nodes) + "n" + (shape.mnnvl ? std::to_string(shape.host_count()) + "h" : "") +
         ".yaml";
}

std::filesystem::path profile_path(const std::filesystem::path& out_dir, const ProfileShape& shape) {
  return out_dir / shape.node_type_key / profile_file_name(shape);
}

Status write_profile(const std::filesystem::path& out_dir, const Profile& profile,
                     std::filesystem::path* written) {
  const std::string text = profile_to_yaml(profile);
  Result<Profile> check = parse_profile(text, "profile " + printable_excerpt(profile.shape.node_type_key, 40));
  if (!check) return Error{"refusing to write a profile that would not read back: " + check.error()};
  const std::filesystem::path path = profile_path(out_dir, profile.shape);
  if (const Status made = make_store_directories(path.parent_path()); !made) return made;
  if (const Status stored = write_file_atomically(path, text, FileAttributes{0644}); !stored) return stored;
  if (written) *written = path;
  return Ok{};
}

Status make_store_directories(const std::filesystem::path& directory) {
  std::vector<std::filesystem::path> missing;
  std::error_code error;
  for (std::filesystem::path at = directory; !at.empty() && !std::filesystem::exists(at, error);
       at = at.parent_path()) {
    missing.push_back(at);
    if (at == at.parent_path()) break;
  }
  for (auto at = missing.rbegin(); at != missing.rend(); ++at) {
    if (::mkdir(at->c_str(), 0755) != 0 && errno != EEXIST)
      return Error{at->string() + ": cannot create the directory: " + std::strerror(errno)};
    // The mode env trusts, whatever this process's umask (002 makes 0775, which it refuses).
    if (::chmod(at->c_str(), 0755) != 0)
      return Error{at->string() + ": cannot make it mode 0755: " + std::strerror(errno)};
  }
  return Ok{};
}

}  // namespace nccltune
