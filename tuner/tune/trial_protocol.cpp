#include "tune/trial_protocol.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <nlohmann/json.hpp>

#include "collectives/bus_bandwidth.h"
#include "nccl_log/node_log_summary.h"
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

// Runs one trial on this rank of `on`'s group (every rank of it calls it with the same request).
TrialMeasurement measure(const CountGroup& on, const TrialRunner& run, TrialSpec spec,
                         const TrialRequest& request, std::vector<NcclInfoLog>* nccl_logs) {
  RankGroup& group = *on.group;
  spec.env = request.env;
  spec.config.sweep.min_bytes = request.grid.aligned_min_bytes();
  spec.config.sweep.max_bytes = request.grid.max_bytes;
  spec.config.sweep.step_factor = request.grid.factor;
  spec.config.sweep.iterations = request.iterations;
  spec.config.sweep.warmup = request.warmup;
  spec.config.collectives = request.collectives;
  const auto start = std::chrono::steady_clock::now();
  const TrialResult result =
      nccl_logs ? run_with_nccl_log(group, on.logs, run, spec, *nccl_logs) : run(group, spec);
  TrialMeasurement m;
  m.duration_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  m.outcome = result.outcome;
  m.reason = result.reason;
  for (std::size_t i = 0; i < result.sizes.size() && i < result.ops.size(); ++i) {
    const SizeMeasurement& size = result.sizes[i];
    m.ops.push_back(result.ops[i]);
    m.sizes.push_back(size.bytes);
    m.time_us.push_back(size.out_of_place_us);
    m.busbw.push_back(bus_bandwidth_gbps(result.ops[i], group.size(), size.bytes, size.out_of_place_us));
  }
  return m;
}

}  // namespace

LogGroups log_groups(RankGroup& group, const NodeLayout& layout) {
  LogGroups logs;
  logs.node = group.split(layout.node);
  logs.leaders = group.split(layout.local_rank == 0 ? 0 : -1);
  return logs;
}

TrialResult run_with_nccl_log(RankGroup& group, const LogGroups& logs, const TrialRunner& run, TrialSpec spec,
                              std::vector<NcclInfoLog>& node_logs) {
  auto capture = NcclLogCapture::create();
  if (capture)
    capture->add_to(spec.env);
  else
    spdlog::warn("rank {}: NCCL's log of this trial is not read: {}", group.rank(), capture.error());
  const TrialResult result = run(group, spec);
  // "<rank>\n<text>", so that the node's first rank names each text by its rank in the group.
  const std::string mine =
      std::to_string(group.rank()) + "\n" + (capture ? capture->read_all() : std::string());
  const std::vector<std::string> texts = logs.node->gather(mine);
  if (!logs.leaders) return result;
  NcclInfoLogReader node;
  for (const std::string& text : texts) {
    const std::size_t newline = text.find('\n');
    if (newline == std::string::npos) continue;  // a rank that sent nothing
    node.add(std::string_view(text).substr(newline + 1), "rank " + text.substr(0, newline));
  }
  node_logs.clear();
  for (const std::string& summary : logs.leaders->gather(node_log_summary_to_json(node.result()))) {
    if (summary.empty()) continue;  // a node that sent nothing
    Result<NcclInfoLog> parsed = node_log_summary_from_json(summary);
    if (parsed) node_logs.push_back(std::move(*parsed));
  }
  return result;
}

TrialMeasurement lead_trial(const TuneRanks& ranks, const CountGroups& groups, int count,
                            const TrialRequest& request, std::vector<NcclInfoLog>* nccl_logs) {
  ranks.group.broadcast(json{{"cmd", "trial"},
                             {"count", count},
                             {"request", request_to_json(request)},
                             {"nccl_log", nccl_logs != nullptr}}
                            .dump(),
                        0);
  const CountGroup& on = groups.at(count);
  return measure(on, ranks.run, on.spec, request, nccl_logs);
}

int follow(const TuneRanks& ranks, const CountGroups& groups) {
  while (true) {
    const json message = json::parse(ranks.group.broadcast(std::string(), 0));
    if (message.value("cmd", "") != "trial") return message.value("exit", 0);
    const auto on = groups.find(message.value("count", 0));
    if (on == groups.end() || !on->second.group) continue;  // a trial of a count this rank is not in
    std::vector<NcclInfoLog> nccl_logs;
    measure(on->second, ranks.run, on->second.spec, request_from_json(message.at("request")),
            message.value("nccl_log", false) ? &nccl_logs : nullptr);
  }
}

int stop_followers(const TuneRanks& ranks, int exit_code) {
  ranks.group.broadcast(json{{"cmd", "stop"}, {"exit", exit_code}}.dump(), 0);
  return exit_code;
}

}  // namespace nccltune
