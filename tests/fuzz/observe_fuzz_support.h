// What both of observe's fuzz targets (Inspector's JSON records and its Prometheus textfiles) do
// with the job they read: the report without and with a profile that has a world of 2 nodes x 1,
// its text and its nccltune/observe/v1 JSON; abort when a problem is more than one line, a row's
// busbw count is not its records, the JSON does not parse again or the exit code is not 0, 1 or 2.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include "observe/observe_output.h"
#include "observe/observe_report.h"
#include "observe/observed_job.h"

namespace observe_fuzz {

[[noreturn]] inline void fail(const char* what, const std::string& text) {
  std::fprintf(stderr, "%s\n%s\n", what, text.c_str());
  std::abort();
}

inline nccltune::Profile two_node_profile() {
  nccltune::Profile profile;
  profile.shape.nodes = 2;
  profile.shape.gpus_per_node = 1;
  profile.shape.ranks = 2;
  nccltune::CollectiveProfile all_reduce;
  all_reduce.results.sizes = {1024, 1048576};
  all_reduce.results.tuned = {1, 50};
  all_reduce.per_size = {{0, 1048576, "Ring", "LL128", 0, 0}};
  profile.collectives["all_reduce"] = all_reduce;
  return profile;
}

inline void check_job(const nccltune::ObserveAccumulator& accumulator, const nccltune::ObservedJob& job) {
  for (const std::string& problem : accumulator.problems())
    if (problem.find('\n') != std::string::npos) fail("a problem of more than one line", problem);
  for (const auto& [id, communicator] : job.communicators)
    for (const auto& [key, row] : communicator.rows)
      if (row.busbw.count() + row.busbw.nan_count() != row.records) fail("a row's busbw count", key.first);
  static const nccltune::Profile profile = two_node_profile();
  for (const nccltune::Profile* with : {static_cast<const nccltune::Profile*>(nullptr), &profile}) {
    const nccltune::ObserveReport report = nccltune::build_observe_report(job, {"dir"}, with, "p.yaml", 0.1);
    (void)nccltune::render_observe_text(report);
    const std::string json = nccltune::render_observe_json(report);
    if (nlohmann::json::parse(json, nullptr, false).is_discarded()) fail("the JSON does not parse", json);
    const int code = nccltune::observe_exit_code(report);
    if (code < 0 || code > 2) fail("an exit code outside 0..2", json);
  }
}

}  // namespace observe_fuzz
