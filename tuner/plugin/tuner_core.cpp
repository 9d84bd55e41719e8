// The NCCL tuner plugin's core (libnccl-tuner-nccltune.so, NCCL_TUNER_PLUGIN=nccltune), behind the
// per-ABI tables of tuner_v4.cpp ... tuner_v7.cpp (tuner_core.h). This library is loaded into every
// NCCL application, so nothing may escape it: every entry point catches, logs through NCCL's logger
// and returns ncclSuccess, and a communicator without a usable profile keeps NCCL's own choices.
#include "plugin/tuner_core.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "collectives/tuner_control.h"
#include "plugin/communicator_profile.h"

// The control block, the one export that is not an NCCL table (exports.map): defined at the end
// of this file.
extern "C" nccltune::NcclTuneControl nccltuneControl_v2;

namespace nccltune::tuner_core {
namespace {

using namespace nccl_abi;

void log_line(ncclDebugLogger_t logger, ncclDebugLogLevel level, const std::string& text) {
  // "%s": paths and profile names are data, never part of the format.
  if (logger != nullptr) logger(level, NCCL_TUNING, __FILE__, __LINE__, "TUNER/nccltune: %s", text.c_str());
}

// For the catch handlers of the noexcept entry points: builds no string, so it cannot throw
// (a std::bad_alloc escaping there would terminate the application).
void log_failure(ncclDebugLogger_t logger, const char* entry_point, const char* reason) noexcept {
  if (logger != nullptr)
    logger(NCCL_LOG_WARN, NCCL_TUNING, __FILE__, __LINE__,
           "TUNER/nccltune: %s failed: %s; NCCL's own choices stand", entry_point, reason);
}

// One communicator's state: its profile's ranges (shared with the process's other communicators
// of its shape; null without a profile), those ranges as cells of the ABI's cost table (resolved
// at init), and which ranges have been reported in the log (once each, at their first use, so
// NCCL_DEBUG=INFO shows what the plugin did without a line per call).
struct TunerContext {
  ncclDebugLogger_t logger = nullptr;
  std::shared_ptr<const Profile> profile;
  // Per NCCL function (ncclFunc_t): its ranges with their cells; per_size null for an untuned one.
  std::array<ResolvedRanges, nccl_abi::ncclNumFuncs> ranges;
  // Per NCCL function (ncclFunc_t), one flag per range of its per_size.
  std::array<std::unique_ptr<std::atomic<bool>[]>, nccl_abi::ncclNumFuncs> range_reported;
};

std::string range_text(const SizeChoice& range) {
  return std::to_string(range.min_bytes) + ".." + std::to_string(range.max_bytes) + " bytes";
}

std::string choice_text(const CostTableChoice& choice, const SizeChoice& range, std::string_view op) {
  const std::string cell = std::string(nccl_algorithm_name(choice.algorithm)) + "/" +
                           std::string(nccl_protocol_name(choice.protocol));
  const std::string channels =
      choice.channels > 0 ? ", " + std::to_string(choice.channels) + " channels" : "";
  switch (choice.outcome) {
    case ChoiceOutcome::marked: return std::string(op) + " " + range_text(range) + ": " + cell + channels;
    case ChoiceOutcome::channels_only:
      return std::string(op) + " " + range_text(range) + ": NCCL's algorithm and protocol" + channels;
    case ChoiceOutcome::left_to_nccl:
      return std::string(op) + " " + range_text(range) + ": algo '" + range.algo + "', proto '" +
             range.proto + "' leave the choice to NCCL";
    case ChoiceOutcome::outside_table:
      return std::string(op) + " " + range_text(range) + ": " + range.algo + "/" + range.proto +
             " is not in this NCCL's cost table; NCCL's choice stands";
    case ChoiceOutcome::unavailable:
      return std::string(op) + " " + range_text(range) + ": " + cell +
             " is not available to this communicator; NCCL's choice stands";
    case ChoiceOutcome::other_collective:
    case ChoiceOutcome::no_range: break;
  }
  return {};
}

void report_once(TunerContext& context, ncclFunc_t collective, const std::vector<SizeChoice>& per_size,
                 const CostTableChoice& choice) {
  const auto& reported = context.range_reported[static_cast<std::size_t>(collective)];
  if (!choice.range || !reported || reported[*choice.range].exchange(true)) return;
  log_line(context.logger, NCCL_LOG_INFO,
           choice_text(choice, per_size[*choice.range], collective_name(collective)));
}

// Service counting (collectives/tuner_control.h): `why` replaces the reason for declining, when
// given; a call with none keeps the one init wrote.
void set_decline_reason(NcclTuneControl& control, std::string_view why) noexcept {
  const std::size_t n = std::min(why.size(), sizeof control.declined_why - 1);
  std::memcpy(control.declined_why, why.data(), n);
  control.declined_why[n] = '\0';
}

void count_call(NcclTuneControl& control, const CostTableChoice& choice,
                const std::vector<SizeChoice>* per_size, ncclFunc_t collective) {
  switch (choice.outcome) {
    case ChoiceOutcome::marked:
    case ChoiceOutcome::channels_only:
    case ChoiceOutcome::left_to_nccl: ++control.served; return;
    case ChoiceOutcome::outside_table:
    case ChoiceOutcome::unavailable:
      ++control.declined;
      if (per_size && choice.range)
        set_decline_reason(control,
                           choice_text(choice, (*per_size)[*choice.range], collective_name(collective)));
      return;
    case ChoiceOutcome::other_collective:
    case ChoiceOutcome::no_range: return;
  }
}

// The ranges of `collective`; none (other_collective) for a value outside ncclFunc_t.
const ResolvedRanges& ranges_for(const TunerContext& context, ncclFunc_t collective) {
  static const ResolvedRanges none;
  const auto f = static_cast<std::size_t>(collective);
  return f < context.ranges.size() ? context.ranges[f] : none;
}

// Pair mode (collectives/tuner_control.h): the worker's pair, whatever the profile says,
// when NCCL's table lets this communicator run it; else NCCL's own choice, counted unavailable.
void force_pair(NcclTuneControl& control, float* cells, int num_algorithms, int num_protocols) noexcept {
  const bool in_table = control.algorithm >= 0 && control.algorithm < num_algorithms &&
                        control.protocol >= 0 && control.protocol < num_protocols;
  float* cell = in_table ? &cells[control.algorithm * num_protocols + control.protocol] : nullptr;
  if (cell == nullptr || *cell < 0) {
    ++control.unavailable;
    return;
  }
  *cell = 0.0f;
  ++control.forced;
}

}  // namespace

ncclResult_t init(const InitRequest& request, void** context_out) noexcept {
  const ncclDebugLogger_t logger = request.logger;
  const std::size_t ranks = request.ranks, nodes = request.nodes;
  if (context_out == nullptr) return ncclSuccess;
  *context_out = nullptr;
  if (request.indices == nullptr) return ncclSuccess;  // an adapter's mistake: NCCL's choices stand
  try {
    auto context = std::make_unique<TunerContext>();
    context->logger = logger;
    const CachedCommunicatorProfile cached =
        cached_communicator_profile(profile_locations_from_environment(), ranks, nodes, geteuid());
    // A communicator of a shape looked up before repeats what was found, as INFO: a broken store
    // warns once per process and shape, not at every communicator.
    std::string why_none;
    for (const PluginLogLine& line : cached.found->log) {
      if (cached.from_cache)
        log_line(logger, NCCL_LOG_INFO, line.text + " (as found for an earlier communicator of this shape)");
      else
        log_line(logger, line.warning ? NCCL_LOG_WARN : NCCL_LOG_INFO, line.text);
      why_none += (why_none.empty() ? "" : "; ") + line.text;
    }
    if (!cached.found->profile && nccltuneControl_v2.count_service != 0)
      set_decline_reason(nccltuneControl_v2,
                         why_none.empty() ? "no profile for this communicator" : why_none);
    if (cached.found->profile) {
      context->profile = std::shared_ptr<const Profile>(cached.found, &*cached.found->profile);
      for (int f = 0; f < ncclNumFuncs; ++f)
        if (const auto* per_size = per_size_for(*context->profile, static_cast<ncclFunc_t>(f))) {
          context->ranges[static_cast<std::size_t>(f)] = resolve_ranges(per_size, *request.indices);
          context->range_reported[static_cast<std::size_t>(f)] =
              std::make_unique<std::atomic<bool>[]>(per_size->size());
        }
    }
    *context_out = context.release();
  } catch (const std::exception& error) {
    log_failure(logger, "init", error.what());
    if (nccltuneControl_v2.count_service != 0) set_decline_reason(nccltuneControl_v2, error.what());
  } catch (...) {
    log_failure(logger, "init", "unknown exception");
    if (nccltuneControl_v2.count_service != 0) set_decline_reason(nccltuneControl_v2, "init failed");
  }
  return ncclSuccess;
}

ncclResult_t get_coll_info(void* context_in, ncclFunc_t collective, std::size_t bytes, int /*pipe_ops*/,
                           float** cost_table, int num_algorithms, int num_protocols, int /*reg_buff*/,
                           int* channels) noexcept {
  NcclTuneControl& control = nccltuneControl_v2;
  if (control.active != 0 && cost_table != nullptr) {
    force_pair(control, reinterpret_cast<float*>(cost_table), num_algorithms, num_protocols);
    return ncclSuccess;
  }
  auto* context = static_cast<TunerContext*>(context_in);
  if (cost_table == nullptr) return ncclSuccess;
  if (context == nullptr || !context->profile) {
    if (control.count_service != 0) ++control.declined;  // init wrote why
    return ncclSuccess;
  }
  try {
    // NCCL passes its contiguous float[algorithms][protocols] array cast to float**.
    float* cells = reinterpret_cast<float*>(cost_table);
    const ResolvedRanges& ranges = ranges_for(*context, collective);
    const std::vector<SizeChoice>* per_size = ranges.per_size;
    const CostTableChoice choice =
        choose_cost_table_cell(ranges, bytes, CostTable{cells, num_algorithms, num_protocols});
    if (choice.outcome == ChoiceOutcome::marked)
      cells[choice.algorithm * num_protocols + choice.protocol] = 0.0f;
    if ((choice.outcome == ChoiceOutcome::marked || choice.outcome == ChoiceOutcome::channels_only) &&
        choice.channels > 0 && channels != nullptr)
      *channels = choice.channels;
    if (per_size) report_once(*context, collective, *per_size, choice);
    if (control.count_service != 0) count_call(control, choice, per_size, collective);
  } catch (const std::exception& error) {
    log_failure(context->logger, "getCollInfo", error.what());
  } catch (...) {
    log_failure(context->logger, "getCollInfo", "unknown exception");
  }
  return ncclSuccess;
}

ncclResult_t finalize(void* context) noexcept {
  delete static_cast<TunerContext*>(context);
  return ncclSuccess;
}

// getChunkSize (v6): NCCL's chunk size, unless the profile measured one for this collective, size
// and the pair NCCL runs (a per_size range's chunk_bytes). Pair mode leaves NCCL's.
ncclResult_t get_chunk_size(void* context_in, ncclFunc_t collective, std::size_t bytes, int algorithm,
                            int protocol, int /*channels*/, std::size_t* chunk_size) noexcept {
  auto* context = static_cast<TunerContext*>(context_in);
  if (nccltuneControl_v2.active != 0 || context == nullptr || !context->profile || chunk_size == nullptr)
    return ncclSuccess;
  try {
    const std::optional<std::uint64_t> measured =
        measured_chunk_bytes(ranges_for(*context, collective), bytes, algorithm, protocol);
    if (measured) *chunk_size = static_cast<std::size_t>(*measured);
  } catch (const std::exception& error) {
    log_failure(context->logger, "getChunkSize", error.what());
  } catch (...) {
    log_failure(context->logger, "getChunkSize", "unknown exception");
  }
  return ncclSuccess;
}

}  // namespace nccltune::tuner_core

// The control block (collectives/tuner_control.h), exported beside the ABI tables of
// tuner_v4.cpp ... tuner_v7.cpp; the version script hides everything else.
extern "C" {
__attribute__((visibility("default")))
nccltune::NcclTuneControl nccltuneControl_v2 = {nccltune::kTunerControlVersion, 0, 0, 0, 0, 0, 0, 0, 0, {}};
}
