#include "collectives/nccl_info_log.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <limits>
#include <set>
#include <tuple>
#include <utility>

#include "base/text_words.h"
#include "base/utf8.h"
#include "collectives/nccl_info_mnnvl.h"

namespace nccltune {
namespace {

// Bounds on what a hostile or endless log can make the parser keep.
constexpr std::size_t kMaxHosts = 65536;
constexpr std::size_t kMaxDevices = 1024;
constexpr std::size_t kMaxChoices = 65536;
constexpr std::size_t kMaxFailures = 1000;
constexpr std::size_t kMaxEnv = 1024;
constexpr std::size_t kMaxFabrics = 4096;
constexpr std::size_t kMaxCliqueRanks = 65536;
constexpr std::size_t kMaxProcesses = 4096;

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

bool is_env_name(std::string_view word) {
  return word.size() > 5 && word.starts_with("NCCL_") && std::all_of(word.begin(), word.end(), [](char c) {
           return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
         });
}

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

// NCCL's algorithm and protocol numbers (src/include/devcomm.h) in the names it prints since
// 2.24 (ncclAlgoToString, ncclProtoToString), so old and new TUNING lines read alike.
std::string algo_name(std::string_view word) {
  static constexpr std::string_view kNames[] = {
      "TREE", "RING", "COLLNET_DIRECT", "COLLNET_CHAIN", "NVLS", "NVLS_TREE", "PAT"};
  if (const auto number = to_int(word); number && *number >= 0 && *number < 7)
    return std::string(kNames[*number]);
  return std::string(word);
}
std::string proto_name(std::string_view word) {
  static constexpr std::string_view kNames[] = {"LL", "LL128", "SIMPLE"};
  if (const auto number = to_int(word); number && *number >= 0 && *number < 3)
    return std::string(kNames[*number]);
  return std::string(word);
}

// ibv_wc_status of "status=12", "status=IBV_WC_RETRY_EXC_ERR(12)" (2.28+) or, in 2.18's
// wording, "with error 12,".
std::optional<int> completion_status(std::string_view body) {
  if (const size_t at = body.find("status="); at != std::string_view::npos) {
    std::string_view word = body.substr(at + 7);
    word = word.substr(0, word.find_first_of(" \t,"));
    if (const size_t open = word.find('('); open != std::string_view::npos) {
      word = word.substr(open + 1);
      word = word.substr(0, word.find(')'));
    }
    return to_count(word);
  }
  if (const size_t at = body.find("with error "); at != std::string_view::npos) {
    std::string_view word = body.substr(at + 11);
    word = word.substr(0, word.find_first_of(" \t,"));
    return to_count(word);
  }
  return std::nullopt;
}

bool contains_ci(std::string_view text, std::string_view needle) {
  return std::search(text.begin(), text.end(), needle.begin(), needle.end(), [](char a, char b) {
           return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
         }) != text.end();
}

std::optional<NcclFailureKind> failure_kind(std::string_view body) {
  if (body.find("Got completion from peer") != std::string_view::npos) return NcclFailureKind::ib_completion;
  if (contains_ci(body, "unhandled system error")) return NcclFailureKind::system_error;
  if (contains_ci(body, "remote process exited or there was a network error"))
    return NcclFailureKind::remote_error;
  // PyTorch's watchdog ("Watchdog caught collective operation timeout"), NCCL's own
  // ("... timeout", "Timed out") and the launcher's.
  if (contains_ci(body, "collective operation timeout") || contains_ci(body, "timed out") ||
      (body.find("NCCL") != std::string_view::npos && contains_ci(body, "timeout")))
    return NcclFailureKind::timeout;
  return std::nullopt;
}

}  // namespace

namespace {

// What one process printed that later lines of it need: its communicator's ranks, and its
// tuning table under way.
struct ProcessState {
  std::optional<int> ranks;
  NcclTuningTableReader table;
};

class LineReader {
 public:
  LineReader(NcclInfoLog& log, NcclInfoLogReader::Index& index, std::string_view source)
      : log_(log), index_(index), source_(source) {}

  void read(std::string_view raw, int number);
  // The tuning tables still under way, once the text has ended.
  void finish();
  // Adds what another reader found (another node's ranks): as if its lines had been read here.
  void merge(const NcclInfoLog& other);

