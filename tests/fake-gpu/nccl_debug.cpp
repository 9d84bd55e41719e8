#include "nccl_debug.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <utility>

#include "base/text_words.h"
#include "profile/nccl_names.h"

namespace nccltune::fake {

namespace {

struct SubsystemName {
  std::string_view name;
  std::uint32_t bit;
};

constexpr SubsystemName kSubsystems[] = {
    {"INIT", kSubsysInit},
    {"COLL", kSubsysColl},
    {"P2P", kSubsysP2p},
    {"SHM", kSubsysShm},
    {"NET", kSubsysNet},
    {"GRAPH", kSubsysGraph},
    {"TUNING", kSubsysTuning},
    {"ENV", kSubsysEnv},
    {"ALLOC", kSubsysAlloc},
    {"CALL", kSubsysCall},
    {"PROXY", kSubsysProxy},
    {"NVLS", kSubsysNvls},
    {"BOOTSTRAP", kSubsysBootstrap},
    {"REG", kSubsysReg},
    {"PROFILE", kSubsysProfile},
    {"RAS", kSubsysRas},
    {"ALL", kSubsysAll},
};

// NCCL's subsystem mask from NCCL_DEBUG_SUBSYS: unknown names are ignored, as NCCL ignores them.
std::uint32_t subsystem_mask(std::string_view list) {
  const bool invert = !list.empty() && list.front() == '^';
  if (invert) list.remove_prefix(1);
  std::uint32_t mask = 0;
  while (!list.empty()) {
    const std::size_t comma = list.find(',');
    const std::string name = upper_ascii(list.substr(0, comma));
    for (const SubsystemName& known : kSubsystems)
      if (known.name == name) mask |= known.bit;
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
  }
  return invert ? ~mask : mask;
}

// ncclAlgoToString / ncclProtoToString: the names NCCL 2.24 and later print.
std::string_view printed_algo(std::string_view algo) {
  static constexpr std::string_view kNames[] = {
      "TREE", "RING", "COLLNET_DIRECT", "COLLNET_CHAIN", "NVLS", "NVLS_TREE", "PAT"};
  const auto index = nccl_algorithm_index(algo);
  return index ? kNames[*index] : algo;
}

std::string_view printed_proto(std::string_view proto) {
  static constexpr std::string_view kNames[] = {"LL", "LL128", "SIMPLE"};
  const auto index = nccl_protocol_index(proto);
  return index ? kNames[*index] : proto;
}

// "2.28.9" from 22809 (NCCL_VERSION_CODE since 2.9: major*10000 + minor*100 + patch).
std::string version_text(int code) {
  return std::to_string(code / 10000) + "." + std::to_string(code / 100 % 100) + "." +
         std::to_string(code % 100);
}

std::string two_digits(int n) {
  return (n < 10 ? "0" : "") + std::to_string(n);
}

// The first NCCL whose MNNVL line ends in " nvlDomainSize %d" (src/mnnvl.cc, 2.30.3).
constexpr int kNvlDomainSizeVersion = 23003;

// busIdToInt64 (src/misc/utils.cc): the PCI address's hex digits, ':' and '.' skipped.
std::uint64_t bus_id(std::string_view pci) {
  std::uint64_t id = 0;
  for (const char c : pci) {
    if (c == ':' || c == '.') continue;
    const int digit = std::isdigit(static_cast<unsigned char>(c)) ? c - '0'
                      : (c >= 'a' && c <= 'f')                   ? c - 'a' + 10
                      : (c >= 'A' && c <= 'F')                   ? c - 'A' + 10
                                                                 : -1;
    if (digit < 0) break;
    id = id * 16 + static_cast<std::uint64_t>(digit);
  }
  return id;
}

bool is_debug_variable(const std::string& name) {
  return name == "NCCL_DEBUG" || name == "NCCL_DEBUG_SUBSYS" || name == "NCCL_DEBUG_FILE";
}

// NET/IB's device list, "[0]mlx5_0:1/IB [1]mlx5_1:1/IB [RO]", or NET/Socket's, "[0]eth0:10.0.0.1<0>".
std::string device_list(const NcclLogModel& log) {
  std::string out;
  for (std::size_t i = 0; i < log.devices.size(); ++i) {
    out += (i ? " [" : "[") + std::to_string(i) + "]" + log.devices[i];
    out += log.transport == NcclTransport::socket ? ":10.0.0." + std::to_string(i + 1) + "<0>"
                                                  : ":1/" + std::string(to_string(log.transport));
  }
  return log.transport == NcclTransport::socket ? out : out + " [RO]";
}

// The network's name in "Using network X" and in "via NET/X/<dev>": RoCE ports are IB's.
std::string_view network_name(NcclTransport transport) {
  return transport == NcclTransport::socket ? "Socket" : "IB";
}

}  // namespace

DebugSettings debug_settings(const NcclEnv& env) {
  DebugSettings settings;
  if (const auto level = env.find("NCCL_DEBUG"); level != env.end()) {
    const std::string name = upper_ascii(level->second);
    settings.info = name == "INFO" || name == "TRACE";
    settings.warn = settings.info || name == "WARN";
  }
  if (const auto list = env.find("NCCL_DEBUG_SUBSYS"); list != env.end())
    settings.subsystems = subsystem_mask(list->second);
  if (const auto file = env.find("NCCL_DEBUG_FILE"); file != env.end()) settings.file = file->second;
  return settings;
}

std::string debug_file_name(std::string_view pattern, std::string_view host, long pid) {
  std::string out;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%' || i + 1 == pattern.size()) {
      out += pattern[i];
      continue;
    }
    const char code = pattern[++i];
    if (code == 'h')
      out += host;
    else if (code == 'p')
      out += std::to_string(pid);
    else if (code == '%')
      out += '%';
    else
      out += {'%', code};
  }
  return out;
}

