#include "collectives/size_sweep.h"

#include <algorithm>
#include <functional>
#include <string>

#include "base/size_steps.h"
#include "collectives/data_check.h"
#include "collectives/data_pattern.h"

namespace nccltune {

using namespace nccl_abi;

std::string_view to_string(ReductionOp) {
  return "sum";
}

Result<ReductionOp> parse_reduction_op(std::string_view name) {
  if (name == "sum") return ReductionOp::sum;
  return Error{"unsupported reduction op '" + std::string(name) + "' (only sum is supported)"};
}

ncclRedOp_t to_nccl(ReductionOp) {
  return ncclSum;
}

Status validate(const SweepOptions& options, int nranks) {
  if (nranks < 1) return Error{"the communicator has no ranks"};
  if (!options.sizes.empty()) {
    if (options.sizes.front() == 0) return Error{"a listed size must be above 0"};
    if (std::adjacent_find(options.sizes.begin(), options.sizes.end(), std::greater_equal<>()) !=
        options.sizes.end())
      return Error{"the listed sizes must be strictly ascending"};
  } else if (options.min_bytes > options.max_bytes)
    return Error{"minimum size (-b) " + std::to_string(options.min_bytes) +
                 " is larger than maximum size (-e) " + std::to_string(options.max_bytes)};
  if (options.step_factor > 1 && options.min_bytes == 0)
    return Error{"a step factor (-f) needs a minimum size (-b) above 0"};
  if (options.step_factor <= 1 && options.step_bytes == 0)
    return Error{"the step (-i) must be above 0 when the step factor (-f) is 1 or less"};
  if (options.iterations < 1) return Error{"iterations (-n) must be at least 1"};
  if (options.warmup < 0) return Error{"warm-up iterations (-w) must not be negative"};
  if (options.root < 0 || options.root >= nranks)
    return Error{"root (-r) " + std::to_string(options.root) + " is not a rank of " + std::to_string(nranks)};
  return Ok{};
}

std::pair<int, int> iterations_for(const SweepOptions& options, std::size_t bytes) {
  if (options.max_bytes_per_size == 0 || bytes == 0) return {options.iterations, options.warmup};
  const auto fit = static_cast<int>(std::min<std::size_t>(options.max_bytes_per_size / bytes, 1u << 20));
  return {std::clamp(fit, 1, options.iterations), std::clamp(fit, 0, options.warmup)};
}

std::vector<std::size_t> sweep_sizes(const SweepOptions& options) {
  if (!options.sizes.empty()) return options.sizes;
  const std::vector<std::uint64_t> sizes =
      size_steps(options.min_bytes, options.max_bytes, options.step_factor, options.step_bytes);
  return {sizes.begin(), sizes.end()};
}

namespace {

constexpr std::size_t kStagingBytes = 8u << 20;
constexpr unsigned char kSentinelByte = 0xff;  // NaN in float types, -1 in int32: never expected

// Writes rank `rank`'s first `count` send elements into `buffer` at `offset` bytes.
Status fill_pattern(const CudaDriver& cuda, const DeviceBuffer& buffer, std::size_t offset,
                    const DataPattern& pattern, int rank, std::size_t count) {
  const std::size_t size = element_size(pattern.type());
  std::vector<std::byte> staging(std::min(count * size, kStagingBytes / size * size));
  for (std::size_t first = 0; first < count;) {
    const std::size_t n = std::min(count - first, staging.size() / size);
    std::span<std::byte> chunk(staging.data(), n * size);
    fill_send_elements(pattern, rank, first, chunk);
    Status copied = cuda.copy_to_device(buffer, offset + first * size, chunk.data(), chunk.size());
    if (!copied) return copied;
    first += n;
  }
  return Ok{};
}

// Counts the wrong elements of rank `rank`'s receive buffer, which starts `offset` bytes into
// `buffer`.
Result<int64_t> count_wrong(const CudaDriver& cuda, const DeviceBuffer& buffer, std::size_t offset,
                            const CollectiveSpec& spec, const BufferLayout& layout,
                            const DataPattern& pattern, int rank, int root) {
  const std::size_t size = element_size(pattern.type());
  std::vector<std::byte> staging(std::min(layout.recv_count * size, kStagingBytes / size * size));
  int64_t wrong = 0;
  for (std::size_t first = 0; first < layout.recv_count;) {
    const std::size_t n = std::min(layout.recv_count - first, staging.size() / size);
    std::span<std::byte> chunk(staging.data(), n * size);
    Status copied = cuda.copy_to_host(chunk.data(), buffer, offset + first * size, chunk.size());
    if (!copied) return Error{copied.error()};
    wrong += count_wrong_elements(spec, layout, pattern, rank, root, first, chunk);
    first += n;
  }
  return wrong;
}

// One sweep's buffers, events and fixed arguments.
class SweepRun {
 public:
  SweepRun(const SweepContext& context, const CollectiveSpec& spec, const SweepOptions& options,
           DeviceBuffer send, DeviceBuffer recv, CudaEvent start, CudaEvent stop)
      : context_(context),
        spec_(spec),
        options_(options),
        pattern_(options.type, context.nranks),
        send_(std::move(send)),
        recv_(std::move(recv)),
        start_(std::move(start)),
        stop_(std::move(stop)) {}

