#include "mpi_runtime/trial_runner.h"

#include <algorithm>

#include "collectives/library_versions.h"
#include "collectives/nccl_declarations.h"

extern char** environ;

namespace nccltune {

namespace {

using std::chrono::milliseconds;
constexpr milliseconds kExitGrace{1000};

// What this rank saw, before the ranks agree. `peer_failed` ranks below every real cause.
enum LocalOutcome : int {
  local_ok = 0,
  local_peer_failed = 1,
  local_timeout = 2,
  local_init_error = 3,
  local_crash = 4
};

TrialOutcome agreed_outcome(int worst) {
  switch (worst) {
    case local_crash: return TrialOutcome::crash;
    case local_init_error: return TrialOutcome::init_error;
    case local_timeout:
    case local_peer_failed: return TrialOutcome::timeout;
    default: return TrialOutcome::ok;
  }
}

struct RankRun {
  LocalOutcome outcome = local_ok;
  std::string reason;
  std::vector<SizeMeasurement> sizes;
  std::vector<std::string> ops;
  std::vector<std::string> comms;
  int communicators = 1;
  std::vector<int> pairs, unavailable;  // pair mode only
  std::vector<int> served;              // service counting only
  std::string declined_why;             // the first size's that has one
  DeviceDescription device;
  int nccl_version = 0;
  int cuda_driver = 0;
  bool worker_died = false;  // its event pipe closed before it was done: how it ended says why

