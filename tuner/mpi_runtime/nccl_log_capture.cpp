#include "mpi_runtime/nccl_log_capture.h"

#include <stdlib.h>

#include <algorithm>
#include <cstdlib>
#include <system_error>
#include <vector>

#include "base/atomic_file.h"

namespace nccltune {

namespace fs = std::filesystem;

Result<NcclLogCapture> NcclLogCapture::create() {
  const char* tmp = std::getenv("TMPDIR");
  const fs::path parent = tmp != nullptr && *tmp != '\0' ? fs::path(tmp) : fs::path("/tmp");
  std::string pattern = (parent / "nccltune-nccl-log-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr)
    return Error{parent.string() + ": cannot create a private directory for NCCL's log"};
  return NcclLogCapture(fs::path(pattern));
}

NcclLogCapture::NcclLogCapture(NcclLogCapture&& other) noexcept : directory_(std::move(other.directory_)) {
  other.directory_.clear();
}

NcclLogCapture::~NcclLogCapture() {
  if (directory_.empty()) return;
  std::error_code ignored;  // a directory that cannot be removed stays behind in $TMPDIR, nothing more
  fs::remove_all(directory_, ignored);
}

void NcclLogCapture::add_to(std::map<std::string, std::string>& env) const {
  env["NCCL_DEBUG"] = "INFO";
  env["NCCL_DEBUG_SUBSYS"] = kCaptureDebugSubsystems;
  env["NCCL_DEBUG_FILE"] = (directory_ / "nccl.%h.%p.log").string();
}

std::string NcclLogCapture::read_all() const {
  std::vector<fs::path> files;
  std::error_code error;
  for (fs::directory_iterator it(directory_, error), end; !error && it != end; it.increment(error))
    if (it->is_regular_file(error)) files.push_back(it->path());
  std::sort(files.begin(), files.end());
  std::string text;
  for (const fs::path& file : files) {
    const std::size_t left = kMaxCapturedLogBytes - std::min(text.size(), kMaxCapturedLogBytes);
    if (left == 0) {
      text += "# nccltune: NCCL's log is cut at " + std::to_string(kMaxCapturedLogBytes) + " bytes\n";
      break;
    }
    Result<std::string> content = read_text_file(file, kMaxLogBytes);
    if (!content) {
      text += "# nccltune: " + content.error() + "\n";
      continue;
    }
    text += "# file " + file.filename().string() + "\n";
    text += content->substr(0, left);
    if (!text.empty() && text.back() != '\n') text += '\n';
  }
  return text;
}

}  // namespace nccltune
