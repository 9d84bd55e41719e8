// read_hwloc_xml: the parent's side of loading an untrusted hwloc XML in the nccltune-hwloc-xml
// helper (tuner/hwloc_reader/main.cpp), so that a crash inside libhwloc ends the helper, not the caller.
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "base/child_process.h"
#include "topology/sources/hwloc_source.h"
#include "topology/sources/pci_inventory_json.h"

extern char** environ;

namespace nccltune {
namespace {

// The XML import of a 16 MiB file takes well under a second; a helper still busy after this is
// looping on a hostile input.
constexpr std::chrono::seconds kHelperTimeout{30};
constexpr std::size_t kMaxHelperOutput = std::size_t{64} << 20;

// NCCLTUNE_HWLOC_READER when set (the build tree's tests), else the helper beside the running
// binary (the build tree), else in libexec/nccltune/ of the prefix the binary is installed in
// (bin/ and sbin/ alike, whatever prefix `cmake --install` was given), else where the configured
// prefix puts it.
std::string helper_path() {
  if (const char* named = std::getenv("NCCLTUNE_HWLOC_READER"); named && *named) return named;
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    for (const std::filesystem::path& candidate :
         {self.parent_path() / "nccltune-hwloc-xml",
          self.parent_path().parent_path() / "libexec/nccltune/nccltune-hwloc-xml"}) {
      if (::access(candidate.c_str(), X_OK) == 0) return candidate.string();
    }
  }
  return NCCLTUNE_HWLOC_READER_INSTALLED;
}

}  // namespace

Result<PciInventory> read_hwloc_xml(const std::filesystem::path& xml) {
  const std::string helper = helper_path();
  CommandOptions options;
  options.timeout = kHelperTimeout;
  options.max_output = kMaxHelperOutput;
  const Result<CommandOutput> run = run_command({helper, xml.string()}, environ, options);
  if (!run) return Error{xml.string() + ": cannot start " + helper + " to read it: " + run.error()};
  if (run->timed_out)
    return Error{xml.string() + ": hwloc did not finish reading it within " +
                 std::to_string(kHelperTimeout.count()) + " s; it is damaged or not an hwloc XML export"};
  if (run->exit.signaled)
    return Error{xml.string() + ": hwloc crashed reading it (" + run->exit.describe() +
                 "); it is damaged or not an hwloc XML export"};
  const nlohmann::json answer = nlohmann::json::parse(run->out, nullptr, /*allow_exceptions=*/false);
  if (answer.is_object() && answer.contains("error") && answer["error"].is_string())
    return Error{answer["error"].get<std::string>()};
  if (!run->exit.exited_cleanly() || !answer.is_object() || !answer.contains("inventory"))
    return Error{xml.string() + ": " + helper + " " + run->exit.describe() + " without an answer"};
  Result<PciInventory> inventory = pci_inventory_from_json(answer["inventory"]);
  if (!inventory) return Error{xml.string() + ": " + inventory.error()};
  return inventory;
}

}  // namespace nccltune