std::string process_host(std::string_view hostname, const char* emulate_nodes, int world_rank,
                         int world_size) {
  std::string host(hostname.substr(0, hostname.find('.')));  // NCCL prints the name to the first '.'
  if (host.empty()) host = "localhost";
  if (world_rank < 0 || world_rank >= world_size) return host;
  const int nodes = emulated_host_count(emulate_nodes, world_size);
  if (nodes == 1) return host;
  return host + "-node" + std::to_string(world_rank / (world_size / nodes));
}

int emulated_host_count(const char* emulate_nodes, int world_size) {
  if (emulate_nodes == nullptr || world_size < 1) return 1;
  char* end = nullptr;
  const long nodes = std::strtol(emulate_nodes, &end, 10);
  if (end == emulate_nodes || *end != '\0' || nodes < 2 || nodes > world_size || world_size % nodes != 0) return 1;
  return static_cast<int>(nodes);
}

RankPlace place_in_comm(const std::vector<std::string>& host_of_rank, int rank) {
  RankPlace place;
  place.host = host_of_rank.at(static_cast<std::size_t>(rank));
  std::vector<std::string> hosts;  // in order of first appearance
  for (const std::string& host : host_of_rank)
    if (std::find(hosts.begin(), hosts.end(), host) == hosts.end()) hosts.push_back(host);
  place.nodes = static_cast<int>(hosts.size());
  place.node = static_cast<int>(std::find(hosts.begin(), hosts.end(), place.host) - hosts.begin());
  place.local_ranks = 0;
  place.local_rank = 0;
  for (std::size_t r = 0; r < host_of_rank.size(); ++r) {
    if (host_of_rank[r] != place.host) continue;
    if (static_cast<int>(r) < rank) ++place.local_rank;
    ++place.local_ranks;
  }
  place.device = place.local_rank;
  return place;
}

RankPlace place_in_comm(const std::vector<std::string>& host_of_rank, const std::vector<std::string>& node_of_rank,
                        int rank) {
  RankPlace place = place_in_comm(node_of_rank, rank);
  const RankPlace on_host = place_in_comm(host_of_rank, rank);
  place.host = on_host.host;
  place.device = on_host.device;
  return place;
}

