// One line of NCCL Inspector's Prometheus textfile (NCCL_INSPECTOR_PROM_DUMP=1; NCCL's
// plugins/profiler/inspector/inspector_prom.cc at v2.30.7-1; NCCL 2.28.9's Inspector has no such
// mode). Every GPU's file, <dump dir>/nccl_inspector_metrics_<device UUID>.prom, holds per
// communicator, collective, message size range and algorithm/protocol two lines:
//   nccl_bus_bandwidth_gbs{version="v5.1",slurm_job_id="unknown",node="node-a",gpu="GPU0",
//     comm_name="DP Group 0",n_nodes="1",nranks="4",collective="AllReduce",message_size="4-5GB",
//     algo_proto="RING_LL128"} 678.263
//   nccl_collective_exec_time_microseconds{...the same labels...} 9498.47
// (one line each; "%.6g", so "nan" and "inf" can appear) and per point-to-point operation
// nccl_p2p_bus_bandwidth_gbs and nccl_p2p_exec_time_microseconds with p2p_operation="Send" in
// place of collective and no algo_proto. busbw is the geometric mean of the interval's
// operations, the time their arithmetic mean; the file holds no count of them. version is
// "v<profiler interface>.<format minor>"; node is gethostname(); gpu is "GPU<CUDA device>";
// message_size is a range of 1024-based units, "0B" or "<n>-<n+1><B|KB|MB|GB|TB>". Inspector
// writes no HELP or TYPE line and does not escape label values. It rewrites a file in place
// (fopen "w", then a line at a time) every dump interval, at least 30 s: a reader can find the
// last line cut short.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace nccltune {

enum class InspectorPromMetric { bus_bandwidth, exec_time, p2p_bus_bandwidth, p2p_exec_time };

struct InspectorPromSample {
  InspectorPromMetric metric = InspectorPromMetric::bus_bandwidth;
  std::string version, slurm_job_id, node, gpu, comm_name;
  int n_nodes = 1, nranks = 1;
  std::string operation;  // collective, or p2p_operation: NCCL's function name, "AllReduce"
  std::uint64_t min_bytes = 0, max_bytes = 0;  // message_size's range
  std::string algo_proto;                      // as written, "RING_LL128"; "" for point-to-point
  double value = 0;                            // GB/s or microseconds; NaN where "nan"
  std::vector<std::string> unknown_labels;     // read past
};

// A line: a sample; or, for a metric Inspector does not write, its name (the line is skipped).
struct InspectorPromLine {
  std::optional<InspectorPromSample> sample;
  std::string unknown_metric;
};

inline constexpr std::size_t kMaxInspectorPromLine = 4096;

// Errors (not the text format, a required label missing or out of range, a label twice) are one
// line naming the label, without the file: the caller adds it. A comment or blank line is neither
// sample nor unknown metric.
Result<InspectorPromLine> parse_inspector_prom_line(std::string_view line);

// message_size: "4-5GB" as [4 GiB, 5 GiB - 1]; "0B" as [0, 0].
Result<std::pair<std::uint64_t, std::uint64_t>> parse_message_size_range(std::string_view text);

// Whether `file_name` is one Inspector writes in Prometheus mode: nccl_inspector_metrics_*.prom.
bool is_inspector_prom_file_name(std::string_view file_name);

}  // namespace nccltune
