#include "profile/nccl_names.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <set>
#include <vector>

namespace nccltune {

namespace {

constexpr std::array<std::string_view, 5> kGdrLevelNames = {"LOC", "PIX", "PXB", "PHB", "SYS"};
// Variables NCCL reads as 0/1 besides every NCCL_*_DISABLE.
constexpr std::array<std::string_view, 6> kBooleanKnobs = {"NCCL_NET_GDR_READ",       "NCCL_COLLNET_ENABLE",
                                                           "NCCL_NET_SHARED_BUFFERS", "NCCL_CUMEM_ENABLE",
                                                           "NCCL_IB_ADAPTIVE_ROUTING", "NCCL_IB_SPLIT_DATA_ON_QPS"};
// NCCL_CTA_POLICY's names (src/init.cc, 2.29.2; before it only the numbers 0, 1 and 2).
constexpr std::array<std::string_view, 3> kCtaPolicyNames = {"DEFAULT", "EFFICIENCY", "ZERO"};

template <std::size_t N>
std::optional<int> index_ignoring_case(std::string_view text, const std::array<std::string_view, N>& names) {
  for (std::size_t i = 0; i < N; ++i)
    if (same_text_ignoring_case(text, names[i])) return static_cast<int>(i);
  return std::nullopt;
}

template <std::size_t N>
std::string join_names(const std::array<std::string_view, N>& names) {
  std::string out;
  for (std::string_view name : names) out += (out.empty() ? "" : ", ") + std::string(name);
  return out;
}

std::optional<long long> parse_integer(std::string_view text) {
  if (text.empty() || text.size() > 18) return std::nullopt;
  if (!std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  long long value = 0;
  std::from_chars(text.data(), text.data() + text.size(), value);
  return value;
}

// "Ring,Tree" or "^NVLS,PAT": a list of names from `names`, optionally excluded.
template <std::size_t N>
std::optional<std::string> name_list_problem(std::string_view name, std::string_view value,
                                             const std::array<std::string_view, N>& names) {
  std::string_view list = value;
  if (!list.empty() && list.front() == '^') list.remove_prefix(1);
  std::set<int> seen;
  while (true) {
    const std::size_t comma = list.find(',');
    const std::string_view item = list.substr(0, comma);
    const std::optional<int> index = index_ignoring_case(item, names);
    if (!index)
      return "'" + std::string(value) + "' is not a valid " + std::string(name) + " value (a list of " +
             join_names(names) + ", optionally after ^)";
    if (!seen.insert(*index).second)
      return "'" + std::string(value) + "' names '" + std::string(item) + "' twice";
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return std::nullopt;
}

std::optional<std::string> integer_range_problem(std::string_view name, std::string_view value, long long min,
                                                 long long max) {
  const std::optional<long long> number = parse_integer(value);
  if (!number || *number < min || *number > max)
    return "'" + std::string(value) + "' is not a valid " + std::string(name) + " value (an integer from " +
           std::to_string(min) + " to " + std::to_string(max) + ")";
  return std::nullopt;
}

}  // namespace

std::optional<int> nccl_algorithm_index(std::string_view name) {
  return index_ignoring_case(name, kNcclAlgorithms);
}

std::optional<int> nccl_protocol_index(std::string_view name) {
  return index_ignoring_case(name, kNcclProtocols);
}

std::string_view nccl_algorithm_name(int index) {
  return index >= 0 && static_cast<std::size_t>(index) < kNcclAlgorithms.size()
             ? kNcclAlgorithms[static_cast<std::size_t>(index)]
             : "?";
}

std::string_view nccl_protocol_name(int index) {
  return index >= 0 && static_cast<std::size_t>(index) < kNcclProtocols.size()
             ? kNcclProtocols[static_cast<std::size_t>(index)]
             : "?";
}

namespace {

// nccl-tests' name, NCCL's function name in scoped env values, and in its log.
struct CollectiveNames {
  std::string_view tests, function, log;
};
constexpr std::array<CollectiveNames, 5> kCollectiveNameTable = {{
    {"all_reduce", "allreduce", "AllReduce"},
    {"all_gather", "allgather", "AllGather"},
    {"reduce_scatter", "reducescatter", "ReduceScatter"},
    {"broadcast", "broadcast", "Broadcast"},
    {"reduce", "reduce", "Reduce"},
}};

const CollectiveNames* collective_names_of(std::string_view collective) {
  for (const CollectiveNames& names : kCollectiveNameTable)
    if (names.tests == collective) return &names;
  return nullptr;
}

}  // namespace

std::optional<std::string_view> nccl_function_name(std::string_view collective) {
  const CollectiveNames* names = collective_names_of(collective);
  return names ? std::optional<std::string_view>(names->function) : std::nullopt;
}

std::optional<std::string_view> nccl_log_op_name(std::string_view collective) {
  const CollectiveNames* names = collective_names_of(collective);
  return names ? std::optional<std::string_view>(names->log) : std::nullopt;
}

std::vector<NcclListEntry> nccl_list_entries(std::string_view value) {
  std::vector<NcclListEntry> entries;
  for (std::size_t start = 0; start <= value.size();) {
    const std::size_t semicolon = std::min(value.find(';', start), value.size());
    const std::string_view entry = value.substr(start, semicolon - start);
    start = semicolon + 1;
    const std::size_t colon = entry.find(':');
    if (colon == std::string_view::npos)
      entries.push_back({std::nullopt, entry});
    else
      entries.push_back({entry.substr(0, colon), entry.substr(colon + 1)});
  }
  return entries;
}

bool is_nccl_function_name(std::string_view name) {
  return std::any_of(
      kCollectiveNameTable.begin(), kCollectiveNameTable.end(),
      [&](const CollectiveNames& names) { return same_text_ignoring_case(name, names.function); });
}

std::optional<std::string> nccl_list_for(std::string_view value, std::string_view collective) {
  const std::optional<std::string_view> function = nccl_function_name(collective);
  std::optional<std::string> fallback;
  for (const NcclListEntry& entry : nccl_list_entries(value)) {
    if (!entry.function)
      fallback = std::string(entry.list);
    else if (function && same_text_ignoring_case(*entry.function, *function))
      return std::string(entry.list);
  }
  return fallback;
}

bool nccl_list_allows(std::string_view value, std::string_view name, std::string_view collective) {
  if (value.find_first_of(";:") != std::string_view::npos) {
    const std::optional<std::string> list = nccl_list_for(value, collective);
    return !list || nccl_list_allows(*list, name, collective);
  }
  std::string_view list = value;
  const bool excluded = !list.empty() && list.front() == '^';
  if (excluded) list.remove_prefix(1);
  bool listed = false;
  for (std::size_t start = 0; start <= list.size();) {
    const std::size_t comma = std::min(list.find(',', start), list.size());
    listed |= same_text_ignoring_case(list.substr(start, comma - start), name);
    start = comma + 1;
  }
  return listed != excluded;
}

std::string nccl_name_from_log(std::string_view logged) {
  std::string name(logged);
  name.erase(std::remove(name.begin(), name.end(), '_'), name.end());
  return name;
}

bool nccl_runs_pair(std::string_view algo, std::string_view proto) {
  return same_text_ignoring_case(algo, "Tree") || same_text_ignoring_case(algo, "Ring") ||
         same_text_ignoring_case(proto, "Simple");
}

bool nccl_runs_pair_for(std::string_view collective, std::string_view algo, std::string_view proto) {
  if (collective == "alltoall") return true;
  if (!nccl_runs_pair(algo, proto)) return false;
  const auto is = [&](std::string_view name) { return same_text_ignoring_case(algo, name); };
  if (collective == "broadcast" || collective == "reduce") return is("Ring");
  if (collective == "all_gather" || collective == "reduce_scatter")
    return is("Ring") || is("PAT") || is("NVLS") || is("CollNetDirect");
  return !is("PAT");
}

bool same_text_ignoring_case(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

bool is_case_insensitive_knob(std::string_view name) {
  return name == "NCCL_ALGO" || name == "NCCL_PROTO" || name == "NCCL_NET_GDR_LEVEL";
}

std::optional<std::string> knob_value_problem(std::string_view name, std::string_view value) {
  if (name == "NCCL_ALGO") return name_list_problem(name, value, kNcclAlgorithms);
  if (name == "NCCL_PROTO") return name_list_problem(name, value, kNcclProtocols);
  if (name.ends_with("_NCHANNELS")) return integer_range_problem(name, value, 1, 64);
  if (name == "NCCL_NET_GDR_LEVEL") {
    if (index_ignoring_case(value, kGdrLevelNames) ||
        (value.size() == 1 && value[0] >= '0' && value[0] <= '5'))
      return std::nullopt;
    return "'" + std::string(value) + "' is not a valid NCCL_NET_GDR_LEVEL value (" +
           join_names(kGdrLevelNames) + " or 0-5)";
  }
  if (name == "NCCL_BUFFSIZE") return integer_range_problem(name, value, 1, 1LL << 40);
  if (name == "NCCL_NTHREADS") {
    if (value == "64" || value == "128" || value == "256" || value == "512") return std::nullopt;
    return "'" + std::string(value) + "' is not a valid NCCL_NTHREADS value (64, 128, 256 or 512)";
  }
  if (name == "NCCL_IB_QPS_PER_CONNECTION") return integer_range_problem(name, value, 1, 128);
  // Capped at MAXCHANNELS (64 since 2.25.1) by NCCL's init (src/init.cc).
  if (name == "NCCL_MIN_CTAS" || name == "NCCL_MAX_CTAS" || name == "NCCL_NCHANNELS_PER_NET_PEER")
    return integer_range_problem(name, value, 1, 64);
  if (name == "NCCL_P2P_NET_CHUNKSIZE" || name == "NCCL_NVLS_CHUNKSIZE")
    return integer_range_problem(name, value, 1, 1LL << 30);
  if (name == "NCCL_CTA_POLICY") {
    if (index_ignoring_case(value, kCtaPolicyNames) || (value.size() == 1 && value[0] >= '0' && value[0] <= '2'))
      return std::nullopt;
    return "'" + std::string(value) + "' is not a valid NCCL_CTA_POLICY value (0-2 or " +
           join_names(kCtaPolicyNames) + ")";
  }
  if (name == "NCCL_NETDEVS_POLICY") {  // src/graph/topo.cc, 2.28.3
    const bool max = value.size() > 4 && same_text_ignoring_case(value.substr(0, 4), "MAX:");
    if (same_text_ignoring_case(value, "AUTO") || same_text_ignoring_case(value, "ALL") ||
        (max && !integer_range_problem(name, value.substr(4), 1, 1024)))
      return std::nullopt;
    return "'" + std::string(value) + "' is not a valid NCCL_NETDEVS_POLICY value (AUTO, ALL or MAX:N)";
  }
  if (name == "NCCL_CROSS_NIC" || name == "NCCL_NVLS_ENABLE") return integer_range_problem(name, value, 0, 2);
  if (name.ends_with("_DISABLE") ||
      std::find(kBooleanKnobs.begin(), kBooleanKnobs.end(), name) != kBooleanKnobs.end())
    return integer_range_problem(name, value, 0, 1);
  return std::nullopt;
}

Result<int> parse_nccl_version(std::string_view text) {
  const std::string quoted = "'" + std::string(text) + "'";
  std::vector<long long> parts;
  std::string_view rest = text;
  while (true) {
    const std::size_t dot = rest.find('.');
    const std::optional<long long> part = parse_integer(rest.substr(0, dot));
    if (!part) return Error{quoted + " is not an NCCL version (e.g. 2.24 or 2.28.9)"};
    parts.push_back(*part);
    if (dot == std::string_view::npos) break;
    rest.remove_prefix(dot + 1);
  }
  if (parts.size() == 1 && parts[0] >= 10000 && parts[0] < 1000000) return static_cast<int>(parts[0]);
  if (parts.size() < 2 || parts.size() > 3 || parts[0] < 2 || parts[0] > 99 || parts[1] > 99 ||
      (parts.size() == 3 && parts[2] > 99))
    return Error{quoted + " is not an NCCL version (e.g. 2.24 or 2.28.9)"};
  const long long patch = parts.size() == 3 ? parts[2] : 0;
  // NCCL's code: major*10000 + minor*100 + patch since 2.9, major*1000 + minor*100 + patch before.
  if (parts[0] == 2 && parts[1] < 9) return static_cast<int>(parts[0] * 1000 + parts[1] * 100 + patch);
  return static_cast<int>(parts[0] * 10000 + parts[1] * 100 + patch);
}

bool is_transport_setting(std::string_view name) {
  // Prefixes of NCCL's network, IB, socket and GPUDirect RDMA variables (NCCL's docs, "Environment
  // Variables"), and single names.
  constexpr std::array<std::string_view, 5> kPrefixes = {"NCCL_IB_", "NCCL_NET_", "NCCL_SOCKET_", "NCCL_GDR",
                                                         "NCCL_UCX_"};
  constexpr std::array<std::string_view, 5> kNames = {"NCCL_CROSS_NIC", "NCCL_PXN_DISABLE", "NCCL_BUFFSIZE",
                                                      "NCCL_P2P_NET_CHUNKSIZE", "NCCL_NETDEVS_POLICY"};
  return std::any_of(kNames.begin(), kNames.end(), [&](std::string_view n) { return name == n; }) ||
         std::any_of(kPrefixes.begin(), kPrefixes.end(),
                     [&](std::string_view p) { return name.starts_with(p); });
}

bool is_searched_per_node_count(std::string_view name) {
  return name == "NCCL_ALGO" || name == "NCCL_PROTO" || name == "NCCL_MIN_NCHANNELS" ||
         name == "NCCL_MAX_NCHANNELS";
}

}  // namespace nccltune
