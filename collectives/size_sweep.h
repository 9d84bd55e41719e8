// The size sweep of one rank, as nccl-tests runs it: per size, warm-up, a timed loop between
// CUDA events on the sweep's own stream (out of place, then in place) and the data check.
// Pure of MPI: it returns this rank's numbers; combining them across ranks is the caller's job.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "base/result.h"
#include "base/status.h"
#include "collectives/collective_spec.h"
#include "collectives/cuda_driver.h"
#include "collectives/data_type.h"
#include "collectives/nccl_library.h"

namespace nccltune {

enum class ReductionOp { sum };

std::string_view to_string(ReductionOp op);  // "sum"
Result<ReductionOp> parse_reduction_op(std::string_view name);
nccl_abi::ncclRedOp_t to_nccl(ReductionOp op);

// nccl-tests' options, by their letters.
struct SweepOptions {
  std::size_t min_bytes = 32u << 20;  // -b
  std::size_t max_bytes = 32u << 20;  // -e
  double step_factor = 2;             // -f: next size = size * factor, when factor > 1
  std::size_t step_bytes = 1u << 20;  // -i: else next size = size + step_bytes
  int iterations = 20;                // -n: timed iterations per size
  int warmup = 5;                     // -w: untimed iterations per size, first
  bool check = true;                  // -c: run the data check
  ReductionOp op = ReductionOp::sum;  // -o
  DataType type = DataType::float32;  // -d
  int root = 0;                       // -r: for broadcast and reduce
  bool in_place = true;               // also time the in-place variant (the tuner skips it)
  // When > 0, fewer iterations at large sizes: at most this many bytes per timed loop (and per
  // warm-up), at least one iteration. Lets the tuner spend its time where the noise is.
  std::size_t max_bytes_per_size = 0;
  // When not empty, the sweep visits exactly these sizes (ascending, above 0), not min..max
  // stepped: the tuner's sizes between grid points. nccl-tests has no such option.
  std::vector<std::size_t> sizes;
};

// Timed iterations (first) and warm-up iterations (second) for one size.
std::pair<int, int> iterations_for(const SweepOptions& options, std::size_t bytes);

// One line naming the first option that cannot work, for `nranks` ranks.
Status validate(const SweepOptions& options, int nranks);
// The sizes the sweep visits: `sizes`, else from min_bytes up to max_bytes.
std::vector<std::size_t> sweep_sizes(const SweepOptions& options);

// What the sweep runs on: one rank's driver, library, communicator and dedicated stream.
struct SweepContext {
  const CudaDriver& cuda;
  const NcclLibrary& nccl;
  const NcclComm& comm;
  const CudaStream& stream;
  int rank = 0;
  int nranks = 1;
};

// This rank's numbers for one size.
struct SizeMeasurement {
  std::size_t bytes = 0;                      // nccl-tests' size
  std::size_t count = 0;                      // nccl-tests' count
  double out_of_place_us = 0;                 // time per op on this rank
  std::optional<double> in_place_us;          // nullopt when the sweep runs no in-place test
  std::optional<int64_t> out_of_place_wrong;  // wrong elements here; nullopt without the check (or, in
                                              // place, for a collective nccl-tests does not check)
  std::optional<int64_t> in_place_wrong;
};

// Called after each size, so that a worker can stream results.
using SizeCallback = std::function<void(const SizeMeasurement&)>;

// Runs the sweep of `spec` on this rank. Every rank of the communicator must call it with the
// same spec and options.
Result<std::vector<SizeMeasurement>> run_size_sweep(const SweepContext& context, const CollectiveSpec& spec,
                                                    const SweepOptions& options,
                                                    const SizeCallback& on_size = {});

}  // namespace nccltune
