// One record of NCCL Inspector's JSON output (NCCL's plugins/profiler/inspector at 2.30.7, ext-profiler/
// inspector at 2.28.9): every process writes <hostname>-pid<pid>.log, one JSON object per line,
// one line per completed collective per communicator:
//   {"header":{"id":"0x7f8c496ae9f661","comm_name":"DP Group 0","rank":2,"n_ranks":8,"nnodes":1},
//    "metadata":{"inspector_output_format_version":"v4.0","git_rev":"","rec_mechanism":"...",
//                "dump_timestamp_us":1748030377748202,"hostname":"node-a","pid":1639453},
//    "coll_perf":{"coll":"AllReduce","coll_sn":1407,"coll_msg_size_bytes":17179869184,
//                 "coll_exec_time_us":61974,"coll_timing_source":"kernel_gpu",
//                 "coll_algobw_gbs":277.21,"coll_busbw_gbs":485.11}}
// NCCL 2.28's header has no comm_name; 2.30's writes it ("unknown" when the communicator has none)
// and also writes point-to-point records (`p2p_perf`), which observe skips. With
// NCCL_INSPECTOR_DUMP_VERBOSE=1 coll_perf also holds event_trace_sn and event_trace_ts. Neither
// writes the algorithm or protocol NCCL ran, nor a job id; a double that is NaN is written "nan".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace nccltune {

struct InspectorRecord {
  std::string comm_id;                    // header.id: NCCL's communicator hash, "0x..."
  std::string comm_name;                  // header.comm_name; "" where the record has none (NCCL 2.28)
  int rank = 0, n_ranks = 1, nnodes = 1;  // nnodes: NCCL's node count (an NVLink domain on MNNVL)
  std::string version;                    // metadata.inspector_output_format_version: "v4.0"
  std::string hostname;                   // metadata.hostname; "" where absent
  std::uint64_t pid = 0;
  std::string coll;  // NCCL's function name: "AllReduce"
  std::uint64_t coll_sn = 0, bytes = 0;
  double exec_us = 0;
  double busbw_gbps = 0;  // NaN where Inspector wrote "nan"
  // The keys this record holds that neither Inspector version writes ("coll_perf.foo"): read past.
  std::vector<std::string> unknown_fields;
};

// One line of an Inspector file: a collective's record, or nullopt for a line observe skips (a
// p2p_perf record). Errors (not JSON, a required field missing or of the wrong type, a rank
// outside 0..n_ranks-1) are one line naming the field, without the file: the caller adds it.
Result<std::optional<InspectorRecord>> parse_inspector_line(std::string_view line);

// Whether `file_name` is one Inspector writes in JSON mode: <hostname>-pid<digits>.log.
bool is_inspector_file_name(std::string_view file_name);

// NCCL's function name ("AllReduce") as nccl-tests spells it ("all_reduce"); the name itself for
// one nccltune does not know.
std::string collective_from_nccl(std::string_view function);

}  // namespace nccltune
