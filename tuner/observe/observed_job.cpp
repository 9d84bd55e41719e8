#include "observe/observed_job.h"

#include <algorithm>
#include <bit>
#include <cmath>

#include "base/printable_text.h"
#include "observe/algo_proto.h"

namespace nccltune {

int size_bucket(std::uint64_t bytes) {
  return bytes == 0 ? 0 : int(std::bit_width(bytes)) - 1;
}
std::uint64_t bucket_min_bytes(int bucket) {
  return bucket == 0 ? 0 : std::uint64_t(1) << bucket;
}
std::uint64_t bucket_max_bytes(int bucket) {
  return bucket >= 63 ? ~std::uint64_t(0) : (std::uint64_t(1) << (bucket + 1)) - 1;
}

// Inspector's message size is NCCL's count times the type's size: for all_gather and
// reduce_scatter that is one rank's part (inspector.cc multiplies it by nranks for their busbw),
// while nccl-tests, and so the profile, size them by the whole buffer.
std::uint64_t nccl_tests_bytes(std::string_view collective, std::uint64_t bytes, int n_ranks) {
  if ((collective == "all_gather" || collective == "reduce_scatter") && n_ranks > 1 &&
      bytes <= ~std::uint64_t(0) / std::uint64_t(n_ranks))
    return bytes * std::uint64_t(n_ranks);
  return bytes;
}

void ObserveAccumulator::problem(const std::string& file, std::uint64_t line_number,
                                 const std::string& what) {
  if (++problems_per_file_[file] > kProblemsPerFile) return;
  problems_.push_back(file + ":" + std::to_string(line_number) + ": " + what);
}

void ObserveAccumulator::note_once(const std::string& file, std::uint64_t line_number,
                                   const std::string& what) {
  if (unknown_reported_.insert({file, what}).second)
    problems_.push_back(file + ":" + std::to_string(line_number) + ": " + what);
}

void ObserveAccumulator::add_line(const std::string& file, std::uint64_t line_number, std::string_view text) {
  if (text.find_first_not_of(" \t\r") == std::string_view::npos) return;
  auto parsed = parse_inspector_line(text);
  if (!parsed) {
    problem(file, line_number, parsed.error() + "; skipped");
    return;
  }
  if (*parsed) add_record(file, line_number, **parsed);
}

void ObserveAccumulator::add_record(const std::string& file, std::uint64_t line_number,
                                    const InspectorRecord& record) {
  for (const std::string& field : record.unknown_fields)
    note_once(file, line_number, "unknown field " + printable_excerpt(field, 80) + " (read past)");
  if (!json_version_.empty() && record.version != json_version_) {
    problem(file, line_number,
            "inspector_output_format_version " + printable_excerpt(record.version, 40) + ", not " +
                printable_excerpt(json_version_, 40) + " as the records before it (another job's?); skipped");
    return;
  }
  auto [it, added] = job_.communicators.try_emplace(record.comm_id);
  ObservedCommunicator& communicator = it->second;
  if (added) {
    communicator.id = record.comm_id;
    communicator.name = record.comm_name;
    communicator.n_ranks = record.n_ranks;
    communicator.nnodes = record.nnodes;
  } else if (communicator.n_ranks != record.n_ranks || communicator.nnodes != record.nnodes) {
    problem(file, line_number,
            "communicator " + printable_excerpt(record.comm_id, 40) + " has n_ranks " +
                std::to_string(record.n_ranks) + " nnodes " + std::to_string(record.nnodes) + ", not " +
                std::to_string(communicator.n_ranks) + " and " + std::to_string(communicator.nnodes) +
                " as before (another job's?); skipped");
    return;
  }
  auto [rank_it, new_rank] = communicator.ranks.try_emplace(record.rank);
  if (new_rank) {
    rank_it->second.host = record.hostname;
    rank_it->second.pid = record.pid;
    rank_it->second.file = file;
  } else if (rank_it->second.pid != record.pid || rank_it->second.host != record.hostname) {
    // One process is one rank of a communicator: another process's record is another run's.
    problem(file, line_number,
            "rank " + std::to_string(record.rank) + " of communicator " +
                printable_excerpt(record.comm_id, 40) + " is also written by " + rank_it->second.file +
                " (another job's?); skipped");
    return;
  }
  if (communicator.name.empty()) communicator.name = record.comm_name;
  if (!record.hostname.empty()) job_.hosts.insert(record.hostname);
  json_version_ = record.version;
  job_.versions.insert(record.version);
  ++job_.records;
  job_.exec_us += record.exec_us;

  const std::string collective = collective_from_nccl(record.coll);
  const std::uint64_t bytes = nccl_tests_bytes(collective, record.bytes, communicator.n_ranks);
  ObservedRow& row = communicator.rows[{collective, size_bucket(bytes)}];
  ++row.records;
  row.exec_us += record.exec_us;
  row.bytes_sum += double(bytes);
  row.busbw.add(record.busbw_gbps);
  match(communicator, record);
}

void ObserveAccumulator::add_prom_line(const std::string& file, std::uint64_t line_number,
                                       std::string_view text) {
  auto parsed = parse_inspector_prom_line(text);
  if (!parsed) {
    problem(file, line_number, parsed.error() + "; skipped");
    return;
  }
  if (!parsed->unknown_metric.empty())
    note_once(file, line_number,
              "unknown metric " + printable_excerpt(parsed->unknown_metric, 80) + " (skipped)");
  if (parsed->sample) add_prom_sample(file, line_number, *parsed->sample);
}

void ObserveAccumulator::add_prom_sample(const std::string& file, std::uint64_t line_number,
                                         const InspectorPromSample& sample) {
  for (const std::string& label : sample.unknown_labels)
    note_once(file, line_number, "unknown label " + printable_excerpt(label, 80) + " (read past)");
  if (sample.metric == InspectorPromMetric::p2p_bus_bandwidth ||
      sample.metric == InspectorPromMetric::p2p_exec_time)
    return;
  if (!prom_version_.empty() && sample.version != prom_version_) {
    problem(file, line_number,
            "version " + printable_excerpt(sample.version, 40) + ", not " +
                printable_excerpt(prom_version_, 40) + " as the samples before it (another job's?); skipped");
    return;
  }
  if (!prom_version_.empty() && sample.slurm_job_id != prom_job_) {
    problem(file, line_number,
            "slurm_job_id " + printable_excerpt(sample.slurm_job_id, 40) + ", not " +
                printable_excerpt(prom_job_, 40) + " as the samples before it (another job's); skipped");
    return;
  }
  prom_version_ = sample.version;
  prom_job_ = sample.slurm_job_id;
  const std::string id = "prom:" + sample.slurm_job_id + ":" + std::to_string(sample.n_nodes) + "x" +
                         std::to_string(sample.nranks) + ":" + sample.comm_name;
  auto [it, added] = job_.communicators.try_emplace(id);
  ObservedCommunicator& communicator = it->second;
  if (added) {
    communicator.id = id;
    communicator.name = sample.comm_name;
    communicator.n_ranks = sample.nranks;
    communicator.nnodes = sample.n_nodes;
    communicator.prometheus = true;
  }
  // Each GPU is a rank; more GPUs than ranks (communicators that share a name and a shape) are
  // read but not listed.
  const std::pair<std::string, std::string> gpu{sample.node, sample.gpu};
  if (!communicator.gpu_ranks.contains(gpu) && int(communicator.gpu_ranks.size()) < communicator.n_ranks) {
    const int rank = int(communicator.gpu_ranks.size());
    communicator.gpu_ranks[gpu] = rank;
    ObservedRank& seen = communicator.ranks[rank];
    seen.host = sample.node;
    seen.gpu = sample.gpu;
    seen.file = file;
  }
  if (!sample.node.empty()) job_.hosts.insert(sample.node);
  job_.versions.insert(sample.version);

  const std::string collective = collective_from_nccl(sample.operation);
  const std::uint64_t min_bytes = nccl_tests_bytes(collective, sample.min_bytes, communicator.n_ranks);
  const std::uint64_t max_bytes = nccl_tests_bytes(collective, sample.max_bytes, communicator.n_ranks);
  ObservedRow& row = communicator.rows[{collective, size_bucket(min_bytes)}];
  if (sample.metric == InspectorPromMetric::exec_time) {
    if (std::isfinite(sample.value)) {
      row.exec_us += sample.value;
      job_.exec_us += sample.value;
    }
    return;
  }
  ++job_.records;
  ++row.records;
  // The middle of the range: the sizes in it are not known.
  row.bytes_sum += (double(min_bytes) + double(max_bytes)) / 2;
  row.busbw.add(sample.value);
  if (auto ran = normalize_algo_proto(sample.algo_proto)) {
    ++row.ran[*ran];
  } else {
    note_once(file, line_number,
              "algo_proto " + printable_excerpt(sample.algo_proto, 40) +
                  " is no algorithm and protocol NCCL has (read, but not held against the profile)");
  }
}

void ObserveAccumulator::match(ObservedCommunicator& communicator, const InspectorRecord& record) {
  if (communicator.n_ranks < 2) return;
  if (record.coll_sn < communicator.dropped_below && !communicator.waiting.contains(record.coll_sn)) return;
  auto [it, added] = communicator.waiting.try_emplace(record.coll_sn);
  auto& entries = it->second;
  for (const auto& entry : entries)
    if (entry.first == record.rank) return;  // the same rank twice: read once
  entries.emplace_back(record.rank, record.exec_us);
  if (int(entries.size()) == communicator.n_ranks) {
    std::sort(entries.begin(), entries.end(),
              [](const auto& a, const auto& b) { return a.second < b.second; });
    ++communicator.matched;
    if (entries[0].second < entries[1].second) {
      // The others' median (entries 1..n-1, sorted).
      const std::size_t others = entries.size() - 1;
      const double median = others % 2 == 1
                                ? entries[1 + others / 2].second
                                : (entries[others / 2].second + entries[1 + others / 2].second) / 2;
      ObservedRank& last = communicator.ranks[entries[0].first];
      ++last.last;
      last.lead_us += median - entries[0].second;
    }
    communicator.waiting.erase(it);
    return;
  }
  if (added && communicator.waiting.size() > window_) {
    communicator.dropped_below =
        std::max(communicator.dropped_below, communicator.waiting.begin()->first + 1);
    communicator.waiting.erase(communicator.waiting.begin());
    ++communicator.unmatched;
  }
}

ObservedJob ObserveAccumulator::finish() {
  for (auto& [id, communicator] : job_.communicators) {
    communicator.unmatched += communicator.waiting.size();
    communicator.waiting.clear();
  }
  for (const auto& [file, count] : problems_per_file_)
    if (count > kProblemsPerFile)
      problems_.push_back(file + ": " + std::to_string(count - kProblemsPerFile) +
                          " more bad records skipped");
  return std::move(job_);
}

}  // namespace nccltune
