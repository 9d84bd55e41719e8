// CollectiveSpec: one small spec per collective, as nccl-tests' testColl: buffer sizes for a
// benchmark size, the busbw factor, how to launch it and what every received element must be.
// Adding a collective = adding one spec to collective_spec.cpp.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

#include "base/status.h"
#include "collectives/nccl_declarations.h"
#include "collectives/nccl_library.h"

namespace nccltune {

// Buffer sizes of one benchmark size, by nccl-tests' definitions (getCollByteCount).
struct BufferLayout {
  std::size_t bytes = 0;       // nccl-tests' "size": the larger of send and receive bytes
  std::size_t count = 0;       // the count NCCL is given (nccl-tests' "count")
  std::size_t send_count = 0;  // elements in each rank's send buffer
  std::size_t recv_count = 0;  // elements in each rank's receive buffer
  // In place, rank r sends from recvbuff + r * send_in_place_stride elements and receives into
  // recvbuff + r * recv_in_place_stride elements.
  std::size_t send_in_place_stride = 0;
  std::size_t recv_in_place_stride = 0;

  friend bool operator==(const BufferLayout&, const BufferLayout&) = default;
};

// Where the expected value of one received element comes from.
struct ExpectedElement {
  enum class Kind {
    sum,         // the sum over all ranks of their send element `index`
    rank_value,  // rank `rank`'s send element `index`
    unchecked,   // nothing is promised (a non-root rank of reduce)
  };
  Kind kind = Kind::unchecked;
  int rank = 0;
  std::size_t index = 0;

  friend bool operator==(const ExpectedElement&, const ExpectedElement&) = default;
};

// Everything one launch needs.
struct CollectiveArgs {
  nccl_abi::ncclComm_t comm = nullptr;
  nccl_abi::cudaStream_t stream = nullptr;
  const void* send = nullptr;
  void* recv = nullptr;
  std::size_t count = 0;  // BufferLayout::count
  nccl_abi::ncclDataType_t type = nccl_abi::ncclFloat32;
  std::size_t element_size = 4;
  nccl_abi::ncclRedOp_t op = nccl_abi::ncclSum;
  int root = 0;
  int rank = 0;
  int nranks = 1;
};

class CollectiveSpec {
 public:
  virtual ~CollectiveSpec() = default;

  // "all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce", "alltoall".
  virtual std::string_view name() const = 0;
  // Sizes for a benchmark size of `bytes` (nccl-tests' -b/-e values), rounded down as nccl-tests
  // rounds them.
  virtual BufferLayout layout(std::size_t bytes, std::size_t element_size, int nranks) const = 0;
  // What element `recv_index` of rank `rank`'s receive buffer must hold.
  virtual ExpectedElement expected(std::size_t recv_index, const BufferLayout& layout, int rank, int nranks,
                                   int root) const = 0;
  // Enqueues the collective on args.stream; NCCL's result code.
  virtual nccl_abi::ncclResult_t launch(const NcclApi& nccl, const CollectiveArgs& args) const = 0;
  // False where an in-place run's data cannot be checked: nccl-tests times alltoall in place (the
  // send and receive buffers one) but reports its #wrong as N/A.
  virtual bool checks_in_place() const { return true; }
  virtual bool uses_root() const { return false; }
  // Whether it applies the reduction operation (-o): nccl-tests prints "none" otherwise.
  virtual bool reduces() const { return false; }

  // bus_bandwidth_factor(name(), nranks) from bus_bandwidth.h.
  double bus_bandwidth_factor(int nranks) const;
  // launch(), with NCCL's error as one line naming the collective.
  Status run(const NcclLibrary& nccl, const CollectiveArgs& args) const;
};

// The spec named `name`, or nullptr.
const CollectiveSpec* find_collective(std::string_view name);
std::span<const CollectiveSpec* const> all_collectives();
// "all_reduce, all_gather, ...", for messages.
std::string collective_names();

}  // namespace nccltune
