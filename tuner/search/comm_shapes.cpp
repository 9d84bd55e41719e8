#include "search/comm_shapes.h"

#include <algorithm>
#include <array>

namespace nccltune {

namespace {

constexpr std::array<std::string_view, 3> kComms{"world", "rail", "node"};

bool names_comm(const std::vector<std::string>& names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace

Result<std::vector<std::string>> parse_comms(std::string_view list) {
  std::vector<std::string> named;
  for (std::size_t start = 0; start <= list.size();) {
    const std::size_t comma = std::min(list.find(',', start), list.size());
    const std::string_view name = list.substr(start, comma - start);
    if (std::find(kComms.begin(), kComms.end(), name) == kComms.end())
      return Error{"--comms: '" + std::string(name) + "' is not a communicator shape (world, rail, node)"};
    if (names_comm(named, name)) return Error{"--comms: " + std::string(name) + " is named twice"};
    named.emplace_back(name);
    start = comma + 1;
  }
  if (!names_comm(named, kWorldComm)) return Error{"--comms: the world is always measured: add world"};
  std::vector<std::string> ordered;
  for (const std::string_view comm : kComms)
    if (names_comm(named, comm)) ordered.emplace_back(comm);
  return ordered;
}

std::string shaped_collective(std::string_view collective, std::string_view comm) {
  if (comm.empty() || comm == kWorldComm) return std::string(collective);
  return std::string(collective) + "@" + std::string(comm);
}

std::string base_collective(std::string_view name) {
  return std::string(name.substr(0, name.find('@')));
}

std::string collective_comm(std::string_view name) {
  const std::size_t at = name.find('@');
  return at == std::string_view::npos ? std::string(kWorldComm) : std::string(name.substr(at + 1));
}

std::vector<std::string> shaped_collectives(const std::vector<std::string>& collectives,
                                            const std::vector<std::string>& comms) {
  std::vector<std::string> names;
  for (const std::string& comm : comms)
    for (const std::string& collective : collectives) names.push_back(shaped_collective(collective, comm));
  return names;
}

std::vector<std::string> base_collectives(const std::vector<std::string>& names) {
  std::vector<std::string> plain;
  for (const std::string& name : names)
    if (std::string base = base_collective(name); !names_comm(plain, base)) plain.push_back(std::move(base));
  return plain;
}

TrialRequest unshaped_request(const TrialRequest& shaped) {
  TrialRequest plain = shaped;
  plain.collectives = base_collectives(shaped.collectives);
  std::vector<std::string> asked;
  for (const std::string& name : shaped.collectives) asked.push_back(collective_comm(name));
  plain.comms.clear();
  for (const std::string_view comm : kComms)
    if (names_comm(asked, comm)) plain.comms.emplace_back(comm);
  return plain;
}

TrialMeasurement shaped_measurement(const TrialMeasurement& m, const TrialRequest& shaped) {
  TrialMeasurement out = without_points(m);
  for (std::size_t i = 0; i < m.ops.size(); ++i) {
    std::string name = shaped_collective(m.ops[i], i < m.comms.size() ? m.comms[i] : std::string(kWorldComm));
    if (!names_comm(shaped.collectives, name)) continue;
    copy_point(m, i, out);
    out.ops.back() = std::move(name);
    if (i < m.unavailable.size()) out.unavailable.push_back(m.unavailable[i]);
  }
  return out;
}

TrialExecutor shaped_executor(TrialExecutor execute) {
  return [execute = std::move(execute)](const TrialRequest& shaped) {
    return shaped_measurement(execute(unshaped_request(shaped)), shaped);
  };
}

}  // namespace nccltune
