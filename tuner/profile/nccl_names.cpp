#include "profile/nccl_names.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <set>
#include <vector>

#include "base/collective_names.h"
#include "profile/nccl_env_names.h"


namespace nccltune {

namespace {

// NCCL_NET_GDR_LEVEL's path names that every supported NCCL reads (src/graph/paths.cc, ncclGetLevel,
// 2.21.5-2.30.7): strcmp against topoPathTypeStr, so with case; `sys` is not read and NCCL keeps its
// default. NCCL also reads NVL, NVB, C2C, P2C, PXN, but which of them exist depends on the version.
constexpr std::array<std::string_view, 5> kGdrLevelNames = {"LOC", "PIX", "PXB", "PHB", "SYS"};
// Variables NCCL reads as 0/1 besides every NCCL_*_DISABLE.
constexpr std::array<std::string_view, 6> kBooleanKnobs = {"NCCL_NET_GDR_READ",       "NCCL_COLLNET_ENABLE",
                                                           "NCCL_NET_SHARED_BUFFERS", "NCCL_CUMEM_ENABLE",
                                                           "NCCL_IB_ADAPTIVE_ROUTING", "NCCL_IB_SPLIT_DATA_ON_QPS"};
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

// An integer NCCL_PARAM as NCCL reads it the same way nccltune does. NCCL converts the text with
// strtoll(str, nullptr, 0) (src/misc/param.cc, ncclLoadParam, 2.21.5-2.30.7): base 0 reads "0x10" as
// 16 and "010" as 8, and the text after the number is ignored ("16k" is 16, "4M" is 4). So only
// plain decimal is taken: digits, no sign, no leading zero, nothing after.
std::optional<long long> parse_nccl_param(std::string_view text) {
  if (text.size() > 1 && text.front() == '0') return std::nullopt;
  return parse_integer(text);
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
  const std::optional<long long> number = parse_nccl_param(value);
  if (!number || *number < min || *number > max)
    return "'" + std::string(value) + "' is not a valid " + std::string(name) + " value (an integer from " +
           std::to_string(min) + " to " + std::to_string(max) +
           (number ? ")" : ", in plain decimal: NCCL reads 0x10 as 16, 010 as 8 and 16k as 16)");
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

// base/collective_names.h's row of a collective NCCL has a function for; nullptr for alltoall
// (sends and receives) and for names that are no collective.
const CollectiveName* nccl_function_row(std::string_view collective) {
  const CollectiveName* row = find_collective_name(collective);
  return row && !row->function.empty() ? row : nullptr;
}

}  // namespace

std::optional<std::string_view> nccl_function_name(std::string_view collective) {
  const CollectiveName* row = nccl_function_row(collective);
  return row ? std::optional<std::string_view>(row->function) : std::nullopt;
}

std::optional<std::string_view> nccl_log_op_name(std::string_view collective) {
  const CollectiveName* row = nccl_function_row(collective);
  return row ? std::optional<std::string_view>(row->log) : std::nullopt;
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
  return std::any_of(kCollectiveTable.begin(), kCollectiveTable.end(), [&](const CollectiveName& row) {
    return !row.function.empty() && same_text_ignoring_case(name, row.function);
  });
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
  // parseList compares names with strcasecmp (src/graph/tuning.cc, 2.21.5-2.30.7); NCCL_NET_GDR_LEVEL
  // is compared with case (src/graph/paths.cc, ncclGetLevel), so it is not listed here.
  return name == "NCCL_ALGO" || name == "NCCL_PROTO";
}

std::optional<std::string> knob_value_problem(std::string_view name, std::string_view value) {
  // parseList (src/graph/tuning.cc, 2.21.5-2.30.7): names compared with strcasecmp. Scoped lists
  // ("allreduce:Ring") are read from 2.24.3 only, so a plain list is what every version reads alike.
  if (name == "NCCL_ALGO") return name_list_problem(name, value, kNcclAlgorithms);
  if (name == "NCCL_PROTO") return name_list_problem(name, value, kNcclProtocols);
  // MIN/MAX_NCHANNELS (src/graph/connect.cc, ncclMinNchannels / ncclMaxNchannels), NVLS_NCHANNELS
  // (src/init.cc, NvlsChannels -> config.nvlsCTAs): NCCL_PARAMs, capped at MAXCHANNELS.
  if (name.ends_with("_NCHANNELS")) return integer_range_problem(name, value, 1, 64);
  if (name == "NCCL_NET_GDR_LEVEL") {
    // src/graph/paths.cc, ncclGetLevel: a path name with case, else a number when the text starts with
    // a digit (strtol base 0, 5 and above read as SYS): one digit 0-5 reads the same everywhere.
    if (std::find(kGdrLevelNames.begin(), kGdrLevelNames.end(), value) != kGdrLevelNames.end() ||
        (value.size() == 1 && value[0] >= '0' && value[0] <= '5'))
      return std::nullopt;
    return "'" + std::string(value) + "' is not a valid NCCL_NET_GDR_LEVEL value (" +
           join_names(kGdrLevelNames) + " in capitals, as NCCL compares them with case, or 0-5)";
  }
  if (name == "NCCL_BUFFSIZE") return integer_range_problem(name, value, 1, 1LL << 40);
  if (name == "NCCL_NTHREADS") {
    // src/graph/tuning.cc, getNthreads (2.21.5-2.30.7): a multiple of WARP_SIZE (32) from 2*WARP_SIZE
    // to NCCL_SIMPLE_MAX_NTHREADS / NCCL_LL_MAX_NTHREADS (512); anything else is replaced.
    const std::optional<long long> threads = parse_nccl_param(value);
    if (threads && *threads >= 64 && *threads <= 512 && *threads % 32 == 0) return std::nullopt;
    return "'" + std::string(value) + "' is not a valid NCCL_NTHREADS value (a multiple of 32 from 64 to 512)";
  }
  if (name == "NCCL_IB_QPS_PER_CONNECTION") return integer_range_problem(name, value, 1, 128);
  // src/init.cc, envConfigOverride: MIN_CTAS / MAX_CTAS below 1 are ignored and above MAXCHANNELS (64
  // since 2.25.1) capped. NCHANNELS_PER_NET_PEER: src/init.cc (2.28), src/graph/paths.cc before.
  if (name == "NCCL_MIN_CTAS" || name == "NCCL_MAX_CTAS" || name == "NCCL_NCHANNELS_PER_NET_PEER")
    return integer_range_problem(name, value, 1, 64);
  if (name == "NCCL_P2P_NET_CHUNKSIZE" || name == "NCCL_NVLS_CHUNKSIZE")
    return integer_range_problem(name, value, 1, 1LL << 30);
  if (name == "NCCL_CTA_POLICY") {
    // 2.27.3-2.28.9: an NCCL_PARAM (src/init.cc), so "EFFICIENCY" reads as strtoll's 0 (DEFAULT).
    // 2.29.2-2.30.7: getEnvCtaPolicyOnce (src/init.cc) reads names, or only the first character of
    // text that starts with a digit ("10" is 1). One digit 0-2 reads the same in all of them.
    if (value.size() == 1 && value[0] >= '0' && value[0] <= '2') return std::nullopt;
    return "'" + std::string(value) +
           "' is not a valid NCCL_CTA_POLICY value (0, 1 or 2; NCCL before 2.29.2 reads the names "
           "DEFAULT, EFFICIENCY and ZERO as 0)";
  }
  if (name == "NCCL_NETDEVS_POLICY") {
    // src/graph/topo.cc, getNetDevsPolicyOnce (2.28.3-2.30.7): AUTO and ALL with strcasecmp, "MAX:"
    // with strncasecmp and then atoi, which would read "MAX:2x" as 2: N must be plain decimal.
    const bool max = value.size() > 4 && same_text_ignoring_case(value.substr(0, 4), "MAX:");
    if (same_text_ignoring_case(value, "AUTO") || same_text_ignoring_case(value, "ALL") ||
        (max && !integer_range_problem(name, value.substr(4), 1, 1024)))
      return std::nullopt;
    return "'" + std::string(value) + "' is not a valid NCCL_NETDEVS_POLICY value (AUTO, ALL or MAX:N)";
  }
  // CROSS_NIC (src/graph/search.cc), NVLS_ENABLE (src/transport/nvls.cc): NCCL_PARAMs, 2 = NCCL decides.
  if (name == "NCCL_CROSS_NIC" || name == "NCCL_NVLS_ENABLE") return integer_range_problem(name, value, 0, 2);
  if (name.ends_with("_DISABLE") ||
      std::find(kBooleanKnobs.begin(), kBooleanKnobs.end(), name) != kBooleanKnobs.end())
    return integer_range_problem(name, value, 0, 1);
  return std::nullopt;
}

bool is_known_nccl_variable(std::string_view name, int nccl_version) {
  const auto found = std::lower_bound(kNcclEnvNames.begin(), kNcclEnvNames.end(), name,
                                      [](const NcclEnvName& row, std::string_view n) { return row.name < n; });
  if (found == kNcclEnvNames.end() || found->name != name) return false;
  const int minor = nccl_version / 100 % 100;
  if (nccl_version / 10000 != 2 || minor < kNcclEnvNamesOldestMinor || minor > kNcclEnvNamesNewestMinor)
    return true;  // a release the table does not cover: any name it knows
  return (found->minors >> (minor - kNcclEnvNamesOldestMinor) & 1) != 0;
}

int profile_nccl_version(std::string_view nccl_version, std::string_view node_type_key) {
  if (!nccl_version.empty()) {
    const Result<int> parsed = parse_nccl_version(nccl_version);
    return parsed ? *parsed : 0;
  }
  const std::size_t at = node_type_key.rfind(".nccl");
  if (at == std::string_view::npos) return 0;
  const Result<int> parsed = parse_nccl_version(node_type_key.substr(at + 5));
  return parsed ? *parsed : 0;
}

std::optional<std::string> nccl_list_problem(std::string_view name, std::string_view value, int nccl_version) {
  if (name != "NCCL_ALGO" && name != "NCCL_PROTO") return std::nullopt;
  const std::string quoted = "'" + std::string(value) + "'";
  if (value.find_first_of(";:") == std::string_view::npos) return knob_value_problem(name, value);
  if (nccl_version != 0 && nccl_version < kScopedListsNcclVersion)
    return quoted + " is a per-function list, which NCCL reads from 2.24 on (this profile's NCCL is older)";
  std::set<std::string> functions;
  bool first = true;
  for (const NcclListEntry& entry : nccl_list_entries(value)) {
    if (entry.list.empty() || (entry.function && entry.function->empty()))
      return quoted + " has an empty entry (entries are '<function>:<list>' joined by ';')";
    if (entry.list.find(':') != std::string_view::npos)
      return quoted + " has an entry with two ':'";
    if (!entry.function && !first)
      return quoted + " has an entry without a function after the first: NCCL refuses it";
    if (entry.function) {
      if (!is_nccl_function_name(*entry.function))
        return quoted + " names no NCCL function '" + std::string(*entry.function) +
               "' (broadcast, reduce, allgather, reducescatter, allreduce)";
      std::string lower(*entry.function);
      std::transform(lower.begin(), lower.end(), lower.begin(),
                     [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
      if (!functions.insert(lower).second)
        return quoted + " gives '" + std::string(*entry.function) + "' two lists";
    }
    first = false;
    if (std::optional<std::string> problem =
            name == "NCCL_ALGO" ? name_list_problem(name, entry.list, kNcclAlgorithms)
                                : name_list_problem(name, entry.list, kNcclProtocols))
      return quoted + ": " + *problem;
  }
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
         name == "NCCL_MAX_NCHANNELS" || name == "NCCL_MIN_CTAS" || name == "NCCL_MAX_CTAS" ||
         name == "NCCL_NVLS_NCHANNELS";
}

}  // namespace nccltune
