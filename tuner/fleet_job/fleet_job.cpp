#include "fleet_job/fleet_job.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <optional>

#include "base/atomic_file.h"
#include "collectives/bus_bandwidth.h"
#include "collectives/library_versions.h"
#include "collectives/nccl_info_log.h"
#include "collectives/nccl_info_mnnvl.h"
#include "fleet/fleet_attribution.h"
#include "fleet/fleet_output.h"
#include "fleet/pair_schedule.h"
#include "mpi_runtime/nccl_log_capture.h"
#include "mpi_runtime/node_gather.h"

namespace nccltune {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

// What rank 0 sends every rank before a stage: the groups that run (node indexes), the round
// (0: the local stage), and the timeouts left by the budget; no groups means the survey is over.
struct StagePlan {
  int round = 0;
  std::vector<std::vector<int>> groups;
  double init_timeout_s = 0;
  double size_timeout_s = 0;
  bool stop = false;  // the budget ran out: no more rounds
};

std::string encode_plan(const StagePlan& plan) {
  return json{{"round", plan.round},
              {"groups", plan.groups},
              {"init_timeout_s", plan.init_timeout_s},
              {"size_timeout_s", plan.size_timeout_s},
              {"stop", plan.stop}}
      .dump();
}

StagePlan decode_plan(const std::string& text) {  // rank 0's own message
  const json j = json::parse(text);
  return {j.at("round").get<int>(), j.at("groups").get<std::vector<std::vector<int>>>(),
          j.at("init_timeout_s").get<double>(), j.at("size_timeout_s").get<double>(), j.at("stop").get<bool>()};
}

template <class T>
json or_null(const std::optional<T>& value) {
  return value ? json(*value) : json(nullptr);
}
template <class T>
std::optional<T> optional_at(const json& j, const char* key) {
  const json& value = j.at(key);
  return value.is_null() ? std::nullopt : std::optional<T>(value.get<T>());
}

// A group's summary travels from its first rank to rank 0 as JSON (a wire of this job only).
std::string encode_sample(const GroupSample& s) {
  return json{{"nodes", s.nodes},
              {"round", s.round},
              {"busbw_gbps", s.busbw_gbps},
              {"small_us", s.small_us},
              {"failure", s.failure},
              {"reason", s.reason},
              {"nccl_nodes", or_null(s.nccl_nodes)},
              {"mnnvl", or_null(s.mnnvl)},
              {"fabric_uuid", s.fabric_uuid},
              {"clique_id", or_null(s.clique_id)}}
      .dump(-1, ' ', false, json::error_handler_t::replace);  // a reason may quote anything
}

GroupSample decode_sample(const std::string& text) {
  const json j = json::parse(text);
  GroupSample s;
  s.nodes = j.at("nodes").get<std::vector<int>>();
  s.round = j.at("round").get<int>();
  s.busbw_gbps = j.at("busbw_gbps").get<std::vector<double>>();
  s.small_us = j.at("small_us").get<std::vector<double>>();
  s.failure = j.at("failure").get<std::string>();
  s.reason = j.at("reason").get<std::string>();
  s.nccl_nodes = optional_at<int>(j, "nccl_nodes");
  s.mnnvl = optional_at<bool>(j, "mnnvl");
  s.fabric_uuid = j.at("fabric_uuid").get<std::string>();
  s.clique_id = optional_at<std::uint32_t>(j, "clique_id");
  return s;
}

// NCCL's account of the group's communicator, from its first rank's INFO log: how many nodes NCCL
// counted, whether it ran over multi-node NVLink, and that rank's NVLink fabric (its own process
// printed one; a zero UUID is no multi-node fabric, as on HGX).
void add_nccl_account(GroupSample& sample, const NcclInfoLog& log) {
  sample.nccl_nodes = log.nodes;
  sample.mnnvl = log.mnnvl;
  for (const NcclMnnvlFabric& fabric : log.mnnvl_fabrics)
    if (!mnnvl_uuid_is_zero(fabric.fabric_uuid)) {
      sample.fabric_uuid = fabric.fabric_uuid;
      sample.clique_id = fabric.clique_id;
      break;
    }
}

// The name an operator knows a node by: Slurm's for its node (what `scontrol` takes), else the
// host name to its first dot; emulated nodes keep the layout's names.
std::string node_name(const NodeLayout& layout) {
  if (layout.emulated) return layout.hosts.at(static_cast<std::size_t>(layout.node));
  if (const char* slurm = std::getenv("SLURMD_NODENAME"); slurm != nullptr && *slurm != '\0') return slurm;
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  const std::string name(host);
  return name.substr(0, name.find('.'));
}

std::string failure_name(TrialOutcome outcome) {
  return outcome == TrialOutcome::timeout ? "hang" : std::string(to_string(outcome));
}

class FleetRun {
 public:
  FleetRun(RankGroup& world, const NodeLayout& layout, const FleetOptions& o, const TrialRunner& run)
      : world_(world), layout_(layout), o_(o), run_(run) {}

