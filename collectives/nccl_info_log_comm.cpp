// What NCCL says of itself and its communicator: the version, the comm and init lines (ranks,
// nodes), the channel counts, NVLS and multi-node NVLink (collectives/nccl_info_mnnvl.h).
#include "collectives/nccl_info_log_lines.h"

#include <cctype>
#include <limits>
#include <tuple>

#include "base/text_words.h"
#include "collectives/nccl_info_mnnvl.h"

namespace nccltune::nccl_info_detail {

void LineReader::read_version(std::string_view body) {
  // "NCCL version 2.21.5+cuda12.4" (and before 2.19 sometimes without "+cudaX").
  const auto words = split_words(body.substr(body.find("NCCL version ") + 13));
  if (words.empty()) return;
  std::string_view version = words[0];
  std::optional<std::string> cuda;
  if (const size_t plus = version.find("+cuda"); plus != std::string_view::npos) {
    cuda = std::string(version.substr(plus + 5));
    version = version.substr(0, plus);
  }
  if (version.empty() || !std::isdigit(static_cast<unsigned char>(version[0]))) return;
  if (!log_.nccl_version) log_.nccl_version = std::string(version);
  if (!log_.cuda_version && cuda && !cuda->empty()) log_.cuda_version = cuda;
}

void LineReader::read_comm(const std::vector<std::string_view>& words) {
  const auto ranks =
      count_after(words, "nRanks") ? count_after(words, "nRanks") : count_after(words, "nranks");
  keep_max(log_.ranks, ranks);
  if (ProcessState* state = process(); state && ranks) state->ranks = ranks;
  keep_max(log_.nodes, count_after(words, "nNodes"));
  keep_max(log_.local_ranks, count_after(words, "localRanks"));
  if (const auto mnnvl = count_after(words, "MNNVL"))
    log_.mnnvl = log_.mnnvl.value_or(false) || *mnnvl != 0;
}

void LineReader::read_channels(const std::vector<std::string_view>& words) {
  keep_max(log_.coll_channels, to_count(words[0]));
  for (size_t i = 3; i + 2 < words.size(); ++i) {
    if (words[i + 2] != "channels," && words[i + 2] != "channels") continue;
    if (words[i + 1] == "collnet") keep_max(log_.collnet_channels, to_count(words[i]));
    if (words[i + 1] == "nvls") keep_max(log_.nvls_channels, to_count(words[i]));
  }
}

void LineReader::read_nvls_support(std::string_view body) {
  const bool available = body.starts_with("NVLS multicast support is available");
  log_.nvls_available = log_.nvls_available.value_or(true) && available;
}

void LineReader::read_nvls(const std::vector<std::string_view>& words) {
  keep_max(log_.nvls_channels, count_after(words, "nvlsChannels"));
  if (words.size() >= 2 && words[1] == "tuning:")
    keep_max(log_.nvls_channels, count_after(words, "nChannels"));
}

void LineReader::read_mnnvl(std::string_view body, int number) {
  if (const auto fabric = parse_mnnvl_fabric_line(body)) {
    add_fabric({fabric->fabric_uuid, fabric->clique_id, fabric->state, fabric->health_mask, 1,
                line_at(body, number)});
    return;
  }
  if (const auto clique = parse_mnnvl_clique_line(body)) {
    log_.mnnvl = log_.mnnvl.value_or(false) || clique->enabled;
    keep_max(log_.mnnvl_clique_size, clique->clique_size);
    keep_max(log_.mnnvl_nvl_domain_size, clique->nvl_domain_size);
    if (index_.clique_ranks.size() < kMaxCliqueRanks) index_.clique_ranks.insert(clique->clique_rank);
    return;
  }
  // "MNNVL 1 ..." in a shape this reader does not know still says what NCCL decided.
  const auto words = split_words(body);
  if (words.size() >= 2 && words[1] != "busId")
    if (const auto mnnvl = to_count(words[1])) log_.mnnvl = log_.mnnvl.value_or(false) || *mnnvl != 0;
}

void LineReader::add_fabric(const NcclMnnvlFabric& fabric) {
  const auto key = std::tuple{fabric.fabric_uuid, fabric.clique_id, fabric.state, fabric.health_mask};
  if (const auto at = index_.fabric_at.find(key); at != index_.fabric_at.end()) {
    NcclMnnvlFabric& known = log_.mnnvl_fabrics[at->second];
    known.lines = known.lines > std::numeric_limits<int>::max() - fabric.lines
                      ? std::numeric_limits<int>::max()
                      : known.lines + fabric.lines;
    return;
  }
  if (log_.mnnvl_fabrics.size() >= kMaxFabrics) return;
  index_.fabric_at.emplace(key, log_.mnnvl_fabrics.size());
  log_.mnnvl_fabrics.push_back(fabric);
}

}  // namespace nccltune::nccl_info_detail

namespace nccltune {

std::optional<bool> nvls_enabled(const NcclInfoLog& log) {
  // The tuning table holds the bandwidths NCCL chooses by: a pair it disabled (NCCL_ALGO, the
  // hardware, a multi-node communicator without CollNet) has bandwidth 0.
  std::optional<bool> in_table;
  for (const NcclModelTable& table : log.model_tables)
    for (const NcclModelCell& cell : table.cells)
      if (cell.algo == "NVLS" || cell.algo == "NVLS_TREE") in_table = in_table.value_or(false) || cell.algbw > 0;
  if (in_table) return in_table;
  if (log.nvls_in_enabled_matrix) return log.nvls_in_enabled_matrix;
  // NCCL_ALGO as a plain list ("Ring", "ring,tree"): NCCL enables what it names, nothing else. A
  // list with '^' (exclusions) or per-function entries ("allreduce:tree") is left to the lines above.
  const auto algo = log.env.find("NCCL_ALGO");
  if (algo == log.env.end() || algo->second.empty() ||
      algo->second.find_first_of("^:") != std::string::npos)
    return std::nullopt;
  std::string value;
  for (const char c : algo->second) value += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (char& c : value)
    if (c == ',') c = ' ';
  for (const std::string_view entry : split_words(value))
    if (entry == "nvls" || entry == "nvlstree") return true;
  return false;
}

}  // namespace nccltune