 private:
  void read_body(std::string_view body, bool warn, int number);
  void read_version(std::string_view body);
  void read_ib_devices(std::string_view list);
  void read_socket_devices(std::string_view list);
  void read_choice(std::string_view body, size_t arrow);
  void read_kernel_choice(std::string_view body);
  void read_mnnvl(std::string_view body, int number);
  ProcessState* process();
  void add_table(NcclModelTable table);
  void add_fabric(const NcclMnnvlFabric& fabric);
  void read_env(const std::vector<std::string_view>& words);
  void read_tuner(std::string_view body);
  void add_host(std::string_view host);
  void add_device(NcclNetDevice device);
  NcclLogLine line_at(std::string_view body, int number) const;

  NcclInfoLog& log_;
  NcclInfoLogReader::Index& index_;
  std::string source_;
  std::map<std::string, ProcessState> processes_;  // by "host:pid"; "" for lines without a prefix
  std::string process_;                            // the current line's
};

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

void LineReader::add_device(NcclNetDevice device) {
  if (const auto at = index_.device_at.find(device.name); at != index_.device_at.end()) {
    NcclNetDevice& known = log_.devices[at->second];
    if (!known.port) known.port = device.port;
    if (!known.link_layer) known.link_layer = device.link_layer;
    known.sharp = known.sharp || device.sharp;
    return;
  }
  if (log_.devices.size() >= kMaxDevices) return;
  index_.device_at.emplace(device.name, log_.devices.size());
  log_.devices.push_back(std::move(device));
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
    read_body(trimmed(raw.substr(at + marker.size())), warn, number);
    return;
  }
  // A line without NCCL's prefix: a collector stripped it, or NCCL printed it bare ("NCCL
  // version ..."), or another program wrote it.
  process_.clear();
  read_body(line, false, number);
}

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

void LineReader::read_ib_devices(std::string_view list) {
  // "[0]mlx5_0:1/IB [1]mlx5_3:1/RoCE/SHARP [RO]": index, device, port, link layer, flags.
  log_.ib_devices_listed = true;
  for (std::string_view word : split_words(list)) {
    if (!word.starts_with('[') || word == "[RO]") continue;
    const size_t close = word.find(']');
    if (close == std::string_view::npos) continue;
    word.remove_prefix(close + 1);
    const size_t colon = word.rfind(':');
    if (colon == std::string_view::npos || colon == 0) continue;
    NcclNetDevice device{std::string(word.substr(0, colon)), std::nullopt, std::nullopt, false};
    std::string_view rest = word.substr(colon + 1);
    const size_t slash = rest.find('/');
    device.port = to_count(rest.substr(0, slash));
    if (slash != std::string_view::npos) {
      rest.remove_prefix(slash + 1);
      const size_t next = rest.find('/');
      const std::string_view layer = rest.substr(0, next);
      if (layer == "IB" || layer == "RoCE") device.link_layer = std::string(layer);
      device.sharp = rest.find("SHARP") != std::string_view::npos;
    }
    add_device(std::move(device));
  }
}

void LineReader::read_socket_devices(std::string_view list) {
  // "[0]eth0:10.0.0.1<0> [1]ib0:fe80::1%ib0<0>": the interface name ends at the first colon.
  for (std::string_view word : split_words(list)) {
    if (!word.starts_with('[')) continue;
    const size_t close = word.find(']');
    if (close == std::string_view::npos) continue;
    word.remove_prefix(close + 1);
    const std::string_view name = word.substr(0, word.find(':'));
    if (!name.empty()) add_device({std::string(name), std::nullopt, std::nullopt, false});
  }
}

void LineReader::read_choice(std::string_view body, size_t arrow) {
  // 2.24+: "AllReduce: 1048576 Bytes -> Algo RING proto LL128 channel{Lo..Hi}={0..31}";
  // 2.23:  "AllReduce: 1048576 Bytes -> Algo 1 proto 1 time 12.5";
  // 2.21, 2.22 (rank 0 only): "1048576 Bytes -> Algo 1 proto 1 time 12.5".
  const auto before = split_words(body.substr(0, arrow));
  const auto after = split_words(body.substr(arrow + 15));  // past " Bytes -> Algo "
  if (before.empty() || after.size() < 3 || after[1] != "proto") return;
  const auto bytes = to_int(before.back());
  if (!bytes || *bytes < 0) return;
  NcclLoggedChoice choice;
  choice.bytes = *bytes;
  if (before.size() >= 2) {
    std::string_view op = before[before.size() - 2];
    if (op.ends_with(':')) op.remove_suffix(1);
    if (!op.empty() &&
        std::all_of(op.begin(), op.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)); }))
      choice.op = std::string(op);
  }
  choice.algo = algo_name(after[0]);
  choice.proto = proto_name(after[2]);
  if (index_.choices.size() < kMaxChoices) index_.choices.insert(std::move(choice));
}

