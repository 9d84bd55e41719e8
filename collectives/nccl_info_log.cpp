// NCCL's INFO log, line by line (nccl_info_log.h): each line's prefix and which kind of line it is,
// the reader of several inputs and the merge of what readers found. Each kind of line is read in a
// file of its own (nccl_info_log_lines.h).
#include "collectives/nccl_info_log.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <tuple>
#include <utility>

#include "base/text_words.h"
#include "base/utf8.h"
#include "collectives/library_versions.h"
#include "collectives/nccl_info_log_lines.h"

namespace nccltune::nccl_info_detail {

// A count NCCL prints (ranks, nodes, channels): small and not negative.
std::optional<int> to_count(std::string_view word) {
  const auto value = to_int(word);
  if (!value || *value < 0 || *value > (int64_t{1} << 24)) return std::nullopt;
  return static_cast<int>(*value);
}

// The integer after `key ` in `words` ("nRanks 16" -> 16).
std::optional<int> count_after(const std::vector<std::string_view>& words, std::string_view key) {
  for (size_t i = 0; i + 1 < words.size(); ++i)
    if (words[i] == key) return to_count(words[i + 1]);
  return std::nullopt;
}

void keep_max(std::optional<int>& kept, std::optional<int> value) {
  if (value && (!kept || *value > *kept)) kept = value;
}

namespace {

bool is_host_name(std::string_view word) {
  return !word.empty() && word.size() <= 253 && std::all_of(word.begin(), word.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_';
  });
}

bool all_digits(std::string_view word) {
  return !word.empty() && std::all_of(word.begin(), word.end(), [](char c) { return c >= '0' && c <= '9'; });
}

struct LinePrefix {
  std::string host;
  std::string process;  // "host:pid"
};

// "host:pid:tid" (the last word of that shape before "NCCL INFO"): the host and its process;
// launcher tags in front of it ("[1,0]<stdout>:host:pid:tid") are dropped with the colon that
// ends them.
std::optional<LinePrefix> parse_prefix(std::string_view prefix) {
  const auto words = split_words(prefix);
  for (auto it = words.rbegin(); it != words.rend(); ++it) {
    std::string_view word = *it;
    const size_t tid = word.rfind(':');
    if (tid == std::string_view::npos || !all_digits(word.substr(tid + 1))) continue;
    word = word.substr(0, tid);
    const size_t pid = word.rfind(':');
    if (pid == std::string_view::npos || !all_digits(word.substr(pid + 1))) continue;
    const std::string_view pid_word = word.substr(pid + 1);
    word = word.substr(0, pid);
    const size_t tag = word.rfind(':');
    if (tag != std::string_view::npos) word = word.substr(tag + 1);
    if (is_host_name(word))
      return LinePrefix{std::string(word), std::string(word) + ":" + std::string(pid_word)};
  }
  return std::nullopt;
}

}  // namespace

NcclLogLine LineReader::line_at(std::string_view body, int number) const {
  std::string text(trimmed(body).substr(0, kMaxLogLineChars));
  // A terminal must not act on what a log holds: control characters become '?'.
  for (char& c : text)
    if ((static_cast<unsigned char>(c) < 0x20 && c != '\t') || c == 0x7f) c = '?';
  return {source_, number, std::move(text)};
}

void LineReader::add_host(std::string_view host) {
  if (index_.hosts.size() < kMaxHosts) index_.hosts.emplace(host);
}

void LineReader::read(std::string_view raw, int number) {
  // nccl-tests' comment lines: the rank list names hosts; NCCL itself never starts a line with
  // '#', so a quoted NCCL line in a comment (a header) is not read as one.
  const std::string_view line = trimmed(raw);
  if (line.starts_with('#')) {
    const auto words = split_words(line);
    if (words.size() >= 9 && words[0] == "#" && words[1] == "Rank" && words[7] == "on" &&
        is_host_name(words[8]))
      add_host(words[8]);
    return;
  }
  // Where NCCL's prefix ends: "host:pid:tid [dev] NCCL INFO " or "... file.cc:123 NCCL WARN ".
  for (const auto& [marker, warn] :
       {std::pair{std::string_view("NCCL INFO "), false}, std::pair{std::string_view("NCCL WARN "), true}}) {
    const size_t at = raw.find(marker);
    if (at == std::string_view::npos) continue;
    const auto prefix = parse_prefix(raw.substr(0, at));
    if (prefix) add_host(prefix->host);
    process_ = prefix ? prefix->process : std::string();
    ++log_.nccl_lines;
    if (!warn) ++log_.info_lines;
    read_body(trimmed(raw.substr(at + marker.size())), warn, number);
    return;
  }
  // A line without NCCL's prefix: a collector stripped it, or NCCL printed it bare ("NCCL
  // version ...", the rows of its enabled matrix), or another program wrote it.
  process_.clear();
  if (read_body(line, false, number)) ++log_.info_lines;
}

