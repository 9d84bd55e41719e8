#include "shared_comm.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>
#include <utility>

namespace nccltune::fake {

namespace {

// Header words, 8 bytes each.
constexpr std::size_t kNranksWord = 0;     // set once by the first rank
constexpr std::size_t kFailedWord = 8;     // non-zero once a rank gave up
constexpr std::size_t kArrivalsWord = 16;  // barrier arrivals, ever
constexpr std::size_t kHeaderBytes = 64;
constexpr std::size_t kLine = 64;
// Mailbox words: bytes ever written by the sender, bytes ever read by the receiver.
constexpr std::size_t kWritten = 0;
constexpr std::size_t kRead = kLine;

std::size_t round_up(std::size_t value, std::size_t unit) {
  return (value + unit - 1) / unit * unit;
}

std::string system_error(const std::string& what) {
  return what + ": " + std::strerror(errno);
}

// Pauses between polls: yields first, then sleeps, and knows when the timeout is reached.
class Backoff {
 public:
  explicit Backoff(double timeout_s)
      : deadline_(std::chrono::steady_clock::now() +
                  std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                      std::chrono::duration<double>(timeout_s))) {}

  bool expired() const { return std::chrono::steady_clock::now() > deadline_; }
  void pause() {
    if (++polls_ < 100) {
      sched_yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(polls_ < 1000 ? 20 : 200));
    }
  }

 private:
  std::chrono::steady_clock::time_point deadline_;
  int polls_ = 0;
};

std::string seconds(double timeout_s) {
  char text[32];
  std::snprintf(text, sizeof text, "%g s", timeout_s);
  return text;
}

}  // namespace

SegmentLayout segment_layout(int nranks) {
  const auto n = static_cast<std::size_t>(std::max(nranks, 1));
  SegmentLayout layout;
  layout.slot_bytes = std::clamp<std::size_t>(std::bit_floor((4u << 20) / n), 64u << 10, 1u << 20);
  layout.mailbox_bytes = std::clamp<std::size_t>(std::bit_floor((4u << 20) / (n * n)), 16u << 10, 256u << 10);
  layout.joined_offset = kHeaderBytes;
  layout.slots_offset = round_up(layout.joined_offset + n * sizeof(uint64_t), kLine);
  layout.mailboxes_offset = layout.slots_offset + n * layout.slot_bytes;
  layout.mailbox_stride = 2 * kLine + layout.mailbox_bytes;
  layout.total = layout.mailboxes_offset + n * n * layout.mailbox_stride;
  return layout;
}

std::string segment_name(const nccl_abi::ncclUniqueId& id) {
  uint64_t hash = 0xcbf29ce484222325ull;  // FNV-1a
  for (char byte : id.internal) {
    hash ^= static_cast<unsigned char>(byte);
    hash *= 0x100000001b3ull;
  }
  char name[40];
  std::snprintf(name, sizeof name, "/nccltune-fake-%016llx", static_cast<unsigned long long>(hash));
  return name;
}