  Status fill_send_buffer(std::size_t count) {
    return fill_pattern(context_.cuda, send_, 0, pattern_, context_.rank, count);
  }

  Result<SizeMeasurement> measure(std::size_t bytes) {
    const std::size_t size = element_size(options_.type);
    const BufferLayout layout = spec_.layout(bytes, size, context_.nranks);
    SizeMeasurement measurement;
    measurement.bytes = layout.bytes;
    measurement.count = layout.count;

    const auto [iterations, warmup] = iterations_for(options_, layout.bytes);
    const CollectiveArgs out_of_place = args(layout, send_.data(), recv_.data());
    Status warmed = launch(out_of_place, warmup);
    if (!warmed) return Error{warmed.error()};
    Result<double> time = time_per_op(out_of_place, iterations);
    if (!time) return Error{time.error()};
    measurement.out_of_place_us = *time;
    if (options_.check) {
      Result<int64_t> wrong = checked_run(layout, out_of_place, nullptr, 0);
      if (!wrong) return Error{wrong.error()};
      measurement.out_of_place_wrong = *wrong;
    }
    if (!options_.in_place) return measurement;

    const auto rank = static_cast<std::size_t>(context_.rank);
    const std::size_t send_offset = rank * layout.send_in_place_stride * size;
    const std::size_t recv_offset = rank * layout.recv_in_place_stride * size;
    const CollectiveArgs in_place = args(layout, recv_.data(send_offset), recv_.data(recv_offset));
    time = time_per_op(in_place, iterations);
    if (!time) return Error{time.error()};
    measurement.in_place_us = *time;
    if (options_.check && spec_.checks_in_place()) {
      Result<int64_t> wrong = checked_run(layout, in_place, &send_offset, recv_offset);
      if (!wrong) return Error{wrong.error()};
      measurement.in_place_wrong = *wrong;
    }
    return measurement;
  }

 private:
  CollectiveArgs args(const BufferLayout& layout, const void* send, void* recv) const {
    CollectiveArgs a;
    a.comm = context_.comm.get();
    a.stream = context_.stream.get();
    a.send = send;
    a.recv = recv;
    a.count = layout.count;
    a.type = to_nccl(options_.type);
    a.element_size = element_size(options_.type);
    a.op = to_nccl(options_.op);
    a.root = options_.root;
    a.rank = context_.rank;
    a.nranks = context_.nranks;
    return a;
  }

  Status launch(const CollectiveArgs& a, int times) const {
    for (int i = 0; i < times; ++i) {
      Status launched = spec_.run(context_.nccl, a);
      if (!launched) return launched;
    }
    return Ok{};
  }

  // Waits for the stream and reports an asynchronous NCCL error as an error.
  Status finish() const {
    Status synced = context_.cuda.synchronize(context_.stream);
    if (!synced) return synced;
    Result<ncclResult_t> async = context_.nccl.async_error(context_.comm);
    if (!async) return Error{async.error()};
    return context_.nccl.check(*async, "asynchronous error");
  }

