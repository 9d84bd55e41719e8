// SharedComm: where the ranks of one fake communicator meet and move data, across processes on
// one machine: a POSIX shared-memory segment named from a hash of the ncclUniqueId's bytes.
// It holds a barrier, one slot per rank for collectives (data moves slot-sized chunk by chunk
// between two barriers) and one mailbox per ordered pair of ranks for send/recv. Every wait
// gives up after the timeout, or at once when a peer gave up, so a missing rank fails instead
// of hanging.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "base/result.h"
#include "base/status.h"
#include "collectives/nccl_declarations.h"

namespace nccltune::fake {

// One side of a send/recv: `bytes` from or to `data`, with rank `peer`.
struct Transfer {
  bool send = true;
  int peer = 0;
  std::byte* data = nullptr;
  std::size_t bytes = 0;
  std::size_t done = 0;
  std::size_t element_size = 1;  // of the NCCL data type, for the caller
};

// Where things are in the segment of a communicator of `nranks` ranks.
struct SegmentLayout {
  std::size_t slot_bytes = 0;     // per rank, for collectives
  std::size_t mailbox_bytes = 0;  // per ordered pair of ranks, for send/recv
  std::size_t joined_offset = 0;
  std::size_t slots_offset = 0;
  std::size_t mailboxes_offset = 0;
  std::size_t mailbox_stride = 0;
  std::size_t total = 0;
};

SegmentLayout segment_layout(int nranks);

// "/nccltune-fake-<16 hex digits>", from the id's bytes.
std::string segment_name(const nccl_abi::ncclUniqueId& id);

class SharedComm {
 public:
  // Opens (or creates) the id's segment, registers `rank` and waits until all `nranks` ranks
  // are there; then the name is removed (the mappings stay).
  static Result<SharedComm> join(const nccl_abi::ncclUniqueId& id, int nranks, int rank, double timeout_s);

  SharedComm(SharedComm&& other) noexcept;
  SharedComm& operator=(SharedComm&&) = delete;
  SharedComm(const SharedComm&) = delete;
  SharedComm& operator=(const SharedComm&) = delete;
  ~SharedComm();

  int rank() const { return rank_; }
  int nranks() const { return nranks_; }
  std::size_t slot_bytes() const { return layout_.slot_bytes; }
  std::byte* slot(int rank) const;

  // Waits until every rank has arrived at the same barrier.
  Status barrier();
  // Every rank's `text` (at most 255 bytes), in rank order: each rank calls it once, together.
  Result<std::vector<std::string>> all_texts(const std::string& text);
  // Every rank's `value`, in rank order: each rank calls it once, together.
  Result<std::vector<double>> all_values(double value);
  // Moves every transfer through the mailboxes, in order per peer and direction.
  Status exchange(std::vector<Transfer>& transfers);
  // Tells the peers to stop waiting for this rank.
  void mark_failed();

 private:
  SharedComm(std::byte* base, int nranks, int rank, double timeout_s);

  // Moves what fits now; returns the bytes moved.
  std::size_t push(Transfer& transfer);
  std::size_t pull(Transfer& transfer);
  bool peer_failed() const;

  uint64_t& header_word(std::size_t offset) const;
  uint64_t& mailbox_word(int from, int to, std::size_t which) const;
  std::byte* mailbox_data(int from, int to) const;
  Status wait_for_barrier(uint64_t target, const char* what);

  std::byte* base_ = nullptr;
  int nranks_ = 1;
  int rank_ = 0;
  double timeout_s_ = 60;
  SegmentLayout layout_;
  uint64_t barriers_passed_ = 0;
};

}  // namespace nccltune::fake