  void fail(LocalOutcome o, std::string why) {
    if (outcome != local_ok) return;
    outcome = o;
    reason = std::move(why);
  }
};

// Waits for an event of `kind`; anything else ends the run with the right local outcome.
std::optional<WorkerEvent> expect(WorkerProcess& worker, WorkerEvent::Kind kind, milliseconds timeout,
                                  const char* waiting_for, RankRun& run) {
  auto next = worker.next_event(timeout);
  switch (next.kind) {
    case WorkerProcess::Next::Kind::event:
      if (next.event.kind == kind) return next.event;
      if (next.event.kind == WorkerEvent::Kind::error) {
        run.fail(next.event.stage == "run" ? local_crash : local_init_error, next.event.message);
      } else {
        run.fail(local_crash, std::string("worker sent an unexpected event while ") + waiting_for);
      }
      return std::nullopt;
    case WorkerProcess::Next::Kind::timeout:
      run.fail(local_timeout, std::string("no answer within ") + std::to_string(timeout.count()) +
                                  " ms while " + waiting_for);
      return std::nullopt;
    case WorkerProcess::Next::Kind::malformed: run.fail(local_crash, next.error); return std::nullopt;
    case WorkerProcess::Next::Kind::closed:
      run.fail(local_crash, std::string("worker died while ") + waiting_for);
      run.worker_died = true;
      return std::nullopt;
  }
  return std::nullopt;
}

// Every rank's times, combined in place as `rule` says (nccl-tests' -a: an MPI_Allreduce of the
// time, divided by the ranks for the average; rank 0's broadcast for -a 0).
void combine_times(RankGroup& group, std::vector<double>& times, TimeRule rule) {
  switch (rule) {
    case TimeRule::rank0: group.broadcast(times.data(), times.size() * sizeof(double), 0); break;
    case TimeRule::average:
      group.sum(times);
      for (double& time : times) time /= group.size();
      break;
    case TimeRule::min: group.min(times); break;
    case TimeRule::max: group.max(times); break;
  }
}

void record_exit(const ChildExit& exit, RankRun& run) {
  if (run.worker_died)
    run.reason += " (" + exit.describe() + ")";
  else if (run.outcome == local_ok && (exit.signaled || exit.code != 0))
    run.fail(local_crash, "worker " + exit.describe() + " after finishing");
}

RankRun run_rank(RankGroup& group, const TrialSpec& spec) {
  RankRun run;
  const int rank = group.rank();
  auto worker = WorkerProcess::spawn(spec.worker_command, worker_environment(environ, spec.env));
  std::optional<WorkerProcess> process;
  if (worker) {
    process.emplace(std::move(*worker));
    if (auto sent = process->send(worker_config_to_json(spec.config)); !sent)
      run.fail(local_crash, sent.error());
  } else {
    run.fail(local_init_error, worker.error());
  }
  if (process && run.outcome == local_ok) {
    if (auto loaded =
            expect(*process, WorkerEvent::Kind::loaded, spec.init_timeout, "loading CUDA and NCCL", run)) {
      run.device = loaded->device;
      run.nccl_version = loaded->nccl_version;
      run.cuda_driver = loaded->cuda_driver;
    }
  }

  // Rank 0's worker makes the unique id; every parent takes part in the broadcast, whatever
  // happened, so no rank waits on a broadcast that never comes.
  struct {
    int ok = 0;
    char id[sizeof(nccl_abi::ncclUniqueId) * 2 + 1] = {};
  } shared;
  if (rank == 0 && process && run.outcome == local_ok) {
    if (auto unique =
            expect(*process, WorkerEvent::Kind::unique_id, spec.init_timeout, "making the unique id", run)) {
      shared.ok = 1;
      std::copy_n(unique->id_hex.begin(), std::min(unique->id_hex.size(), sizeof shared.id - 1), shared.id);
    }
  }
  group.broadcast(&shared, sizeof shared, 0);
  if (!shared.ok) run.fail(local_peer_failed, "rank 0 could not make the NCCL unique id");

  if (process && run.outcome == local_ok) {
    if (auto sent = process->send({{"cmd", "init"}, {"id", std::string(shared.id)}}); !sent)
      run.fail(local_crash, sent.error());
  }
  if (process && run.outcome == local_ok)
    expect(*process, WorkerEvent::Kind::ready, spec.init_timeout, "initialising the communicator", run);
  while (process && run.outcome == local_ok) {
    auto next = process->next_event(spec.size_timeout);
    if (next.kind == WorkerProcess::Next::Kind::event && next.event.kind == WorkerEvent::Kind::size) {
      run.sizes.push_back(next.event.size);
      run.ops.push_back(next.event.op);
      run.comms.push_back(next.event.comm);
      if (next.event.pair >= 0) {
        run.pairs.push_back(next.event.pair);
        run.unavailable.push_back(next.event.unavailable ? 1 : 0);
      }
      if (const std::optional<PluginService>& service = next.event.service) {
        run.served.push_back(service->served > 0 && service->declined == 0 ? 1 : 0);
        if (run.declined_why.empty()) run.declined_why = service->declined_why;
      }
      continue;
    }
    if (next.kind == WorkerProcess::Next::Kind::event && next.event.kind == WorkerEvent::Kind::done) {
      run.communicators = std::max(1, next.event.communicators);
      break;
    }
    if (next.kind == WorkerProcess::Next::Kind::timeout) {
      run.fail(local_timeout, "a size took longer than " + std::to_string(spec.size_timeout.count()) +
                                  " ms (after " + std::to_string(run.sizes.size()) + " sizes)");
    } else if (next.kind == WorkerProcess::Next::Kind::event && next.event.kind == WorkerEvent::Kind::error) {
      run.fail(local_crash, next.event.message);
    } else if (next.kind == WorkerProcess::Next::Kind::closed) {
      run.fail(local_crash, "worker died during the size sweep");
      run.worker_died = true;
    } else {
      run.fail(local_crash, next.error.empty() ? "worker sent an unexpected event" : next.error);
    }
  }
  if (process) {
    const ChildExit exit =
        run.outcome == local_ok ? process->finish(kExitGrace) : process->terminate(kExitGrace);
    record_exit(exit, run);
  }
  return run;
}

}  // namespace

std::string_view to_string(TimeRule rule) {
  switch (rule) {
    case TimeRule::rank0: return "rank0";
    case TimeRule::average: return "avg";
    case TimeRule::min: return "min";
    case TimeRule::max: return "max";
  }
  return "?";
}

TrialResult run_trial(RankGroup& group, const TrialSpec& spec) {
  RankRun run = run_rank(group, spec);
  TrialResult result;
  result.device = run.device;
  result.nccl_version = run.nccl_version;
  result.cuda_driver = run.cuda_driver;

  const int worst = group.max(static_cast<int>(run.outcome));
  result.outcome = agreed_outcome(worst);
  // The reason comes from the lowest rank whose own outcome is the worst one.
  const int reporter = group.min(static_cast<int>(run.outcome) == worst ? group.rank() : group.size());
  result.reason = group.broadcast(run.reason, reporter);
  if (worst != local_ok) {
    result.reason = "rank " + std::to_string(reporter) + ": " + result.reason;
    return result;
  }

  // Every rank finished: the same sizes everywhere, or the trial is broken.
  const int count = static_cast<int>(run.sizes.size());
  if (group.min(count) != group.max(count)) {
    result.outcome = TrialOutcome::crash;
    result.reason = "ranks measured different numbers of sizes";
    return result;
  }
  std::vector<double> times;
  std::vector<int64_t> wrong;
  for (const auto& s : run.sizes) {
    times.push_back(s.out_of_place_us);
    times.push_back(s.in_place_us.value_or(0));
    wrong.push_back(s.out_of_place_wrong.value_or(0));
    wrong.push_back(s.in_place_wrong.value_or(0));
  }
  combine_times(group, times, spec.time_rule);
  group.sum(wrong);
  int64_t total_wrong = 0;
  result.sizes = run.sizes;
  result.ops = run.ops;
  result.comms = run.comms;
  result.communicators = run.communicators;
  const bool pair_mode = !spec.config.pairs.empty();
  if (pair_mode) {
    if (run.pairs.size() != run.sizes.size()) {
      result.outcome = TrialOutcome::crash;
      result.reason = "the worker did not say which pair each size ran under";
      return result;
    }
    result.pairs = run.pairs;
    std::vector<double> unavailable(run.unavailable.begin(), run.unavailable.end());
    group.max(unavailable);
    for (double on_some_rank : unavailable) result.unavailable.push_back(on_some_rank > 0 ? 1 : 0);
  }
  if (spec.config.count_service) {
    if (run.served.size() != run.sizes.size()) {
      result.outcome = TrialOutcome::crash;
      result.reason = "the worker did not say what the tuner plugin served at each size";
      return result;
    }
    std::vector<double> served(run.served.begin(), run.served.end());
    group.min(served);
    for (double on_every_rank : served) result.served.push_back(on_every_rank > 0 ? 1 : 0);
    for (const std::string& why : group.gather(run.declined_why))
      if (result.declined_why.empty()) result.declined_why = why;
  }
  for (size_t i = 0; i < result.sizes.size(); ++i) {
    auto& s = result.sizes[i];
    s.out_of_place_us = times[2 * i];
    if (s.in_place_us) s.in_place_us = times[2 * i + 1];
    if (s.out_of_place_wrong) s.out_of_place_wrong = wrong[2 * i];
    if (s.in_place_wrong) s.in_place_wrong = wrong[2 * i + 1];
    total_wrong += wrong[2 * i] + wrong[2 * i + 1];
  }
  if (total_wrong > 0 && !pair_mode) {
    result.outcome = TrialOutcome::wrong_data;
    result.reason = std::to_string(total_wrong) + " wrong elements over all ranks and sizes";
  }
  return result;
}

TrialSpec rank_trial_spec(const RankGroup& group, int local_rank, const std::string& cuda_lib,
                          const std::string& nccl_lib, double init_timeout_s, double size_timeout_s) {
  TrialSpec spec;
  spec.config.rank = group.rank();
  spec.config.nranks = group.size();
  spec.config.device = local_rank;
  const LocalLibraries libraries = choose_libraries(cuda_lib, nccl_lib);
  spec.config.cuda_lib = libraries.cuda_lib;
  spec.config.nccl_lib = libraries.nccl_lib;
  spec.init_timeout = milliseconds(static_cast<int64_t>(init_timeout_s * 1000));
  spec.size_timeout = milliseconds(static_cast<int64_t>(size_timeout_s * 1000));
  return spec;
}

}  // namespace nccltune
