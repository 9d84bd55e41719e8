#include "tune/trial_protocol.h"

#include <fmt/format.h>

#include <chrono>
#include <nlohmann/json.hpp>

#include "collectives/bus_bandwidth.h"
#include "tune/nccl_log_capture.h"

namespace nccltune {

namespace {

using nlohmann::json;

json request_to_json(const TrialRequest& r) {
  return {{"env", r.env},
          {"phase", to_string(r.phase)},
          {"min", r.grid.min_bytes},
          {"max", r.grid.max_bytes},
          {"factor", r.grid.factor},
          {"iterations", r.iterations},
          {"warmup", r.warmup},
          {"repeat", r.repeat},
          {"collectives", r.collectives}};
}

TrialRequest request_from_json(const json& j) {
  TrialRequest r;
  r.env = j.at("env").get<Env>();
  r.phase = parse_trial_phase(j.at("phase").get<std::string>()).value_or(TrialPhase::screen);
  r.grid = {j.at("min").get<std::uint64_t>(), j.at("max").get<std::uint64_t>(), j.at("factor").get<double>()};
  r.iterations = j.at("iterations").get<int>();
  r.warmup = j.at("warmup").get<int>();
  r.repeat = j.at("repeat").get<int>();
  r.collectives = j.at("collectives").get<std::vector<std::string>>();
  return r;
}

// Runs one trial on this rank (every rank calls it with the same request).
TrialMeasurement measure(const TuneRanks& ranks, TrialSpec spec, const TrialRequest& request,
                         std::vector<std::string>* nccl_logs) {
  spec.env = request.env;
  spec.config.sweep.min_bytes = request.grid.aligned_min_bytes();
  spec.config.sweep.max_bytes = request.grid.max_bytes;
  spec.config.sweep.step_factor = request.grid.factor;
  spec.config.sweep.iterations = request.iterations;
  spec.config.sweep.warmup = request.warmup;
  spec.config.collectives = request.collectives;
  const auto start = std::chrono::steady_clock::now();
  const TrialResult result =
      nccl_logs ? run_with_nccl_log(ranks, spec, *nccl_logs) : ranks.run(ranks.group, spec);
  TrialMeasurement m;
  m.duration_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  m.outcome = result.outcome;
  m.reason = result.reason;
  for (std::size_t i = 0; i < result.sizes.size() && i < result.ops.size(); ++i) {
    const SizeMeasurement& size = result.sizes[i];
    m.ops.push_back(result.ops[i]);
    m.sizes.push_back(size.bytes);
    m.time_us.push_back(size.out_of_place_us);
    m.busbw.push_back(
        bus_bandwidth_gbps(result.ops[i], ranks.group.size(), size.bytes, size.out_of_place_us));
  }
  return m;
}

}  // namespace

TrialResult run_with_nccl_log(const TuneRanks& ranks, TrialSpec spec, std::vector<std::string>& rank_logs) {
  auto capture = NcclLogCapture::create();
  if (capture) capture->add_to(spec.env);
  const TrialResult result = ranks.run(ranks.group, spec);
  rank_logs = ranks.group.gather(
      capture ? capture->read_all()
              : fmt::format("# nccltune: rank {}: {}\n", ranks.group.rank(), capture.error()));
  return result;
}

TrialMeasurement lead_trial(const TuneRanks& ranks, const TrialSpec& spec, const TrialRequest& request,
                            std::vector<std::string>* nccl_logs) {
  ranks.group.broadcast(
      json{{"cmd", "trial"}, {"request", request_to_json(request)}, {"nccl_log", nccl_logs != nullptr}}
          .dump(),
      0);
  return measure(ranks, spec, request, nccl_logs);
}

int follow(const TuneRanks& ranks, const TrialSpec& spec) {
  while (true) {
    const json message = json::parse(ranks.group.broadcast(std::string(), 0));
    if (message.value("cmd", "") != "trial") return message.value("exit", 0);
    std::vector<std::string> nccl_logs;
    measure(ranks, spec, request_from_json(message.at("request")),
            message.value("nccl_log", false) ? &nccl_logs : nullptr);
  }
}

int stop_followers(const TuneRanks& ranks, int exit_code) {
  ranks.group.broadcast(json{{"cmd", "stop"}, {"exit", exit_code}}.dump(), 0);
  return exit_code;
}

}  // namespace nccltune