  // Every rank: runs the plan's groups at once; rank 0 gets one sample per group.
  std::vector<GroupSample> run_stage(const StagePlan& plan);
  // This rank's result of the last group it ran (its device and versions, for the peak model).
  const TrialResult& last() const { return last_; }

 private:
  TrialSpec group_spec(const RankGroup& group, const StagePlan& plan) const;
  GroupSample sample_of(const TrialResult& result, const std::vector<int>& nodes, int round,
                        int nranks) const;
  TrialResult run_group(RankGroup& group, const StagePlan& plan, std::optional<NcclInfoLog>& account);

  RankGroup& world_;
  const NodeLayout& layout_;
  const FleetOptions& o_;
  const TrialRunner& run_;
  TrialResult last_;
};

TrialSpec FleetRun::group_spec(const RankGroup& group, const StagePlan& plan) const {
  TrialSpec spec = rank_trial_spec(group, layout_.local_rank, o_.cuda_lib, o_.nccl_lib, plan.init_timeout_s,
                                   plan.size_timeout_s);
  spec.env.emplace(kProfileOffVariable, "1");  // NCCL's defaults on every node, never a served profile
  // Each repeat: the latency size, then the bandwidth size (an additive step gives exactly both).
  spec.config.collectives.assign(static_cast<std::size_t>(o_.repeats), o_.collective);
  SweepOptions& sweep = spec.config.sweep;
  sweep.min_bytes = o_.small_bytes;
  sweep.max_bytes = o_.bytes;
  sweep.step_factor = 1;
  sweep.step_bytes = o_.bytes - o_.small_bytes;
  sweep.iterations = o_.iterations;
  sweep.warmup = 5;
  sweep.check = true;
  sweep.in_place = false;
  return spec;
}

GroupSample FleetRun::sample_of(const TrialResult& result, const std::vector<int>& nodes, int round,
                                int nranks) const {
  GroupSample sample;
  sample.nodes = nodes;
  sample.round = round;
  if (result.outcome != TrialOutcome::ok) {
    sample.failure = failure_name(result.outcome);
    sample.reason = result.reason;
    return sample;
  }
  std::uint64_t largest = 0;
  for (const SizeMeasurement& size : result.sizes) largest = std::max<std::uint64_t>(largest, size.bytes);
  for (const SizeMeasurement& size : result.sizes) {
    if (size.bytes == largest)
      sample.busbw_gbps.push_back(
          bus_bandwidth_gbps(o_.collective, nranks, size.bytes, size.out_of_place_us));
    if (size.bytes != largest || o_.small_bytes == o_.bytes) sample.small_us.push_back(size.out_of_place_us);
  }
  return sample;
}

// The group's first rank reads NCCL's INIT lines of its own process: they say how NCCL counted
// the group's nodes and whether it ran over multi-node NVLink, which is what makes a pair an
// NVLink pair on a rack. Only INIT, on one rank: no line per operation, nothing on the others.
TrialResult FleetRun::run_group(RankGroup& group, const StagePlan& plan, std::optional<NcclInfoLog>& account) {
  TrialSpec spec = group_spec(group, plan);
  if (group.rank() != 0) return run_(group, spec);
  auto capture = NcclLogCapture::create();
  if (!capture) {
    spdlog::warn("nccltune fleet: NCCL's account of a group is not read: {}", capture.error());
    return run_(group, spec);
  }
  capture->add_to(spec.env);
  spec.env["NCCL_DEBUG_SUBSYS"] = "INIT";
  TrialResult result = run_(group, spec);
  account = parse_nccl_info_log(capture->read_all(), "NCCL's log");
  return result;
}

std::vector<GroupSample> FleetRun::run_stage(const StagePlan& plan) {
  int color = -1;
  for (std::size_t g = 0; g < plan.groups.size(); ++g)
    if (std::find(plan.groups[g].begin(), plan.groups[g].end(), layout_.node) != plan.groups[g].end())
      color = static_cast<int>(g);
  std::unique_ptr<RankGroup> group = world_.split(color);
  std::string summary;
  if (group) {
    std::optional<NcclInfoLog> account;
    last_ = run_group(*group, plan, account);
    if (group->rank() == 0) {
      GroupSample sample = sample_of(last_, plan.groups[static_cast<std::size_t>(color)], plan.round, group->size());
      if (account) add_nccl_account(sample, *account);
      summary = encode_sample(sample);
    }
  }
  // Each group's first rank sends one summary; rank 0 (in a group or not) collects them.
  const bool sends = (group && group->rank() == 0) || world_.rank() == 0;
  std::unique_ptr<RankGroup> leaders = world_.split(sends ? 0 : -1);
  std::vector<GroupSample> samples;
  if (!leaders) return samples;
  for (const std::string& text : leaders->gather(summary))
    if (!text.empty() && world_.rank() == 0) samples.push_back(decode_sample(text));
  return samples;
}

// What the peak model says one node and two nodes can do, from each node's topology (live or
// --from): the lowest node's. Unknown peaks stay unknown; why is printed once.
void gather_peaks(FleetRun& fleet, RankGroup& world, const NodeLayout& layout, const FleetOptions& o,
                  const TrialRunner& run, FleetInput& input) {
  const JobRanks ranks{world, layout, run};
  std::vector<int> counts{1};
  if (layout.nodes >= 2) counts.push_back(2);
  const TrialResult& seen = fleet.last();
  GatheredNodes nodes =
      gather_nodes(ranks, o.from, {o.collective}, counts, {seen.device.name, seen.device.sm},
                   nccl_version_string(seen.nccl_version), cuda_driver_version_string(seen.cuda_driver));
  if (world.rank() != 0) return;
  if (!nodes.error.empty()) std::fprintf(stderr, "nccltune fleet: peak model unknown: %s\n", nodes.error.c_str());
  input.peak_intra_gbps = nodes.peaks[1][o.collective].gbps;
  if (layout.nodes >= 2) input.peak_inter_gbps = nodes.peaks[2][o.collective].gbps;
}

void print_survey(const FleetSurvey& survey, const FleetOptions& o) {
  std::string text;
  switch (o.format) {
    case FleetFormat::text: text = render_fleet_text(survey); break;
    case FleetFormat::json: text = fleet_to_json(survey).dump(2) + "\n"; break;
    case FleetFormat::slurm_drain: text = render_slurm_drain(survey); break;
  }
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
}

}  // namespace