void LineReader::read_kernel_choice(std::string_view body) {
  // "AllReduce [Symmetric]: 1048576 Bytes -> Kernel AllReduce_AGxLLMC_R nchannels 16 nthreads 512
  // nWorks 1"; "AllGather [Copy Engine]: 67108864 Bytes -> cudaMemcpy; CE synchronization with NVLS".
  const auto words = split_words(body);
  NcclKernelChoice choice;
  std::size_t at = 0;  // the byte count
  if (words.size() >= 7 && words[1] == "[Symmetric]:") {
    choice.path = "symmetric";
    at = 2;
  } else if (words.size() >= 7 && words[1] == "[Copy" && words[2] == "Engine]:") {
    choice.path = "copy_engine";
    at = 3;
  } else {
    return;
  }
  const auto bytes = to_int(words[at]);
  if (!bytes || *bytes < 0 || words[at + 1] != "Bytes" || words[at + 2] != "->" ||
      !std::all_of(words[0].begin(), words[0].end(),
                   [](char c) { return std::isalnum(static_cast<unsigned char>(c)); }))
    return;
  choice.op = std::string(words[0]);
  choice.bytes = *bytes;
  if (choice.path == "symmetric") {
    if (words[5] != "Kernel") return;
    choice.kernel = std::string(words[6]);
    choice.channels = count_after(words, "nchannels");
    choice.threads = count_after(words, "nthreads");
    choice.works = count_after(words, "nWorks");
  } else {
    if (!words[6].starts_with("cudaMemcpy")) return;
    choice.kernel = "cudaMemcpy";
    choice.nvls_sync = body.find("CE synchronization with NVLS") != std::string_view::npos;
  }
  if (choice.kernel.size() > 128) return;
  if (index_.kernel_choices.size() < kMaxChoices) index_.kernel_choices.insert(std::move(choice));
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

ProcessState* LineReader::process() {
  if (const auto it = processes_.find(process_); it != processes_.end()) return &it->second;
  if (processes_.size() >= kMaxProcesses) return nullptr;
  return &processes_[process_];
}

void LineReader::add_table(NcclModelTable table) {
  if (log_.model_tables.size() >= kMaxModelTables ||
      std::find(log_.model_tables.begin(), log_.model_tables.end(), table) != log_.model_tables.end())
    return;
  log_.model_tables.push_back(std::move(table));
}

void LineReader::finish() {
  for (auto& [name, state] : processes_)
    for (NcclModelTable& table : state.table.take()) add_table(std::move(table));
}

void LineReader::read_env(const std::vector<std::string_view>& words) {
  // "NCCL_IB_HCA set by environment to mlx5_0", "NCCL_IB_HCA set to mlx5_4" (2.18 net_ib),
  // "NCCL_IB_PCI_RELAXED_ORDERING set by environment to 1." (integer parameters end in '.'),
  // aws-ofi-nccl's "NET/OFI Setting NCCL_NVLS_CHUNKSIZE to 512KiB".
  std::string_view name;
  size_t value_at = 0;
  if (words.size() >= 6 && is_env_name(words[0]) && words[1] == "set" && words[2] == "by" &&
      words[3] == "environment" && words[4] == "to") {
    name = words[0];
    value_at = 5;
  } else if (words.size() >= 4 && is_env_name(words[0]) && words[1] == "set" && words[2] == "to") {
    name = words[0];
    value_at = 3;
  } else if (words.size() >= 5 && words[0] == "NET/OFI" && words[1] == "Setting" && is_env_name(words[2])) {
    name = words[2];
    value_at =
        words[3] == "to" ? 4 : (words.size() >= 6 && words[4] == "variable" && words[5] == "to" ? 6 : 0);
    if (value_at == 0 || value_at >= words.size()) return;
  } else {
    return;
  }
  std::string value = join_words(words, value_at);
  if (value.size() > 1 && value.back() == '.' && to_int(std::string_view(value).substr(0, value.size() - 1)))
    value.pop_back();
  if (log_.env.size() < kMaxEnv || log_.env.contains(std::string(name))) log_.env[std::string(name)] = value;
}

void LineReader::read_tuner(std::string_view body) {
  body = trimmed(body.substr(std::string_view("TUNER/Plugin:").size()));  // the caller matched it
  if (body.starts_with("Using internal tuner") ||
      body.find("using internal tuner") != std::string_view::npos ||
      body.find("Using internal tuner") != std::string_view::npos || body.starts_with("No plugin found"))
    log_.tuner_fallback = "internal";
  if (body.starts_with("Failed to find ncclTunerPlugin")) log_.tuner_symbol_missing = true;
  if (body.starts_with("NCCL_TUNER_PLUGIN set to "))
    log_.tuner_requested = std::string(trimmed(body.substr(25)));
  if (body.starts_with("Using tuner plugin ")) {  // 2.21 to 2.26
    log_.tuner_loaded = std::string(trimmed(body.substr(19)));
  } else if (body.starts_with("Using ") && !body.starts_with("Using internal")) {  // 2.27+: "Using X (vN)"
    std::string_view name = trimmed(body.substr(6));
    if (name.ends_with(')')) {
      if (const size_t open = name.rfind(" ("); open != std::string_view::npos) name = name.substr(0, open);
    }
    log_.tuner_loaded = std::string(name);
  }
}

void LineReader::read_body(std::string_view body, bool warn, int number) {
  if (warn) {
    if (log_.warnings.size() < kMaxLogWarnings)
      log_.warnings.push_back(line_at(body, number));
    else
      ++log_.warnings_dropped;
  }
  if (const auto kind = failure_kind(body); kind && log_.failures.size() < kMaxFailures) {
    NcclFailure failure{*kind, std::nullopt, line_at(body, number)};
    if (*kind == NcclFailureKind::ib_completion) failure.status = completion_status(body);
    log_.failures.push_back(std::move(failure));
  }
  if (body.empty()) return;
  const auto words = split_words(body);

  if (body.find("NCCL version ") != std::string_view::npos && !body.starts_with("#")) {
    read_version(body);
    return;
  }
  if (body.starts_with("NET/IB : Using") || body.starts_with("NET/IB: Using")) {
    read_ib_devices(body.substr(body.find("Using") + 5, body.find(';') - (body.find("Using") + 5)));
    return;
  }
  if (body.starts_with("NET/Socket : Using") || body.starts_with("NET/Socket: Using")) {
    read_socket_devices(body.substr(body.find("Using") + 5));
    return;
  }
  if (body.starts_with("NET/OFI ")) {
    log_.ofi_lines = true;
    read_env(words);
    return;
  }
  if (body.starts_with("Using network ")) {
    log_.net_plugin = std::string(trimmed(body.substr(14)));
    log_.net_plugin_in_use = true;
    return;
  }
  if (body.starts_with("NET/Plugin: Loaded net plugin ") ||
      body.starts_with("NET/Plugin : Loaded net plugin ")) {
    std::string_view name = trimmed(body.substr(body.find("net plugin ") + 11));
    if (const size_t open = name.rfind(" ("); open != std::string_view::npos && name.ends_with(')'))
      name = name.substr(0, open);
    if (!log_.net_plugin) log_.net_plugin = std::string(name);
    return;
  }
  if (body.starts_with("Plugin Path : ")) {
    log_.plugin_library = std::string(trimmed(body.substr(14)));
    return;
  }
  if (body.starts_with("TUNER/Plugin:")) {
    read_tuner(body);
    return;
  }
  if (const size_t via = body.find(" via NET/");
      via != std::string_view::npos && body.starts_with("Channel ")) {
    // "via NET/<network name>/<device>[/GDRDMA][/Shared]": the network is named here too.
    ++log_.net_connections;
    if (!log_.connection_network) {
      const std::string_view rest = body.substr(via + 9);
      for (size_t slash = rest.find('/'); slash != std::string_view::npos;
           slash = rest.find('/', slash + 1)) {
        if (slash > 0 && slash + 1 < rest.size() &&
            std::isdigit(static_cast<unsigned char>(rest[slash + 1]))) {
          log_.connection_network = std::string(rest.substr(0, slash));
          break;
        }
      }
    }
    if (body.find("/GDRDMA", via) != std::string_view::npos) ++log_.gdr_connections;
    return;
  }
  if (body.starts_with("NVLS multicast support is ")) {
    const bool available = body.starts_with("NVLS multicast support is available");
    log_.nvls_available = log_.nvls_available.value_or(true) && available;
    return;
  }
  if (const size_t arrow = body.find(" Bytes -> Algo "); arrow != std::string_view::npos) {
    read_choice(body, arrow);
    return;
  }
  if (body.find(" [Symmetric]: ") != std::string_view::npos ||
      body.find(" [Copy Engine]: ") != std::string_view::npos) {
    read_kernel_choice(body);
    return;
  }
  if (body.find('|') != std::string_view::npos) {
    if (ProcessState* state = process(); state && state->table.read(body, state->ranks)) return;
  }
  // "comm 0x... rank 0 nRanks 16 nNodes 2 localRanks 8 localRank 0 MNNVL 0" (2.20+);
  // "ncclCommInitRank comm 0x... rank 0 nranks 16 cudaDev 0 ..." and "Init timings - ...:
  // rank 7 nranks 16 total ..." in every version.
  if (!words.empty() && (words[0] == "comm" || words[0].starts_with("ncclCommInit") || words[0] == "Init")) {
    const auto ranks =
        count_after(words, "nRanks") ? count_after(words, "nRanks") : count_after(words, "nranks");
    keep_max(log_.ranks, ranks);
    if (ProcessState* state = process(); state && ranks) state->ranks = ranks;
    keep_max(log_.nodes, count_after(words, "nNodes"));
    keep_max(log_.local_ranks, count_after(words, "localRanks"));
    if (const auto mnnvl = count_after(words, "MNNVL"))
      log_.mnnvl = log_.mnnvl.value_or(false) || *mnnvl != 0;
    return;
  }
  if (words.size() >= 2 && words[0] == "MNNVL") {
    read_mnnvl(body, number);
    return;
  }
  // "16 coll channels, 16 collnet channels, 16 nvls channels, 32 p2p channels, 32 p2p
  // channels per peer" (2.18: without collnet).
  if (words.size() >= 6 && words[1] == "coll" && words[2] == "channels,") {
    keep_max(log_.coll_channels, to_count(words[0]));
    for (size_t i = 3; i + 2 < words.size(); ++i) {
      if (words[i + 2] != "channels," && words[i + 2] != "channels") continue;
      if (words[i + 1] == "collnet") keep_max(log_.collnet_channels, to_count(words[i]));
      if (words[i + 1] == "nvls") keep_max(log_.nvls_channels, to_count(words[i]));
    }
    return;
  }
  // "NVLS comm 0x... headRank 0 nHeads 8 ... nvlsChannels 16" and "NVLS tuning: nChannels 16".
  if (!words.empty() && words[0] == "NVLS") {
    keep_max(log_.nvls_channels, count_after(words, "nvlsChannels"));
    if (words.size() >= 2 && words[1] == "tuning:")
      keep_max(log_.nvls_channels, count_after(words, "nChannels"));
    return;
  }
  read_env(words);
}

}  // namespace