bool LineReader::read_body(std::string_view body, bool warn, int number) {
  read_problems(body, warn, number);
  if (body.empty()) return false;
  if (body.find("NCCL version ") != std::string_view::npos && !body.starts_with("#")) {
    read_version(body);
    return false;  // NCCL prints it at every debug level: not a line of its INFO account
  }
  return read_account(body, split_words(body), number);
}

bool LineReader::read_account(std::string_view body, const std::vector<std::string_view>& words, int number) {
  if (body.starts_with("NET/IB : Using") || body.starts_with("NET/IB: Using")) {
    read_ib_devices(body.substr(body.find("Using") + 5, body.find(';') - (body.find("Using") + 5)));
    return true;
  }
  if (body.starts_with("NET/Socket : Using") || body.starts_with("NET/Socket: Using")) {
    read_socket_devices(body.substr(body.find("Using") + 5));
    return true;
  }
  if (body.starts_with("NET/OFI ")) {
    read_ofi(body, words, number);
    return true;
  }
  if (body.starts_with("Using network ")) {
    log_.net_plugin = std::string(trimmed(body.substr(14)));
    log_.net_plugin_in_use = true;
    return true;
  }
  if (body.starts_with("NET/Plugin: Loaded net plugin ") ||
      body.starts_with("NET/Plugin : Loaded net plugin ")) {
    read_loaded_net_plugin(body);
    return true;
  }
  // 2.21 to 2.27, when NCCL_NET_PLUGIN named the library NCCL opened.
  if (constexpr std::string_view kNetFromEnv = "NET/Plugin: Plugin name set by env to ";
      body.starts_with(kNetFromEnv)) {
    if (!log_.net_plugin_requested) log_.net_plugin_requested = std::string(trimmed(body.substr(kNetFromEnv.size())));
    return true;
  }
  if (body.starts_with("Plugin Path : ")) {
    log_.plugin_library = std::string(trimmed(body.substr(14)));
    return true;
  }
  if (body.starts_with("TUNER/Plugin:")) {
    read_tuner(body);
    return true;
  }
  // 2.28+: NCCL opened the library NCCL_TUNER_PLUGIN named but found no tuner it supports in it.
  if (body.starts_with("External tuner plugin ") && body.ends_with(" is unsupported")) {
    log_.tuner_not_found = true;
    log_.tuner_fallback = "internal";
    return true;
  }
  if (body.find("GPU Direct RDMA Disabled for ") != std::string_view::npos) {
    add_gdr_cause(line_at(body, number));
    return true;
  }
  if (const size_t via = body.find(" via NET/");
      via != std::string_view::npos && body.starts_with("Channel ")) {
    read_connection(body, via);
    return true;
  }
  if (body.starts_with("NVLS multicast support is ")) {
    read_nvls_support(body);
    return true;
  }
  if (const size_t arrow = body.find(" Bytes -> Algo "); arrow != std::string_view::npos) {
    read_choice(body, arrow);
    return true;
  }
  if (body.find(" [Symmetric]: ") != std::string_view::npos ||
      body.find(" [Copy Engine]: ") != std::string_view::npos) {
    read_kernel_choice(body);
    return true;
  }
  if (body.starts_with("Enabled NCCL Func/Proto/Algo Matrix:")) {
    matrix_algos_.clear();
    return true;
  }
  if (body.find('|') != std::string_view::npos) {
    if (read_enabled_matrix(body)) return true;
    if (ProcessState* state = process(); state && state->table.read(body, state->ranks)) return true;
  }
  // "comm 0x... rank 0 nRanks 16 nNodes 2 localRanks 8 localRank 0 MNNVL 0" (2.20+);
  // "ncclCommInitRank comm 0x... rank 0 nranks 16 cudaDev 0 ..." and "Init timings - ...:
  // rank 7 nranks 16 total ..." in every version.
  if (!words.empty() && (words[0] == "comm" || words[0].starts_with("ncclCommInit") || words[0] == "Init")) {
    read_comm(words);
    return true;
  }
  if (words.size() >= 2 && words[0] == "MNNVL") {
    read_mnnvl(body, number);
    return true;
  }
  // "16 coll channels, 16 collnet channels, 16 nvls channels, 32 p2p channels, 32 p2p
  // channels per peer" (2.18: without collnet).
  if (words.size() >= 6 && words[1] == "coll" && words[2] == "channels,") {
    read_channels(words);
    return true;
  }
  // "NVLS comm 0x... headRank 0 nHeads 8 ... nvlsChannels 16" and "NVLS tuning: nChannels 16".
  if (!words.empty() && words[0] == "NVLS") {
    read_nvls(words);
    return true;
  }
  // "cudaDriverVersion 12080" (src/misc/cudawrap.cc): the driver's CUDA version.
  if (words.size() == 2 && words[0] == "cudaDriverVersion") {
    if (const auto code = to_count(words[1]); code && !log_.cuda_driver) {
      const std::string version = cuda_driver_version_string(*code);
      if (!version.empty()) log_.cuda_driver = version;
    }
    return true;
  }
  if (read_tuner_init(words)) return true;
  return read_env(words);
}