int run_fleet_job(RankGroup& world, const NodeLayout& layout, const FleetOptions& o, const TrialRunner& run) {
  const bool leader = world.rank() == 0;
  const auto fail_all = [&](const std::string& message) {
    if (leader) std::fprintf(stderr, "nccltune fleet: %s\n", message.c_str());
    return 3;
  };
  if (world.min(layout.local_size) != world.max(layout.local_size))
    return fail_all("every node must run as many ranks as the others (one per GPU)");
  const Result<int> rounds = o.rounds.empty() ? Result<int>(default_rounds(layout.nodes))
                                              : parse_rounds(o.rounds, layout.nodes);
  if (!rounds) return fail_all(rounds.error());

  const Clock::time_point start = Clock::now();
  FleetInput input;
  input.gpus_per_node = layout.local_size;
  input.collective = o.collective;
  input.bytes = o.bytes;
  input.small_bytes = o.small_bytes;
  input.thresholds = o.thresholds;
  input.rounds_planned = *rounds;
  {
    const std::vector<std::string> names = world.gather(layout.local_rank == 0 ? node_name(layout) : "");
    for (const std::string& name : names)
      if (!name.empty()) input.hosts.push_back(name);
  }
  // The rest of the budget bounds each stage's timeouts, so a hang costs at most what is left.
  const auto plan_for = [&](int round, std::vector<std::vector<int>> groups) {
    const double left = std::chrono::duration<double>(o.budget - (Clock::now() - start)).count();
    return StagePlan{round, std::move(groups), std::min(o.init_timeout_s, left),
                     std::min(o.size_timeout_s, left), false};
  };
  FleetRun fleet(world, layout, o, run);

  // The local stage: every node alone, all at once.
  StagePlan local;
  if (leader) {
    std::vector<std::vector<int>> alone;
    for (int node = 0; node < layout.nodes; ++node) alone.push_back({node});
    local = plan_for(0, std::move(alone));
  }
  local = decode_plan(world.broadcast(leader ? encode_plan(local) : std::string(), 0));
  input.local = fleet.run_stage(local);
  gather_peaks(fleet, world, layout, o, run, input);

  // The pairs stage: a round at a time, without the nodes that failed so far; a round starts
  // only while the budget holds the longest stage so far.
  const std::vector<PairRound> schedule = round_robin(layout.nodes);
  double longest_stage_s = std::chrono::duration<double>(Clock::now() - start).count();
  for (int round = 1; round <= *rounds; ++round) {
    StagePlan plan;
    if (leader) {
      const double left = std::chrono::duration<double>(o.budget - (Clock::now() - start)).count();
      std::vector<std::vector<int>> groups;
      const PairRound& pairs = schedule.at(static_cast<std::size_t>(round - 1));
      for (const NodePair& pair : without_nodes(pairs, failed_nodes(input))) groups.push_back({pair[0], pair[1]});
      plan = plan_for(round, std::move(groups));
      if (left <= longest_stage_s) {
        plan.stop = true;
        input.stopped = fmt::format("the budget ran out after {} of {} round{}", round - 1, *rounds,
                                    *rounds == 1 ? "" : "s");
      }
    }
    plan = decode_plan(world.broadcast(leader ? encode_plan(plan) : std::string(), 0));
    if (plan.stop) break;
    const Clock::time_point round_start = Clock::now();
    std::vector<GroupSample> samples = fleet.run_stage(plan);
    input.pairs.insert(input.pairs.end(), samples.begin(), samples.end());
    input.rounds_run = round;
    longest_stage_s = std::max(longest_stage_s, std::chrono::duration<double>(Clock::now() - round_start).count());
  }

  int exit_code = 0;
  if (leader) {
    const FleetSurvey survey = attribute(input);
    exit_code = fleet_exit_code(survey);
    if (!o.out.empty()) {
      if (Status written = write_file_atomically(o.out, fleet_to_json(survey).dump(2) + "\n"); !written) {
        std::fprintf(stderr, "nccltune fleet: %s\n", written.error().c_str());
        exit_code = 3;
      }
    }
    print_survey(survey, o);
  }
  return world.max(exit_code);
}

}  // namespace nccltune
