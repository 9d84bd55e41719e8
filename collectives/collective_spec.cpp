#include "collectives/collective_spec.h"

#include <array>

#include "collectives/bus_bandwidth.h"

namespace nccltune {

using namespace nccl_abi;

namespace {

const std::byte* element(const void* buffer, std::size_t index, std::size_t element_size) {
  return static_cast<const std::byte*>(buffer) + index * element_size;
}

std::byte* element(void* buffer, std::size_t index, std::size_t element_size) {
  return static_cast<std::byte*>(buffer) + index * element_size;
}

// Send and receive buffers of `count` elements each; nothing moves in place.
BufferLayout same_size_layout(std::size_t bytes, std::size_t element_size) {
  const std::size_t count = bytes / element_size;
  return {count * element_size, count, count, count, 0, 0};
}

class AllReduce final : public CollectiveSpec {
 public:
  std::string_view name() const override { return "all_reduce"; }
  bool reduces() const override { return true; }
  BufferLayout layout(std::size_t bytes, std::size_t element_size, int) const override {
    return same_size_layout(bytes, element_size);
  }
  ExpectedElement expected(std::size_t j, const BufferLayout&, int, int, int) const override {
    return {ExpectedElement::Kind::sum, 0, j};
  }
  ncclResult_t launch(const NcclApi& nccl, const CollectiveArgs& a) const override {
    return nccl.ncclAllReduce(a.send, a.recv, a.count, a.type, a.op, a.comm, a.stream);
  }
};

class AllGather final : public CollectiveSpec {
 public:
  std::string_view name() const override { return "all_gather"; }
  BufferLayout layout(std::size_t bytes, std::size_t element_size, int nranks) const override {
    const std::size_t n = static_cast<std::size_t>(nranks);
    const std::size_t base = bytes / element_size / n;
    return {base * n * element_size, base, base, base * n, base, 0};
  }
  ExpectedElement expected(std::size_t j, const BufferLayout& layout, int, int, int) const override {
    if (layout.count == 0) return {};
    return {ExpectedElement::Kind::rank_value, static_cast<int>(j / layout.count), j % layout.count};
  }
  ncclResult_t launch(const NcclApi& nccl, const CollectiveArgs& a) const override {
    return nccl.ncclAllGather(a.send, a.recv, a.count, a.type, a.comm, a.stream);
  }
};

class ReduceScatter final : public CollectiveSpec {
 public:
  std::string_view name() const override { return "reduce_scatter"; }
  bool reduces() const override { return true; }
  BufferLayout layout(std::size_t bytes, std::size_t element_size, int nranks) const override {
    const std::size_t n = static_cast<std::size_t>(nranks);
    const std::size_t base = bytes / element_size / n;
    return {base * n * element_size, base, base * n, base, 0, base};
  }
  ExpectedElement expected(std::size_t j, const BufferLayout& layout, int rank, int, int) const override {
    return {ExpectedElement::Kind::sum, 0, static_cast<std::size_t>(rank) * layout.count + j};
  }
  ncclResult_t launch(const NcclApi& nccl, const CollectiveArgs& a) const override {
    return nccl.ncclReduceScatter(a.send, a.recv, a.count, a.type, a.op, a.comm, a.stream);
  }
};

class Broadcast final : public CollectiveSpec {
 public:
  std::string_view name() const override { return "broadcast"; }
  BufferLayout layout(std::size_t bytes, std::size_t element_size, int) const override {
    return same_size_layout(bytes, element_size);
  }
  ExpectedElement expected(std::size_t j, const BufferLayout&, int, int, int root) const override {
    return {ExpectedElement::Kind::rank_value, root, j};
  }
  ncclResult_t launch(const NcclApi& nccl, const CollectiveArgs& a) const override {
    return nccl.ncclBroadcast(a.send, a.recv, a.count, a.type, a.root, a.comm, a.stream);
  }
  bool uses_root() const override { return true; }
};

class Reduce final : public CollectiveSpec {
 public:
  std::string_view name() const override { return "reduce"; }
  bool reduces() const override { return true; }
  BufferLayout layout(std::size_t bytes, std::size_t element_size, int) const override {
    return same_size_layout(bytes, element_size);
  }
  ExpectedElement expected(std::size_t j, const BufferLayout&, int rank, int, int root) const override {
    if (rank != root) return {};
    return {ExpectedElement::Kind::sum, 0, j};
  }
  ncclResult_t launch(const NcclApi& nccl, const CollectiveArgs& a) const override {
    return nccl.ncclReduce(a.send, a.recv, a.count, a.type, a.op, a.root, a.comm, a.stream);
  }
  bool uses_root() const override { return true; }
};

// Every rank sends block p of its send buffer to rank p, as grouped send/recv (nccl-tests'
// alltoall): block q of the receive buffer comes from rank q.
class AllToAll final : public CollectiveSpec {
 public:
  std::string_view name() const override { return "alltoall"; }
  BufferLayout layout(std::size_t bytes, std::size_t element_size, int nranks) const override {
    const std::size_t n = static_cast<std::size_t>(nranks);
    const std::size_t base = bytes / element_size / n;
    return {base * n * element_size, base, base * n, base * n, 0, 0};
  }
  ExpectedElement expected(std::size_t j, const BufferLayout& layout, int rank, int, int) const override {
    if (layout.count == 0) return {};
    return {ExpectedElement::Kind::rank_value, static_cast<int>(j / layout.count),
            static_cast<std::size_t>(rank) * layout.count + j % layout.count};
  }
  ncclResult_t launch(const NcclApi& nccl, const CollectiveArgs& a) const override {
    ncclResult_t first_error = nccl.ncclGroupStart();
    if (first_error != ncclSuccess) return first_error;
    for (int peer = 0; peer < a.nranks; ++peer) {
      const std::size_t offset = static_cast<std::size_t>(peer) * a.count;
      const ncclResult_t sent =
          nccl.ncclSend(element(a.send, offset, a.element_size), a.count, a.type, peer, a.comm, a.stream);
      const ncclResult_t received =
          nccl.ncclRecv(element(a.recv, offset, a.element_size), a.count, a.type, peer, a.comm, a.stream);
      if (first_error == ncclSuccess) first_error = sent != ncclSuccess ? sent : received;
    }
    const ncclResult_t ended = nccl.ncclGroupEnd();
    return first_error != ncclSuccess ? first_error : ended;
  }
  bool checks_in_place() const override { return false; }
};

const AllReduce kAllReduce;
const AllGather kAllGather;
const ReduceScatter kReduceScatter;
const Broadcast kBroadcast;
const Reduce kReduce;
const AllToAll kAllToAll;
const std::array<const CollectiveSpec*, 6> kCollectives = {&kAllReduce, &kAllGather, &kReduceScatter,
                                                           &kBroadcast, &kReduce,    &kAllToAll};

}  // namespace

double CollectiveSpec::bus_bandwidth_factor(int nranks) const {
  return nccltune::bus_bandwidth_factor(name(), nranks);
}

Status CollectiveSpec::run(const NcclLibrary& nccl, const CollectiveArgs& args) const {
  return nccl.check(launch(nccl.api(), args), name());
}

const CollectiveSpec* find_collective(std::string_view name) {
  for (const CollectiveSpec* spec : kCollectives)
    if (spec->name() == name) return spec;
  return nullptr;
}

std::span<const CollectiveSpec* const> all_collectives() {
  return kCollectives;
}

std::string collective_names() {
  std::string names;
  for (const CollectiveSpec* spec : kCollectives)
    names += (names.empty() ? "" : ", ") + std::string(spec->name());
  return names;
}

}  // namespace nccltune