void LineReader::merge(const NcclInfoLog& other) {
  if (!log_.nccl_version) log_.nccl_version = other.nccl_version;
  if (!log_.cuda_version) log_.cuda_version = other.cuda_version;
  if (!log_.cuda_driver) log_.cuda_driver = other.cuda_driver;
  keep_max(log_.ranks, other.ranks);
  keep_max(log_.nodes, other.nodes);
  keep_max(log_.local_ranks, other.local_ranks);
  for (const std::string& host : other.hosts) add_host(host);
  if (other.net_plugin_in_use || !log_.net_plugin) {
    log_.net_plugin = other.net_plugin;
    log_.net_plugin_in_use = log_.net_plugin_in_use || other.net_plugin_in_use;
  }
  if (!log_.connection_network) log_.connection_network = other.connection_network;
  if (!log_.plugin_library) log_.plugin_library = other.plugin_library;
  for (const NcclNetDevice& device : other.devices) add_device(device);
  log_.ib_devices_listed = log_.ib_devices_listed || other.ib_devices_listed;
  log_.ofi_lines = log_.ofi_lines || other.ofi_lines;
  if (!log_.net_plugin_requested) log_.net_plugin_requested = other.net_plugin_requested;
  for (const auto& [name, value] : other.plugin_env)
    if (log_.plugin_env.size() < kMaxEnv || log_.plugin_env.contains(name)) log_.plugin_env[name] = value;
  if (!log_.plugin_proto_reason) log_.plugin_proto_reason = other.plugin_proto_reason;
  for (const NcclLogLine& cause : other.gdr_causes) add_gdr_cause(cause);
  log_.net_connections += other.net_connections;
  log_.gdr_connections += other.gdr_connections;
  if (other.nvls_available) log_.nvls_available = log_.nvls_available.value_or(true) && *other.nvls_available;
  keep_max(log_.nvls_channels, other.nvls_channels);
  if (other.nvls_in_enabled_matrix)
    log_.nvls_in_enabled_matrix = log_.nvls_in_enabled_matrix.value_or(false) || *other.nvls_in_enabled_matrix;
  if (other.mnnvl) log_.mnnvl = log_.mnnvl.value_or(false) || *other.mnnvl;
  for (const NcclMnnvlFabric& fabric : other.mnnvl_fabrics) add_fabric(fabric);
  keep_max(log_.mnnvl_clique_size, other.mnnvl_clique_size);
  keep_max(log_.mnnvl_nvl_domain_size, other.mnnvl_nvl_domain_size);
  for (int rank : other.mnnvl_clique_ranks)
    if (index_.clique_ranks.size() < kMaxCliqueRanks) index_.clique_ranks.insert(rank);
  keep_max(log_.coll_channels, other.coll_channels);
  keep_max(log_.collnet_channels, other.collnet_channels);
  for (const auto& [name, value] : other.env)
    if (log_.env.size() < kMaxEnv || log_.env.contains(name)) log_.env[name] = value;
  if (!log_.tuner_loaded) log_.tuner_loaded = other.tuner_loaded;
  if (!log_.tuner_fallback) log_.tuner_fallback = other.tuner_fallback;
  if (!log_.tuner_requested) log_.tuner_requested = other.tuner_requested;
  log_.tuner_symbol_missing = log_.tuner_symbol_missing || other.tuner_symbol_missing;
  if (!log_.tuner_library_from_env) log_.tuner_library_from_env = other.tuner_library_from_env;
  log_.tuner_not_found = log_.tuner_not_found || other.tuner_not_found;
  if (!log_.tuner_declined) log_.tuner_declined = other.tuner_declined;
  log_.tuner_initialized = log_.tuner_initialized || other.tuner_initialized;
  for (const NcclLoggedChoice& choice : other.choices)
    if (index_.choices.size() < kMaxChoices) index_.choices.insert(choice);
  for (const NcclKernelChoice& choice : other.kernel_choices)
    if (index_.kernel_choices.size() < kMaxChoices) index_.kernel_choices.insert(choice);
  for (const NcclModelTable& table : other.model_tables) add_table(table);
  for (const NcclLogLine& warning : other.warnings) {
    if (log_.warnings.size() < kMaxLogWarnings)
      log_.warnings.push_back(warning);
    else
      ++log_.warnings_dropped;
  }
  log_.warnings_dropped += other.warnings_dropped;
  for (const NcclFailure& failure : other.failures)
    if (log_.failures.size() < kMaxFailures) log_.failures.push_back(failure);
  log_.nccl_lines += other.nccl_lines;
  log_.info_lines += other.info_lines;
}

}  // namespace nccltune::nccl_info_detail