  Result<double> time_per_op(const CollectiveArgs& a, int iterations) const {
    const CudaDriver& cuda = context_.cuda;
    Status status = cuda.record(start_, context_.stream);
    if (status) status = launch(a, iterations);
    if (status) status = cuda.record(stop_, context_.stream);
    if (status) status = cuda.synchronize(stop_);
    if (status) status = finish();
    if (!status) return Error{status.error()};
    Result<float> elapsed = cuda.elapsed_ms(start_, stop_);
    if (!elapsed) return Error{elapsed.error()};
    return 1000.0 * static_cast<double>(*elapsed) / iterations;
  }

  // Runs once on fresh data and counts the wrong elements. In place (`in_place_send` names the
  // offset of this rank's send data in the receive buffer), the send data is written there.
  Result<int64_t> checked_run(const BufferLayout& layout, const CollectiveArgs& a,
                              const std::size_t* in_place_send, std::size_t recv_offset) const {
    const CudaDriver& cuda = context_.cuda;
    // Up to the end of what is checked: the buffer is the largest size's, and this size's run
    // leaves the rest alone.
    const std::size_t checked_end = recv_offset + layout.recv_count * element_size(pattern_.type());
    Status ready = cuda.fill_bytes(recv_, checked_end, kSentinelByte);
    if (ready && in_place_send)
      ready = fill_pattern(cuda, recv_, *in_place_send, pattern_, context_.rank, layout.send_count);
    if (ready) ready = launch(a, 1);
    if (ready) ready = finish();
    if (!ready) return Error{ready.error()};
    return count_wrong(cuda, recv_, recv_offset, spec_, layout, pattern_, context_.rank, options_.root);
  }

  const SweepContext& context_;
  const CollectiveSpec& spec_;
  const SweepOptions& options_;
  DataPattern pattern_;
  DeviceBuffer send_;
  DeviceBuffer recv_;
  CudaEvent start_;
  CudaEvent stop_;
};

}  // namespace

Result<std::vector<SizeMeasurement>> run_size_sweep(const SweepContext& context, const CollectiveSpec& spec,
                                                    const SweepOptions& options,
                                                    const SizeCallback& on_size) {
  Status valid = validate(options, context.nranks);
  if (!valid) return Error{valid.error()};
  const std::vector<std::size_t> sizes = sweep_sizes(options);
  const std::size_t size = element_size(options.type);
  const BufferLayout largest = spec.layout(sizes.back(), size, context.nranks);

  // Both buffers hold the larger of send and receive data, as in nccl-tests: in place, the
  // receive buffer holds the send data too (all of it for reduce_scatter).
  const std::size_t buffer_bytes =
      std::max<std::size_t>(std::max(largest.send_count, largest.recv_count) * size, 1);
  Result<DeviceBuffer> send = context.cuda.allocate(buffer_bytes);
  if (!send) return Error{send.error()};
  Result<DeviceBuffer> recv = context.cuda.allocate(buffer_bytes);
  if (!recv) return Error{recv.error()};
  Result<CudaEvent> start = context.cuda.create_event();
  if (!start) return Error{start.error()};
  Result<CudaEvent> stop = context.cuda.create_event();
  if (!stop) return Error{stop.error()};

  SweepRun run(context, spec, options, std::move(*send), std::move(*recv), std::move(*start),
               std::move(*stop));
  Status filled = run.fill_send_buffer(largest.send_count);
  if (!filled) return Error{filled.error()};

  std::vector<SizeMeasurement> measurements;
  for (std::size_t bytes : sizes) {
    // Sizes round down to whole elements per rank (all_gather's 8 and 64 bytes are both 0 on 32
    // ranks): a size that rounds to the one before it is measured once.
    if (!measurements.empty() && spec.layout(bytes, size, context.nranks).bytes == measurements.back().bytes)
      continue;
    Result<SizeMeasurement> measurement = run.measure(bytes);
    if (!measurement)
      return Error{std::string(spec.name()) + " at " + std::to_string(bytes) +
                   " bytes: " + measurement.error()};
    measurements.push_back(*measurement);
    if (on_size) on_size(measurements.back());
  }
  return measurements;
}

}  // namespace nccltune
