#include "search/collective_selection.h"

#include <algorithm>

#include "base/collective_names.h"

namespace nccltune {

namespace {

bool is_tunable(std::string_view name) {
  const CollectiveName* row = find_collective_name(name);
  return row && row->tuned;
}

bool contains(const std::vector<std::string>& names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// A comma list of tunable collectives, each once.
Result<std::vector<std::string>> collective_list(std::string_view text, const char* flag) {
  std::vector<std::string> names;
  for (std::size_t start = 0; start <= text.size();) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string name(text.substr(start, comma - start));
    start = comma + 1;
    if (!is_tunable(name))
      return Error{std::string(flag) + ": '" + name + "' is not a collective tune measures (" +
                   std::string(kTunableCollectives) + ")"};
    if (contains(names, name)) return Error{std::string(flag) + ": " + name + " is named twice"};
    names.push_back(name);
  }
  return names;
}

}  // namespace

Result<CollectiveSelection> select_collectives(std::string_view ops, std::string_view guard) {
  CollectiveSelection selection;
  Result<std::vector<std::string>> tuned = collective_list(ops, "--ops");
  if (!tuned) return Error{tuned.error()};
  selection.tuned = std::move(*tuned);
  if (guard.empty()) {
    if (!contains(selection.tuned, "alltoall")) selection.guards = {"alltoall"};
    return selection;
  }
  if (guard == "none") return selection;
  Result<std::vector<std::string>> guards = collective_list(guard, "--guard");
  if (!guards) return Error{guards.error()};
  for (const std::string& name : *guards)
    if (contains(selection.tuned, name))
      return Error{"--guard: " + name + " is tuned (--ops); a collective is tuned or guarded, not both"};
  selection.guards = std::move(*guards);
  return selection;
}

}  // namespace nccltune