Result<SharedComm> SharedComm::join(const nccl_abi::ncclUniqueId& id, int nranks, int rank,
                                    double timeout_s) {
  const std::string name = segment_name(id);
  const SegmentLayout layout = segment_layout(nranks);
  const int fd = shm_open(name.c_str(), O_CREAT | O_RDWR, 0600);
  if (fd < 0) return Error{system_error("shm_open " + name)};
  struct stat status {};
  std::string failure;
  if (fstat(fd, &status) != 0) {
    failure = system_error("fstat " + name);
  } else if (static_cast<std::size_t>(status.st_size) < layout.total &&
             ftruncate(fd, static_cast<off_t>(layout.total)) != 0) {
    failure = system_error("ftruncate " + name);
  } else if (int error = posix_fallocate(fd, 0, static_cast<off_t>(layout.total)); error != 0) {
    errno = error;
    failure = system_error("reserving " + std::to_string(layout.total) + " bytes for " + name);
  }
  void* base =
      failure.empty() ? mmap(nullptr, layout.total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : MAP_FAILED;
  if (failure.empty() && base == MAP_FAILED) failure = system_error("mmap " + name);
  close(fd);
  if (!failure.empty()) {
    shm_unlink(name.c_str());
    return Error{failure};
  }

  SharedComm comm(static_cast<std::byte*>(base), nranks, rank, timeout_s);
  uint64_t expected = 0;
  std::atomic_ref<uint64_t> size_word(comm.header_word(kNranksWord));
  if (!size_word.compare_exchange_strong(expected, static_cast<uint64_t>(nranks)) &&
      expected != static_cast<uint64_t>(nranks)) {
    comm.mark_failed();
    shm_unlink(name.c_str());
    return Error{"ranks disagree on the communicator size: " + std::to_string(expected) + " and " +
                 std::to_string(nranks)};
  }
  std::atomic_ref<uint64_t> joined(
      comm.header_word(layout.joined_offset + static_cast<std::size_t>(rank) * 8));
  if (joined.exchange(1) != 0) {
    comm.mark_failed();
    shm_unlink(name.c_str());
    return Error{"rank " + std::to_string(rank) + " joined the communicator twice"};
  }
  Status everyone = comm.barrier();
  shm_unlink(name.c_str());  // every rank has it mapped now (or the join failed)
  if (!everyone) return Error{everyone.error()};
  return comm;
}

SharedComm::SharedComm(std::byte* base, int nranks, int rank, double timeout_s)
    : base_(base), nranks_(nranks), rank_(rank), timeout_s_(timeout_s), layout_(segment_layout(nranks)) {}

SharedComm::SharedComm(SharedComm&& other) noexcept
    : base_(std::exchange(other.base_, nullptr)),
      nranks_(other.nranks_),
      rank_(other.rank_),
      timeout_s_(other.timeout_s_),
      layout_(other.layout_),
      barriers_passed_(other.barriers_passed_) {}

SharedComm::~SharedComm() {
  if (base_ != nullptr) munmap(base_, layout_.total);
}

uint64_t& SharedComm::header_word(std::size_t offset) const {
  return *reinterpret_cast<uint64_t*>(base_ + offset);
}

uint64_t& SharedComm::mailbox_word(int from, int to, std::size_t which) const {
  const auto index =
      static_cast<std::size_t>(from) * static_cast<std::size_t>(nranks_) + static_cast<std::size_t>(to);
  return *reinterpret_cast<uint64_t*>(base_ + layout_.mailboxes_offset + index * layout_.mailbox_stride +
                                      which);
}

std::byte* SharedComm::mailbox_data(int from, int to) const {
  return reinterpret_cast<std::byte*>(&mailbox_word(from, to, 0)) + 2 * kLine;
}

std::byte* SharedComm::slot(int rank) const {
  return base_ + layout_.slots_offset + static_cast<std::size_t>(rank) * layout_.slot_bytes;
}

void SharedComm::mark_failed() {
  std::atomic_ref<uint64_t>(header_word(kFailedWord)).store(1);
}

bool SharedComm::peer_failed() const {
  return std::atomic_ref<uint64_t>(header_word(kFailedWord)).load() != 0;
}

Status SharedComm::barrier() {
  const uint64_t target = ++barriers_passed_ * static_cast<uint64_t>(nranks_);
  std::atomic_ref<uint64_t>(header_word(kArrivalsWord)).fetch_add(1);
  return wait_for_barrier(target, barriers_passed_ == 1 ? "to join" : "at a collective");
}

Result<std::vector<std::string>> SharedComm::all_texts(const std::string& text) {
  const std::size_t length = std::min<std::size_t>(text.size(), 255);
  std::byte* own = slot(rank_);
  own[0] = static_cast<std::byte>(length);
  std::memcpy(own + 1, text.data(), length);
  if (Status arrived = barrier(); !arrived) return Error{arrived.error()};
  std::vector<std::string> texts;
  for (int r = 0; r < nranks_; ++r) {
    const std::byte* at = slot(r);
    texts.emplace_back(reinterpret_cast<const char*>(at + 1), static_cast<std::size_t>(at[0]));
  }
  if (Status read = barrier(); !read) return Error{read.error()};  // slots are free again
  return texts;
}

Result<std::vector<double>> SharedComm::all_values(double value) {
  std::memcpy(slot(rank_), &value, sizeof value);
  if (Status arrived = barrier(); !arrived) return Error{arrived.error()};
  std::vector<double> values(static_cast<std::size_t>(nranks_));
  for (int r = 0; r < nranks_; ++r) std::memcpy(&values[static_cast<std::size_t>(r)], slot(r), sizeof value);
  if (Status read = barrier(); !read) return Error{read.error()};  // slots are free again
  return values;
}

Status SharedComm::wait_for_barrier(uint64_t target, const char* what) {
  std::atomic_ref<uint64_t> arrivals(header_word(kArrivalsWord));
  Backoff backoff(timeout_s_);
  while (arrivals.load() < target) {
    if (peer_failed()) return Error{"a peer rank of the communicator failed"};
    if (backoff.expired()) {
      mark_failed();
      return Error{"timed out after " + seconds(timeout_s_) + " waiting for the other ranks " + what};
    }
    backoff.pause();
  }
  return Ok{};
}

std::size_t SharedComm::push(Transfer& transfer) {
  std::atomic_ref<uint64_t> written(mailbox_word(rank_, transfer.peer, kWritten));
  std::atomic_ref<uint64_t> read(mailbox_word(rank_, transfer.peer, kRead));
  const uint64_t w = written.load(std::memory_order_relaxed);
  const uint64_t free_bytes = layout_.mailbox_bytes - (w - read.load(std::memory_order_acquire));
  const std::size_t at = w % layout_.mailbox_bytes;
  const std::size_t n = std::min(
      {static_cast<std::size_t>(free_bytes), transfer.bytes - transfer.done, layout_.mailbox_bytes - at});
  if (n == 0) return 0;
  std::memcpy(mailbox_data(rank_, transfer.peer) + at, transfer.data + transfer.done, n);
  written.store(w + n, std::memory_order_release);
  transfer.done += n;
  return n;
}

std::size_t SharedComm::pull(Transfer& transfer) {
  std::atomic_ref<uint64_t> written(mailbox_word(transfer.peer, rank_, kWritten));
  std::atomic_ref<uint64_t> read(mailbox_word(transfer.peer, rank_, kRead));
  const uint64_t r = read.load(std::memory_order_relaxed);
  const uint64_t available = written.load(std::memory_order_acquire) - r;
  const std::size_t at = r % layout_.mailbox_bytes;
  const std::size_t n = std::min(
      {static_cast<std::size_t>(available), transfer.bytes - transfer.done, layout_.mailbox_bytes - at});
  if (n == 0) return 0;
  std::memcpy(transfer.data + transfer.done, mailbox_data(transfer.peer, rank_) + at, n);
  read.store(r + n, std::memory_order_release);
  transfer.done += n;
  return n;
}

Status SharedComm::exchange(std::vector<Transfer>& transfers) {
  Backoff backoff(timeout_s_);
  for (;;) {
    bool finished = true;
    bool moved = false;
    for (std::size_t i = 0; i < transfers.size(); ++i) {
      Transfer& transfer = transfers[i];
      if (transfer.done == transfer.bytes) continue;
      finished = false;
      // Keep order per peer and direction: an earlier unfinished one goes first.
      const bool waits = std::any_of(transfers.begin(), transfers.begin() + static_cast<long>(i),
                                     [&](const Transfer& earlier) {
                                       return earlier.send == transfer.send &&
                                              earlier.peer == transfer.peer && earlier.done < earlier.bytes;
                                     });
      if (waits) continue;
      if ((transfer.send ? push(transfer) : pull(transfer)) > 0) moved = true;
    }
    if (finished) return Ok{};
    if (moved) {
      backoff = Backoff(timeout_s_);
      continue;
    }
    if (peer_failed()) return Error{"a peer rank of the communicator failed"};
    if (backoff.expired()) {
      mark_failed();
      return Error{"timed out after " + seconds(timeout_s_) + " waiting for a peer's send/recv"};
    }
    backoff.pause();
  }
}

}  // namespace nccltune::fake