std::vector<int> emulated_node_indexes(const std::vector<std::string>& host_of_rank, bool emulated) {
  std::vector<std::string> hosts;  // in order of first appearance
  std::vector<int> indexes;
  for (const std::string& host : host_of_rank) {
    auto known = std::find(hosts.begin(), hosts.end(), host);
    if (known == hosts.end()) known = hosts.insert(hosts.end(), host);
    int k = -1;
    const std::size_t suffix = host.rfind("-node");
    if (emulated && suffix != std::string::npos) {
      const char* first = host.data() + suffix + 5;
      const char* last = host.data() + host.size();
      const auto [end, error] = std::from_chars(first, last, k);
      if (first == last || error != std::errc() || end != last) k = -1;
    }
    indexes.push_back(k >= 0 ? k : static_cast<int>(known - hosts.begin()));
  }
  return indexes;
}

CommNodes comm_nodes(const std::vector<std::string>& host_of_rank, int rank, bool emulated) {
  return comm_nodes(host_of_rank, host_of_rank, rank, emulated);
}

CommNodes comm_nodes(const std::vector<std::string>& host_of_rank, const std::vector<std::string>& node_of_rank,
                     int rank, bool emulated) {
  const std::vector<int> indexes = emulated_node_indexes(host_of_rank, emulated);
  CommNodes nodes;
  nodes.node = indexes.at(static_cast<std::size_t>(rank));
  nodes.present = indexes;
  std::sort(nodes.present.begin(), nodes.present.end());
  nodes.present.erase(std::unique(nodes.present.begin(), nodes.present.end()), nodes.present.end());
  const RankPlace place = place_in_comm(node_of_rank, rank);
  nodes.count = place.nodes;
  nodes.local_ranks = place.local_ranks;
  nodes.fewest_local_ranks = static_cast<int>(node_of_rank.size());
  for (const std::string& node : node_of_rank)
    nodes.fewest_local_ranks = std::min(
        nodes.fewest_local_ranks, static_cast<int>(std::count(node_of_rank.begin(), node_of_rank.end(), node)));
  return nodes;
}

std::vector<LogLine> init_lines(const FakeModel& model, const NcclEnv& env, const CommModel& comm,
                                const RankPlace& place, const MnnvlPlace& mnnvl) {
  const NcclLogModel& log = model.nccl_log;
  std::vector<LogLine> lines;
  auto add = [&](std::uint32_t subsystems, std::string message) {
    lines.push_back({subsystems, std::move(message)});
  };
  if (comm.rank == 0) add(kSubsysAll, "NCCL version " + version_text(model.nccl_version) + "+cuda13.0");
  for (const auto& [name, value] : env)
    if (!is_debug_variable(name)) add(kSubsysEnv, name + " set by environment to " + value);
  const std::string network(network_name(log.transport));
  if (log.transport == NcclTransport::socket)
    add(kSubsysInit | kSubsysNet, "NET/Socket : Using " + device_list(log));
  else
    add(kSubsysInit | kSubsysNet, "NET/IB : Using " + device_list(log) + "; OOB eth0:10.0.0.1<0>");
  add(kSubsysInit | kSubsysNet, "Using network " + network);
  const int device = place.device;
  if (mnnvl.fabric && model.mnnvl) {
    // fillInfo (src/init.cc), on every rank whose fabric state is not NOT_SUPPORTED; the fake's is
    // COMPLETED (3).
    char line[160];
    const std::string pci = model.devices[static_cast<std::size_t>(device) % model.devices.size()].pci;
    std::snprintf(line, sizeof line, "MNNVL busId 0x%llx fabric UUID %s cliqueId 0x%x state 3 healthMask 0x%x",
                  static_cast<unsigned long long>(bus_id(pci)), fabric_uuid(mnnvl.domain).c_str(), kFabricCliqueId,
                  model.mnnvl->health_mask);
    add(kSubsysInit, line);
  }
  if (mnnvl.enabled) {
    // ncclMnnvlCheck (src/mnnvl.cc) once MNNVL is on; nvlDomainSize from 2.30.3.
    char line[160];
    std::snprintf(line, sizeof line, "MNNVL 1 cliqueId %x cliqueSize %d cliqueRank %d", kFabricCliqueId,
                  mnnvl.clique_size, mnnvl.clique_rank);
    add(kSubsysInit, std::string(line) + (model.nccl_version >= kNvlDomainSizeVersion
                                              ? " nvlDomainSize " + std::to_string(mnnvl.clique_size)
                                              : ""));
  }
  add(kSubsysInit, "comm 0x7f0000000000 rank " + std::to_string(comm.rank) + " nRanks " +
                       std::to_string(comm.nranks) + " nNodes " + std::to_string(place.nodes) +
                       " localRanks " + std::to_string(place.local_ranks) + " localRank " +
                       std::to_string(place.local_rank) + " MNNVL " + (mnnvl.enabled ? "1" : "0"));
  // ncclNvlsInit (src/transport/nvls.cc), on every node count: NVLS's channels or 0.
  add(kSubsysInit | kSubsysNvls, std::string("NVLS multicast support is ") + (comm.nvls_channels > 0 ? "" : "not ") +
                                     "available on dev " + std::to_string(device) + " (NVLS_NCHANNELS " +
                                     std::to_string(comm.nvls_channels) + ")");
  // The ring crosses to the next node from each node's last rank, once per channel.
  if (place.nodes > 1 && place.local_rank == place.local_ranks - 1) {
    const int next = (comm.rank + 1) % comm.nranks;
    for (int channel = 0; channel < comm.channels; ++channel) {
      const std::size_t nic = static_cast<std::size_t>(channel) % log.devices.size();
      const bool gdr = log.gdr && log.transport != NcclTransport::socket;
      add(kSubsysInit | kSubsysNet, "Channel " + two_digits(channel) + "/0 : " + std::to_string(comm.rank) +
                                        "[" + std::to_string(device) + "] -> " + std::to_string(next) +
                                        "[0] [send] via NET/" + network + "/" + std::to_string(nic) +
                                        (gdr ? "/GDRDMA" : ""));
    }
  }
  add(kSubsysInit, std::to_string(comm.channels) + " coll channels, " + std::to_string(comm.channels) +
                       " collnet channels, " + std::to_string(comm.nvls_channels) + " nvls channels, " +
                       std::to_string(2 * comm.channels) + " p2p channels, " +
                       std::to_string(2 * comm.channels) + " p2p channels per peer");
  return lines;
}

