// What one benchmark run measured, in the shape of nccl-tests' table and of the
// `nccltune/bench/v1` JSON (docs/ARCHITECTURE.md, "File formats").
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace nccltune {

struct Measurement {
  double time_us = 0;            // per op, combined across ranks (see BenchResult::time_rule)
  double algbw = 0;              // GB/s
  double busbw = 0;              // GB/s
  std::optional<int64_t> wrong;  // wrong elements summed over ranks; nullopt for "N/A"
};

struct BenchRow {
  int64_t bytes = 0;
  int64_t count = 0;
  std::string type = "float";
  std::string redop = "sum";
  int root = -1;
  Measurement out_of_place;
  std::optional<Measurement> in_place;
};

struct BenchContext {
  std::vector<std::string> hosts;
  std::optional<std::string> nccl_version;
  std::optional<std::string> cuda_driver;
  std::vector<std::string> argv;
  std::map<std::string, std::string> env;  // NCCL_* variables in effect
};

// The hardware peak a busbw is read against (topology/peak_model.h): GB/s, null when unknown;
// `what` names the bottleneck ("NVLink4 x18"), or why the peak is unknown.
struct BenchPeak {
  std::optional<double> gbps;
  std::string what;
};

struct BenchResult {
  std::string op = "all_reduce";
  std::optional<int> ranks;  // nullopt when a log does not say how many ranks ran
  std::optional<int> nodes;
  std::string dtype = "float";
  std::string time_rule = "max";  // how per-rank times were combined: "max" (slowest rank)
  std::vector<BenchRow> rows;
  std::optional<double> avg_busbw;
  std::optional<BenchPeak> peak;  // absent when nobody asked (import without --from)
  BenchContext context;
};

}  // namespace nccltune
