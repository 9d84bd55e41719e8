// NcclLibrary: the NCCL functions nccltune uses, loaded with dlopen from libnccl.so.2 or from
// the file --nccl-lib / NCCLTUNE_NCCL_LIB names (a framework's own libnccl, or libfakenccl.so in
// tests). NCCL result codes become one-line errors naming the call, here at the boundary.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "base/result.h"
#include "base/status.h"
#include "collectives/nccl_declarations.h"

namespace nccltune {

// The function table, by NCCL's names. Every entry is bound at load except those marked
// optional, which stay nullptr where the library lacks them.
struct NcclApi {
  nccl_abi::ncclGetVersion_fn ncclGetVersion = nullptr;
  nccl_abi::ncclGetUniqueId_fn ncclGetUniqueId = nullptr;
  nccl_abi::ncclCommInitRank_fn ncclCommInitRank = nullptr;
  nccl_abi::ncclCommSplit_fn ncclCommSplit = nullptr;  // optional: NCCL 2.18 and later
  nccl_abi::ncclCommDestroy_fn ncclCommDestroy = nullptr;
  nccl_abi::ncclCommAbort_fn ncclCommAbort = nullptr;
  nccl_abi::ncclCommGetAsyncError_fn ncclCommGetAsyncError = nullptr;
  nccl_abi::ncclGetErrorString_fn ncclGetErrorString = nullptr;
  nccl_abi::ncclAllReduce_fn ncclAllReduce = nullptr;
  nccl_abi::ncclAllGather_fn ncclAllGather = nullptr;
  nccl_abi::ncclReduceScatter_fn ncclReduceScatter = nullptr;
  nccl_abi::ncclBroadcast_fn ncclBroadcast = nullptr;
  nccl_abi::ncclReduce_fn ncclReduce = nullptr;
  nccl_abi::ncclSend_fn ncclSend = nullptr;
  nccl_abi::ncclRecv_fn ncclRecv = nullptr;
  nccl_abi::ncclGroupStart_fn ncclGroupStart = nullptr;
  nccl_abi::ncclGroupEnd_fn ncclGroupEnd = nullptr;
};

struct LoadedNcclLibrary;  // the library handle and its table, shared by every owner below

// A communicator, destroyed on destruction (or aborted, after abort()).
class NcclComm {
 public:
  NcclComm(std::shared_ptr<const LoadedNcclLibrary> library, nccl_abi::ncclComm_t comm)
      : library_(std::move(library)), comm_(comm) {}
  NcclComm(NcclComm&& other) noexcept;
  NcclComm& operator=(NcclComm&&) = delete;
  NcclComm(const NcclComm&) = delete;
  NcclComm& operator=(const NcclComm&) = delete;
  ~NcclComm();

  nccl_abi::ncclComm_t get() const { return comm_; }
  // ncclCommAbort now; the destructor then does nothing.
  void abort();

 private:
  std::shared_ptr<const LoadedNcclLibrary> library_;
  nccl_abi::ncclComm_t comm_ = nullptr;
};

class NcclLibrary {
 public:
  static constexpr const char* kDefaultPath = "libnccl.so.2";

  // dlopen()s `path` and binds every function of NcclApi. Errors name the path and the missing
  // symbol or the loader's message.
  static Result<NcclLibrary> load(const std::string& path = kDefaultPath);

  const std::string& path() const;
  const NcclApi& api() const;

  // Success, or "<call>: <ncclGetErrorString text> (ncclResult_t <n>)".
  Status check(nccl_abi::ncclResult_t result, std::string_view call) const;

  Result<int> version() const;  // NCCL_VERSION_CODE, 22809 for 2.28.9
  Result<nccl_abi::ncclUniqueId> unique_id() const;
  Result<NcclComm> init_rank(int nranks, const nccl_abi::ncclUniqueId& id, int rank) const;
  // ncclCommSplit(parent, color, key), with the parent's configuration: collective over the
  // parent's ranks. The ranks of one color form a communicator, ordered by key, ties by parent
  // rank. nullopt: `color` was nccl_abi::kSplitNoColor, and this rank is in no communicator (NCCL
  // returns NULL). Error "<path>: NCCL x.y.z has no ncclCommSplit (2.18 or later)" where the
  // library lacks it.
  Result<std::optional<NcclComm>> split(const NcclComm& parent, int color, int key) const;
  // The communicator's asynchronous error, ncclSuccess when there is none.
  Result<nccl_abi::ncclResult_t> async_error(const NcclComm& comm) const;

 private:
  explicit NcclLibrary(std::shared_ptr<const LoadedNcclLibrary> loaded) : loaded_(std::move(loaded)) {}

  std::shared_ptr<const LoadedNcclLibrary> loaded_;
};

// "2.28.9" for 22809 (NCCL >= 2.9 codes X*10000+Y*100+Z), "2.8.4" for 2804 (older X*1000+Y*100+Z).
std::string nccl_version_string(int code);

}  // namespace nccltune