void LineReader::merge(const NcclInfoLog& other) {
  if (!log_.nccl_version) log_.nccl_version = other.nccl_version;
  if (!log_.cuda_version) log_.cuda_version = other.cuda_version;
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
  log_.net_connections += other.net_connections;
  log_.gdr_connections += other.gdr_connections;
  if (other.nvls_available) log_.nvls_available = log_.nvls_available.value_or(true) && *other.nvls_available;
  keep_max(log_.nvls_channels, other.nvls_channels);
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
}

void NcclInfoLogReader::add(const NcclInfoLog& other) {
  LineReader(log_, index_, "").merge(other);
}

void NcclInfoLogReader::add(std::string_view text, std::string_view source) {
  // Invalid UTF-8 becomes '?' so that every string of the result can go into JSON.
  const std::string repaired = is_valid_utf8(text) ? std::string() : repaired_utf8(text);
  std::string_view rest = repaired.empty() ? text : std::string_view(repaired);
  LineReader reader(log_, index_, source);
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

namespace {

template <typename T>
nlohmann::ordered_json or_null(const std::optional<T>& value) {
  return value ? nlohmann::ordered_json(*value) : nlohmann::ordered_json(nullptr);
}

}  // namespace

nlohmann::ordered_json nccl_info_log_to_json(const NcclInfoLog& log) {
  nlohmann::ordered_json devices = nlohmann::ordered_json::array();
  for (const NcclNetDevice& d : log.devices)
    devices.push_back({{"name", d.name},
                       {"port", or_null(d.port)},
                       {"link_layer", or_null(d.link_layer)},
                       {"sharp", d.sharp}});
  nlohmann::ordered_json choices = nlohmann::ordered_json::array();
  for (const NcclLoggedChoice& c : log.choices)
    choices.push_back({{"op", or_null(c.op)}, {"bytes", c.bytes}, {"algo", c.algo}, {"proto", c.proto}});
  nlohmann::ordered_json kernel_choices = nlohmann::ordered_json::array();
  for (const NcclKernelChoice& c : log.kernel_choices)
    kernel_choices.push_back({{"op", c.op},
                              {"bytes", c.bytes},
                              {"path", c.path},
                              {"kernel", c.kernel},
                              {"channels", or_null(c.channels)},
                              {"threads", or_null(c.threads)},
                              {"works", or_null(c.works)},
                              {"nvls_sync", c.nvls_sync}});
  nlohmann::ordered_json fabrics = nlohmann::ordered_json::array();
  for (const NcclMnnvlFabric& f : log.mnnvl_fabrics)
    fabrics.push_back({{"fabric_uuid", f.fabric_uuid},
                       {"clique_id", f.clique_id},
                       {"state", f.state},
                       {"state_name", mnnvl_state_name(f.state)},
                       {"health_mask", f.health_mask},
                       {"health_problems", mnnvl_health_problems(f.health_mask)},
                       {"lines", f.lines},
                       {"first", {{"source", f.first.source}, {"line", f.first.line}}}});
  nlohmann::ordered_json tables = nlohmann::ordered_json::array();
  for (const NcclModelTable& t : log.model_tables) {
    nlohmann::ordered_json cells = nlohmann::ordered_json::array();
    for (const NcclModelCell& c : t.cells)
      cells.push_back({{"op", c.op},
                       {"algo", c.algo},
                       {"proto", c.proto},
                       {"enabled", c.algbw > 0},
                       {"latency_us", c.latency_us},
                       {"algbw", c.algbw},
                       {"busbw", or_null(model_busbw(c, t.ranks))},
                       {"max_threads", or_null(c.max_threads)}});
    tables.push_back({{"ranks", or_null(t.ranks)}, {"cells", std::move(cells)}});
  }
  nlohmann::ordered_json warnings = nlohmann::ordered_json::array();
  for (const NcclLogLine& w : log.warnings)
    warnings.push_back({{"source", w.source}, {"line", w.line}, {"text", w.text}});
  nlohmann::ordered_json env = nlohmann::ordered_json::object();
  for (const auto& [name, value] : log.env) env[name] = value;
  return {{"schema", "nccltune/nccl-log/v1"},
          {"nccl_version", or_null(log.nccl_version)},
          {"cuda_version", or_null(log.cuda_version)},
          {"ranks", or_null(log.ranks)},
          {"nodes", or_null(log.nodes)},
          {"local_ranks", or_null(log.local_ranks)},
          {"hosts", log.hosts},
          {"network",
           {{"plugin", or_null(log.net_plugin)},
            {"transport", or_null(log.transport)},
            {"plugin_library", or_null(log.plugin_library)},
            {"devices", std::move(devices)}}},
          {"gdr", {{"connections", log.net_connections}, {"with_gdr", log.gdr_connections}}},
          {"nvls", {{"available", or_null(log.nvls_available)}, {"channels", or_null(log.nvls_channels)}}},
          {"mnnvl", or_null(log.mnnvl)},
          {"mnnvl_fabric",
           {{"clique_size", or_null(log.mnnvl_clique_size)},
            {"nvl_domain_size", or_null(log.mnnvl_nvl_domain_size)},
            {"clique_ranks", log.mnnvl_clique_ranks},
            {"fabrics", std::move(fabrics)}}},
          {"channels",
           {{"coll", or_null(log.coll_channels)},
            {"nvls", or_null(log.nvls_channels)},
            {"collnet", or_null(log.collnet_channels)}}},
          {"env", std::move(env)},
          {"tuner",
           {{"loaded", or_null(log.tuner_loaded)},
            {"fallback", or_null(log.tuner_fallback)},
            {"requested", or_null(log.tuner_requested)}}},
          {"choices", std::move(choices)},
          {"kernel_choices", std::move(kernel_choices)},
          {"tuning_tables", std::move(tables)},
          {"warnings", std::move(warnings)},
          {"warnings_dropped", log.warnings_dropped}};
}

}  // namespace nccltune
