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

}  // namespace nccltune::nccl_info_detail
