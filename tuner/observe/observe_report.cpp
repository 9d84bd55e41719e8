#include "observe/observe_report.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "observe/algo_proto.h"
#include "observe/host_suspects.h"
#include "profile/comm_shape.h"

namespace nccltune {

namespace {

// One communicator shape the profile measured, in NCCL's terms.
struct ProfileSection {
  CommRole role = CommRole::world;
  int nodes = 1, ranks_per_node = 1;
  const std::map<std::string, CollectiveProfile>* collectives = nullptr;
};

std::vector<ProfileSection> profile_sections(const Profile& profile) {
  std::vector<ProfileSection> sections;
  const Shape world = nccl_shape_in(CommRole::world, profile.shape);
  sections.push_back({CommRole::world, world.nodes, world.ranks_per_node, &profile.collectives});
  for (const CommunicatorSection& section : profile.shapes)
    sections.push_back({section.role, section.nodes, section.ranks_per_node, &section.collectives});
  return sections;
}

// A communicator's role. Where every rank's host is known and the job's hosts are at least the
// nodes NCCL counted in its world, by hosts: a rail is one rank per host (on an MNNVL rack NCCL
// counts a domain of hosts as one node, so a rail's n_ranks is not its nnodes there), a node is one
// host's ranks. Else in NCCL's counts: a rail is one rank per node, a node one node's ranks. NCCL
// counts nodes by host, so fewer hostnames than its nodes means the names are not the nodes (the
// same name in every container, or nodes emulated on one machine).
std::string observed_shape(const ObservedCommunicator& communicator, int job_ranks, int ranks_per_node,
                           int job_hosts, int world_nodes) {
  if (communicator.n_ranks == job_ranks) return "world";
  std::set<std::string> hosts;
  bool every_host_known = int(communicator.ranks.size()) == communicator.n_ranks;
  for (const auto& [rank, seen] : communicator.ranks) {
    every_host_known = every_host_known && !seen.host.empty();
    hosts.insert(seen.host);
  }
  if (every_host_known && job_hosts > 0 && job_hosts >= world_nodes) {
    if (communicator.n_ranks > 1 && int(hosts.size()) == communicator.n_ranks) return "rail";
    if (hosts.size() == 1 && communicator.n_ranks * job_hosts == job_ranks) return "node";
    return "other";
  }
  if (communicator.nnodes > 1 && communicator.n_ranks == communicator.nnodes) return "rail";
  if (communicator.nnodes == 1 && communicator.n_ranks == ranks_per_node) return "node";
  return "other";
}

// Which GPU of its host a process drives, as far as the records say: its rank in a communicator of
// one node's every rank, its local rank (the GPU where ranks bind GPUs by local rank, as
// launchers do). Inspector's JSON names no device.
std::optional<std::string> local_rank_words(const ObservedJob& job, const std::string& file, int ranks_per_node) {
  if (file.empty() || ranks_per_node < 2) return std::nullopt;
  for (const auto& [id, communicator] : job.communicators) {
    if (communicator.prometheus || communicator.nnodes != 1 || communicator.n_ranks != ranks_per_node) continue;
    for (const auto& [rank, seen] : communicator.ranks)
      if (seen.file == file) return "local rank " + std::to_string(rank);
  }
  return std::nullopt;
}

// Stragglers by process (a records file is one process): what it was last in, over every
// collective of every communicator it took part in. A rank that waits for a late peer in one
// communicator reaches its next collective in another late, and is last there; over all its
// collectives it is last in a few, the rank that holds everyone back in nearly all.
std::vector<ObserveStraggler> find_stragglers(const ObservedJob& job, int job_ranks, int ranks_per_node) {
  struct Process {
    std::uint64_t took_part = 0, last = 0;
    double lead_us = 0, top_lead_us = -1;
    const ObservedCommunicator* top = nullptr;  // where it cost the others most
    int top_rank = 0;
    std::optional<int> world_rank;
    std::string host;
  };
  std::map<std::string, Process> processes;
  for (const auto& [id, communicator] : job.communicators) {
    if (communicator.prometheus) continue;
    for (const auto& [rank, seen] : communicator.ranks) {
      if (seen.file.empty()) continue;
      Process& process = processes[seen.file];
      process.host = seen.host;
      process.took_part += communicator.matched;
      process.last += seen.last;
      process.lead_us += seen.lead_us;
      if (communicator.n_ranks == job_ranks) process.world_rank = rank;
      if (seen.last > 0 && seen.lead_us > process.top_lead_us) {
        process.top_lead_us = seen.lead_us;
        process.top = &communicator;
        process.top_rank = rank;
      }
    }
  }
  std::vector<ObserveStraggler> stragglers;
  for (const auto& [file, process] : processes) {
    if (process.top == nullptr || process.last < kMinStragglerCollectives || 2 * process.last <= process.took_part)
      continue;
    stragglers.push_back({process.world_rank.value_or(process.top_rank), process.host, file,
                          local_rank_words(job, file, ranks_per_node), process.top->id, process.top->name,
                          process.last, double(process.last) / double(process.took_part), process.lead_us});
  }
  return stragglers;
}

std::optional<std::string> choice_words(const SizeChoice& choice) {
  if (choice.algo.empty() && choice.proto.empty()) return std::nullopt;
  return (choice.algo.empty() ? std::string("any") : choice.algo) + "/" +
         (choice.proto.empty() ? std::string("any") : choice.proto);
}

std::optional<std::string> tuned_choice(const CollectiveProfile& collective, double bytes) {
  for (const SizeChoice& choice : collective.per_size)
    if (double(choice.min_bytes) <= bytes && bytes <= double(choice.max_bytes)) return choice_words(choice);
  return std::nullopt;
}

std::string tune_line(const std::string& shape, const std::string& collective,
                      const CollectiveProfile* measured, const ObserveRow& row) {
  if (shape == "other") return "";  // tune measures the world, rails and nodes only
  std::string line = "nccltune tune --comms " + (shape == "world" ? std::string("world") : "world," + shape) +
                     " --ops " + collective;
  if (measured != nullptr && !measured->results.sizes.empty()) {
    if (double(row.max_bytes) > double(measured->results.sizes.back()))
      line += " --max-bytes " + std::to_string(row.max_bytes);
    if (double(row.min_bytes) < double(measured->results.sizes.front()))
      line += " --min-bytes " + std::to_string(std::max<std::uint64_t>(row.min_bytes, 1));
  }
  return line;
}

}  // namespace

std::string_view to_string(ObserveVerdict verdict) {
  switch (verdict) {
    case ObserveVerdict::as_tuned: return "as_tuned";
    case ObserveVerdict::below_tuned: return "below_tuned";
    case ObserveVerdict::not_served: return "not_served";
    case ObserveVerdict::unmeasured: return "unmeasured";
  }
  return "unmeasured";
}

ObserveVerdict judge_row(std::optional<double> observed, std::optional<double> tuned_busbw,
                         const std::optional<std::string>& ran, const std::optional<std::string>& tuned,
                         double tolerance) {
  if (!observed || !tuned_busbw || *tuned_busbw <= 0) return ObserveVerdict::unmeasured;
  if (ran && tuned) {
    bool served = false;
    for (std::size_t start = 0; start <= ran->size() && !served;) {
      const std::size_t end = std::min(ran->find(',', start), ran->size());
      served = algo_proto_matches(std::string_view(*ran).substr(start, end - start), *tuned);
      start = end + 1;
    }
    if (!served) return ObserveVerdict::not_served;
  }
  return *observed >= (1 - tolerance) * *tuned_busbw ? ObserveVerdict::as_tuned : ObserveVerdict::below_tuned;
}

std::optional<double> profile_busbw_at(const CollectiveProfile& collective, double bytes,
                                       std::string* source) {
  const ProfileResults& results = collective.results;
  const bool plugin = !results.with_plugin.empty() && results.with_plugin.size() == results.sizes.size();
  const std::vector<double>& curve = plugin ? results.with_plugin : results.tuned;
  if (curve.size() != results.sizes.size() || curve.empty() || bytes <= 0) return std::nullopt;
  const auto& sizes = results.sizes;
  if (bytes < double(sizes.front()) || bytes > double(sizes.back())) return std::nullopt;
  if (source != nullptr) *source = plugin ? "with_plugin" : "tuned";
  for (std::size_t i = 0; i + 1 < sizes.size(); ++i) {
    const double low = double(sizes[i]), high = double(sizes[i + 1]);
    if (bytes > high) continue;
    if (high <= low || low <= 0) return curve[i + 1];
    const double t = std::log(bytes / low) / std::log(high / low);
    return curve[i] + t * (curve[i + 1] - curve[i]);
  }
  return curve.back();
}

std::pair<int, int> observed_world(const ObservedJob& job) {
  std::pair<int, int> world{0, 0};
  for (const auto& [id, communicator] : job.communicators)
    if (communicator.n_ranks > world.second) world = {communicator.nnodes, communicator.n_ranks};
  return world;
}

ObserveReport build_observe_report(const ObservedJob& job, const std::vector<std::string>& dirs,
                                   const Profile* profile, const std::string& profile_file,
                                   double tolerance) {
  ObserveReport report;
  const auto [world_nodes, job_ranks] = observed_world(job);
  const int ranks_per_node = world_nodes > 0 ? job_ranks / world_nodes : 0;
  report.context = {dirs,
                    job.records,
                    job_ranks,
                    {job.hosts.begin(), job.hosts.end()},
                    {job.versions.begin(), job.versions.end()},
                    profile == nullptr ? "" : profile_file,
                    tolerance};
  const std::vector<ProfileSection> sections =
      profile == nullptr ? std::vector<ProfileSection>{} : profile_sections(*profile);
  for (const auto& [id, observed] : job.communicators) {
    ObserveCommunicatorReport communicator;
    communicator.id = observed.id;
    communicator.name = observed.name;
    communicator.n_ranks = observed.n_ranks;
    communicator.nnodes = observed.nnodes;
    for (const auto& [rank, seen] : observed.ranks)
      if (!seen.host.empty() && std::find(communicator.hosts.begin(), communicator.hosts.end(), seen.host) ==
                                    communicator.hosts.end())
        communicator.hosts.push_back(seen.host);
    std::sort(communicator.hosts.begin(), communicator.hosts.end());
    communicator.shape = observed_shape(observed, job_ranks, ranks_per_node, int(job.hosts.size()), world_nodes);
    communicator.source = observed.prometheus ? "prometheus" : "json";
    communicator.matched = observed.matched;
    communicator.unmatched = observed.unmatched;

    // The profile's section of this communicator's NCCL shape, of its role where two share it.
    const ProfileSection* section = nullptr;
    if (observed.n_ranks % observed.nnodes == 0)
      for (const ProfileSection& candidate : sections)
        if (candidate.nodes == observed.nnodes &&
            candidate.ranks_per_node == observed.n_ranks / observed.nnodes &&
            (section == nullptr || to_string(candidate.role) == communicator.shape))
          section = &candidate;
    if (section != nullptr)
      communicator.section = describe_shape(Shape{section->role, section->nodes, section->ranks_per_node},
                                            ShapeWords::brief, node_word(profile->shape));

    const double ranks_seen = double(std::max<std::size_t>(observed.ranks.size(), 1));
    for (const auto& [key, stats] : observed.rows) {
      ObserveRow row;
      row.collective = key.first;
      row.min_bytes = bucket_min_bytes(key.second);
      row.max_bytes = bucket_max_bytes(key.second);
      if (!observed.prometheus) row.ops = std::uint64_t(std::ceil(double(stats.records) / ranks_seen));
      if (!stats.ran.empty()) {
        std::vector<std::pair<std::string, std::uint64_t>> ran(stats.ran.begin(), stats.ran.end());
        std::stable_sort(ran.begin(), ran.end(),
                         [](const auto& a, const auto& b) { return a.second > b.second; });
        row.ran = ran.front().first;
        for (std::size_t i = 1; i < ran.size(); ++i) *row.ran += "," + ran[i].first;
      }
      row.time_share = job.exec_us > 0 ? stats.exec_us / job.exec_us : 0;
      row.busbw_median = stats.busbw.quantile(0.5);
      row.busbw_p10 = stats.busbw.quantile(0.1);
      double mean_bytes = stats.bytes_sum / double(std::max<std::uint64_t>(stats.records, 1));
      const CollectiveProfile* measured = nullptr;
      if (section != nullptr) {
        const auto found = section->collectives->find(row.collective);
        if (found != section->collectives->end()) measured = &found->second;
      }
      // A textfile gives only a size's range (its middle above): where the range holds measured
      // sizes, the one nearest its middle, so that 1 MiB, in "1-2MB", is held against 1 MiB.
      if (observed.prometheus && measured != nullptr && !measured->results.sizes.empty()) {
        const double low = std::max(double(row.min_bytes), double(measured->results.sizes.front()));
        const double high = std::min(double(row.max_bytes), double(measured->results.sizes.back()));
        if (low <= high) mean_bytes = std::clamp(mean_bytes, low, high);
      }
      if (measured != nullptr) {
        row.tuned_busbw = profile_busbw_at(*measured, mean_bytes, &row.tuned_source);
        row.tuned = tuned_choice(*measured, mean_bytes);
        if (row.tuned_busbw && row.busbw_median && *row.tuned_busbw > 0)
          row.ratio = *row.busbw_median / *row.tuned_busbw;
      }
      row.verdict = judge_row(row.busbw_median, row.tuned_busbw, row.ran, row.tuned, tolerance);
      if (row.verdict == ObserveVerdict::unmeasured)
        row.tune = tune_line(communicator.shape, row.collective, measured, row);
      communicator.rows.push_back(std::move(row));
    }
    // Where the time went first.
    std::stable_sort(communicator.rows.begin(), communicator.rows.end(),
                     [](const ObserveRow& a, const ObserveRow& b) { return a.time_share > b.time_share; });

    report.communicators.push_back(std::move(communicator));
  }
  report.stragglers = find_stragglers(job, job_ranks, ranks_per_node);
  // The world first, then by ranks.
  std::stable_sort(report.communicators.begin(), report.communicators.end(),
                   [](const ObserveCommunicatorReport& a, const ObserveCommunicatorReport& b) {
                     return a.n_ranks > b.n_ranks;
                   });
  report.suspects = find_host_suspects(report.communicators, tolerance);
  std::stable_sort(
      report.stragglers.begin(), report.stragglers.end(),
      [](const ObserveStraggler& a, const ObserveStraggler& b) { return a.cost_us > b.cost_us; });
  return report;
}

int observe_exit_code(const ObserveReport& report) {
  if (!report.stragglers.empty() || !report.suspects.empty()) return 2;
  for (const auto& communicator : report.communicators)
    for (const auto& row : communicator.rows)
      if (row.verdict != ObserveVerdict::as_tuned) return 1;
  return 0;
}

}  // namespace nccltune