std::vector<std::string> tuning_table_lines(const std::vector<TuningTableRow>& rows) {
  // The names are ncclAlgoStr and ncclProtoStr (src/init.cc: "Tree", "Simple"), not the upper-case
  // ones of the per-collective lines. NCCL's maxThreads per protocol on recent GPUs (NCCL_LL_MAX_NTHREADS, NCCL_LL128_MAX_NTHREADS,
  // NCCL_SIMPLE_MAX_NTHREADS in src/include/device.h).
  constexpr int kMaxThreads[] = {512, 640, 512};
  constexpr std::size_t kAlgos = kNcclAlgorithms.size();
  char cell[64];
  const auto text = [&](const char* format, auto... values) {
    std::snprintf(cell, sizeof cell, format, values...);
    return std::string(cell);
  };
  std::vector<std::string> lines;
  for (std::size_t block = 0; block < (kAlgos + 2) / 3; ++block) {
    const std::size_t end = std::min(block * 3 + 3, kAlgos);
    std::string algorithms = "  Algorithm   |";
    std::string protocols = "  Protocol    |";
    std::string threads = " Max NThreads |";
    for (std::size_t a = block * 3; a < end; ++a) {
      algorithms += text(" %14s   %14s   %14s |", "", std::string(kNcclAlgorithms[a]).c_str(), "");
      for (const int count : kMaxThreads) threads += text(" %14d |", count);
    }
    for (int p = 0; p < 9; ++p)  // nine, even in PAT's block, as NCCL prints them
      protocols += text(" %14s |", std::string(kNcclProtocols[static_cast<std::size_t>(p % 3)]).c_str());
    lines.insert(lines.end(), {algorithms, protocols, threads});
    for (const TuningTableRow& row : rows) {
      std::string line = text("%13s |", std::string(row.function).c_str());
      for (std::size_t a = block * 3; a < end; ++a)
        for (const std::string_view proto : kNcclProtocols) {
          const AlgoProto pair{std::string(kNcclAlgorithms[a]), std::string(proto)};
          const auto algo = row.model->algos.find(pair.algo);
          PairCost cost;
          if (!row.model->nccl_model.empty()) {  // NCCL's own model, where the model gives it
            cost = nccl_pair_cost(*row.model, *row.comm, pair, row.op).value_or(PairCost{});
            const auto& allowed = row.comm->allowed;
            if (std::find(allowed.begin(), allowed.end(), pair) == allowed.end()) cost.algbw_gbps = 0;
          } else if (algo != row.model->algos.end() && algo->second.protos.contains(pair.proto)) {
            cost = pair_cost(*row.model, *row.comm, pair, row.op);
            const auto& allowed = row.comm->allowed;
            if (std::find(allowed.begin(), allowed.end(), pair) == allowed.end()) cost.algbw_gbps = 0;
          }
          line += text("%8.1f/%6.1f |", cost.lat_us, cost.algbw_gbps);
        }
      lines.push_back(std::move(line));
    }
  }
  return lines;
}

