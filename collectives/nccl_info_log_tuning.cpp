// The tuner and what NCCL chose with it: the tuner plugin lines, the TUNING lines (per-size
// choices, the symmetric-kernel and copy-engine ones) and each process's tuning table.
#include "collectives/nccl_info_log_lines.h"

#include <algorithm>
#include <cctype>
#include <utility>

#include "base/text_words.h"

namespace nccltune::nccl_info_detail {
namespace {

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

}  // namespace

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

void LineReader::read_tuner(std::string_view body) {
  body = trimmed(body.substr(std::string_view("TUNER/Plugin:").size()));  // the caller matched it
  if (body.starts_with("Using internal tuner") ||
      body.find("using internal tuner") != std::string_view::npos ||
      body.find("Using internal tuner") != std::string_view::npos || body.starts_with("No plugin found"))
    log_.tuner_fallback = "internal";
  if (body.starts_with("Failed to find ncclTunerPlugin")) log_.tuner_symbol_missing = true;
  if (body.starts_with("NCCL_TUNER_PLUGIN set to "))
    log_.tuner_requested = std::string(trimmed(body.substr(25)));
  // 2.21 to 2.27: the library NCCL opened, named by NCCL_TUNER_PLUGIN or NCCL_NET_PLUGIN.
  if (constexpr std::string_view kFromEnv = "Plugin name set by env to ";
      body.starts_with(kFromEnv) && !log_.tuner_library_from_env)
    log_.tuner_library_from_env = std::string(trimmed(body.substr(kFromEnv.size())));
  // "Could not find: libnccl-tuner.so. Using internal tuner plugin." (2.23 to 2.27); 2.28+ ends
  // at the names and may then find a tuner in the net plugin ("Using X (vN)" follows).
  if (body.starts_with("Could not find:")) {
    log_.tuner_not_found = true;
    // The names NCCL tried; one other than the default libnccl-tuner.so (and the net plugin's
    // libraries, probed for a packed tuner) came from NCCL_TUNER_PLUGIN: 2.26 and 2.27 print no
    // other sign of the request.
    for (std::string_view name : split_words(body.substr(15))) {
      const bool last = name.ends_with('.');
      if (last) name.remove_suffix(1);
      const size_t slash = name.rfind('/');
      const std::string_view file = slash == std::string_view::npos ? name : name.substr(slash + 1);
      if (!name.empty() && file != "libnccl-tuner.so" && !file.starts_with("libnccl-net") && !log_.tuner_requested)
        log_.tuner_requested = std::string(name);
      if (last) break;
    }
  }
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

bool LineReader::read_tuner_init(const std::vector<std::string_view>& words) {
  // NCCL's example tuner (plugins/tuner/example/plugin.c) and the plugins built on it: "TUNER/
  // ExamplePlugin: Initializing tuner for 4 nodes, 32 ranks, 1 NVL domains" (2.28+), "Initializing
  // tuner for 4 nodes, 32 ranks" before: the plugin's init ran for a communicator of that shape.
  for (size_t i = 0; i + 6 < words.size(); ++i) {
    if (words[i] != "Initializing" || words[i + 1] != "tuner" || words[i + 2] != "for" ||
        !words[i + 4].starts_with("nodes") || !words[i + 6].starts_with("ranks"))
      continue;
    std::string_view ranks = words[i + 5];
    const auto nodes = to_count(words[i + 3]);
    const auto count = to_count(ranks);
    if (!nodes || !count) return false;
    log_.tuner_initialized = true;
    keep_max(log_.nodes, nodes);
    keep_max(log_.ranks, count);
    return true;
  }
  return false;
}

bool LineReader::read_enabled_matrix(std::string_view body) {
  // Under "Enabled NCCL Func/Proto/Algo Matrix:" (src/graph/tuning.cc, rank 0, when NCCL_ALGO or
  // NCCL_PROTO is set), bare lines: "     Function |       LL     LL128    Simple   |          Tree
  // Ring ... NVLS NVLSTree PAT" then "%13s | " per function with 0 or 1 per protocol and algorithm.
  std::vector<std::string_view> pieces;
  for (std::string_view rest = body;;) {
    const size_t bar = rest.find('|');
    pieces.push_back(trimmed(rest.substr(0, bar)));
    if (bar == std::string_view::npos) break;
    rest.remove_prefix(bar + 1);
  }
  if (pieces.size() != 3) return false;
  const auto algos = split_words(pieces[2]);
  if (pieces[0] == "Function") {
    matrix_algos_.assign(algos.begin(), algos.end());
    return true;
  }
  if (matrix_algos_.empty() || algos.size() != matrix_algos_.size() ||
      !std::all_of(algos.begin(), algos.end(), [](std::string_view w) { return w == "0" || w == "1"; }))
    return false;
  for (size_t i = 0; i < algos.size(); ++i) {
    if (matrix_algos_[i] != "NVLS" && matrix_algos_[i] != "NVLSTree") continue;
    log_.nvls_in_enabled_matrix = log_.nvls_in_enabled_matrix.value_or(false) || algos[i] == "1";
  }
  return true;
}

}  // namespace nccltune::nccl_info_detail

namespace nccltune {

std::optional<std::string> tuner_in_effect(const NcclInfoLog& log) {
  if (log.tuner_loaded && !log.tuner_declined) return log.tuner_loaded;
  if (log.tuner_loaded || log.tuner_fallback || log.tuner_not_found) return std::string("internal");
  return std::nullopt;
}

}  // namespace nccltune