namespace nccltune {

void NcclInfoLogReader::add(const NcclInfoLog& other) {
  nccl_info_detail::LineReader(log_, index_, "").merge(other);
}

void NcclInfoLogReader::add(std::string_view text, std::string_view source) {
  // Invalid UTF-8 becomes '?' so that every string of the result can go into JSON.
  const std::string repaired = is_valid_utf8(text) ? std::string() : repaired_utf8(text);
  std::string_view rest = repaired.empty() ? text : std::string_view(repaired);
  nccl_info_detail::LineReader reader(log_, index_, source);
  int number = 0;
  while (!rest.empty()) {
    const size_t end = rest.find('\n');
    std::string_view line = rest.substr(0, end);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (number < std::numeric_limits<int>::max()) ++number;
    reader.read(line, number);
    if (end == std::string_view::npos) break;
    rest.remove_prefix(end + 1);
  }
  reader.finish();
}

NcclInfoLog NcclInfoLogReader::result() const {
  NcclInfoLog log = log_;
  log.hosts.assign(index_.hosts.begin(), index_.hosts.end());
  log.choices.assign(index_.choices.begin(), index_.choices.end());
  log.kernel_choices.assign(index_.kernel_choices.begin(), index_.kernel_choices.end());
  log.mnnvl_clique_ranks.assign(index_.clique_ranks.begin(), index_.clique_ranks.end());
  std::sort(log.mnnvl_fabrics.begin(), log.mnnvl_fabrics.end(),
            [](const NcclMnnvlFabric& a, const NcclMnnvlFabric& b) {
              return std::tie(a.fabric_uuid, a.clique_id, a.state, a.health_mask) <
                     std::tie(b.fabric_uuid, b.clique_id, b.state, b.health_mask);
            });
  // The transport: what "Using network" names, else what the lines of one transport show.
  // NET/IB's devices say IB or RoCE (RoCE only when every device is Ethernet); the HPC-X
  // plugin ("IBext_v8", "NCCL RDMA Plugin v8") prints the same NET/IB lines.
  if (!log.net_plugin) log.net_plugin = log.connection_network;
  const std::string net = log.net_plugin.value_or("");
  const bool all_roce =
      !log.devices.empty() && std::all_of(log.devices.begin(), log.devices.end(),
                                          [](const NcclNetDevice& d) { return d.link_layer == "RoCE"; });
  if (net == "Socket") {
    log.transport = "Socket";
  } else if (net == "IB" || net.starts_with("IBext") || (log.ib_devices_listed && !log.ofi_lines)) {
    log.transport = all_roce ? "RoCE" : "IB";
  } else if (log.ofi_lines || net.find("Libfabric") != std::string::npos ||
             net.find("OFI") != std::string::npos) {
    log.transport = "OFI";
  } else if (!net.empty()) {
    log.transport = "plugin";
  }
  return log;
}

NcclInfoLog parse_nccl_info_log(std::string_view text, std::string_view source) {
  NcclInfoLogReader reader;
  reader.add(text, source);
  return reader.result();
}

}  // namespace nccltune