std::string tuning_message(std::string_view function, std::uint64_t bytes, const AlgoProto& pair,
                           int channels) {
  return std::string(function) + ": " + std::to_string(bytes) + " Bytes -> Algo " +
         std::string(printed_algo(pair.algo)) + " proto " + std::string(printed_proto(pair.proto)) +
         " channel{Lo..Hi}={0.." + std::to_string(std::max(channels, 1) - 1) + "}";
}

DebugLog::DebugLog(const DebugSettings& settings, std::string host, int device)
    : host_(std::move(host)), device_(device) {
  if (!settings.info && !settings.warn) return;
  mask_ = settings.info ? settings.subsystems : 0;
  warn_ = true;
  out_ = stdout;
  if (settings.file.empty()) return;
  // As NCCL: a file that cannot be opened leaves the lines on stdout. NCCL opens it once per
  // process ("w", ncclDebugInit in src/debug.cc) and every communicator of the process writes
  // there, a split one too; it stays open. Opened per communicator, a second one would truncate
  // the first one's lines and write over them.
  const std::string path = debug_file_name(settings.file, host_, static_cast<long>(getpid()));
  static std::mutex opening;
  static auto* opened = new std::map<std::string, std::FILE*>;  // never freed, as NCCL's file
  const std::lock_guard<std::mutex> lock(opening);
  std::FILE*& file = (*opened)[path];
  if (file == nullptr) file = std::fopen(path.c_str(), "w");
  if (file != nullptr) out_ = file;
}

DebugLog::DebugLog(DebugLog&& other) noexcept
    : mask_(other.mask_),
      warn_(other.warn_),
      host_(std::move(other.host_)),
      device_(other.device_),
      out_(other.out_) {
  other.out_ = nullptr;
  other.mask_ = 0;
  other.warn_ = false;
}

DebugLog& DebugLog::operator=(DebugLog&& other) noexcept {
  if (this != &other) {
    mask_ = std::exchange(other.mask_, 0);
    warn_ = std::exchange(other.warn_, false);
    host_ = std::move(other.host_);
    device_ = other.device_;
    out_ = std::exchange(other.out_, nullptr);
  }
  return *this;
}

DebugLog::~DebugLog() = default;

bool DebugLog::wants(std::uint32_t subsystems) const {
  return out_ != nullptr && (mask_ & subsystems) != 0;
}

void DebugLog::warn(std::string_view message) {
  if (out_ == nullptr || !warn_) return;
  std::fprintf(out_, "%s:%ld:%ld [%d] NCCL WARN %.*s\n", host_.c_str(), static_cast<long>(getpid()),
               static_cast<long>(syscall(SYS_gettid)), device_, static_cast<int>(message.size()),
               message.data());
  std::fflush(out_);
}

void DebugLog::info(std::uint32_t subsystems, std::string_view message) {
  if (!wants(subsystems)) return;
  std::fprintf(out_, "%s:%ld:%ld [%d] NCCL INFO %.*s\n", host_.c_str(), static_cast<long>(getpid()),
               static_cast<long>(syscall(SYS_gettid)), device_, static_cast<int>(message.size()),
               message.data());
  std::fflush(out_);
}

}  // namespace nccltune::fake
