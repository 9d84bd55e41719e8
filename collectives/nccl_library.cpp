#include "collectives/nccl_library.h"

#include <optional>
#include <utility>

#include "collectives/shared_library.h"

namespace nccltune {

using namespace nccl_abi;

struct LoadedNcclLibrary {
  SharedLibrary library;
  NcclApi api;
};

namespace {

// Binds every entry of the table; the first missing symbol is the error. Optional entries stay
// nullptr where the library lacks them.
std::optional<Error> bind_api(const SharedLibrary& library, NcclApi& api) {
  std::optional<Error> error;
  auto bind = [&](auto& function, const char* name) {
    if (error) return;
    Status bound = library.bind(function, {name});
    if (!bound) error = Error{bound.error()};
  };
  bind(api.ncclGetVersion, "ncclGetVersion");
  bind(api.ncclGetUniqueId, "ncclGetUniqueId");
  bind(api.ncclCommInitRank, "ncclCommInitRank");
  bind(api.ncclCommDestroy, "ncclCommDestroy");
  bind(api.ncclCommAbort, "ncclCommAbort");
  bind(api.ncclCommGetAsyncError, "ncclCommGetAsyncError");
  bind(api.ncclGetErrorString, "ncclGetErrorString");
  bind(api.ncclAllReduce, "ncclAllReduce");
  bind(api.ncclAllGather, "ncclAllGather");
  bind(api.ncclReduceScatter, "ncclReduceScatter");
  bind(api.ncclBroadcast, "ncclBroadcast");
  bind(api.ncclReduce, "ncclReduce");
  bind(api.ncclSend, "ncclSend");
  bind(api.ncclRecv, "ncclRecv");
  bind(api.ncclGroupStart, "ncclGroupStart");
  bind(api.ncclGroupEnd, "ncclGroupEnd");
  (void)library.bind(api.ncclCommSplit, {"ncclCommSplit"});  // NCCL 2.18.1 added it
  return error;
}

}  // namespace

Result<NcclLibrary> NcclLibrary::load(const std::string& path) {
  Result<SharedLibrary> library = SharedLibrary::open(path, "the NCCL library");
  if (!library) return Error{library.error()};
  auto loaded = std::make_shared<LoadedNcclLibrary>(LoadedNcclLibrary{std::move(*library), {}});
  if (std::optional<Error> error = bind_api(loaded->library, loaded->api)) return *error;
  return NcclLibrary(std::move(loaded));
}

const std::string& NcclLibrary::path() const {
  return loaded_->library.path();
}

const NcclApi& NcclLibrary::api() const {
  return loaded_->api;
}

Status NcclLibrary::check(ncclResult_t result, std::string_view call) const {
  if (result == ncclSuccess) return Ok{};
  const char* text = api().ncclGetErrorString(result);
  return Error{std::string(call) + ": " + (text ? text : "unknown NCCL error") + " (ncclResult_t " +
               std::to_string(static_cast<int>(result)) + ")"};
}

Result<int> NcclLibrary::version() const {
  int code = 0;
  Status status = check(api().ncclGetVersion(&code), "ncclGetVersion");
  if (!status) return Error{status.error()};
  return code;
}

Result<ncclUniqueId> NcclLibrary::unique_id() const {
  ncclUniqueId id{};
  Status status = check(api().ncclGetUniqueId(&id), "ncclGetUniqueId");
  if (!status) return Error{status.error()};
  return id;
}

Result<NcclComm> NcclLibrary::init_rank(int nranks, const ncclUniqueId& id, int rank) const {
  ncclComm_t comm = nullptr;
  Status status =
      check(api().ncclCommInitRank(&comm, nranks, id, rank),
            "ncclCommInitRank(rank " + std::to_string(rank) + " of " + std::to_string(nranks) + ")");
  if (!status) return Error{status.error()};
  return NcclComm(loaded_, comm);
}

Result<std::optional<NcclComm>> NcclLibrary::split(const NcclComm& parent, int color, int key) const {
  if (api().ncclCommSplit == nullptr) {
    Result<int> code = version();
    return Error{path() + ": NCCL " + (code ? nccl_version_string(*code) : "(version unknown)") +
                 " has no ncclCommSplit (2.18 or later)"};
  }
  ncclComm_t comm = nullptr;
  Status status =
      check(api().ncclCommSplit(parent.get(), color, key, &comm, nullptr),
            "ncclCommSplit(color " + std::to_string(color) + ", key " + std::to_string(key) + ")");
  if (!status) return Error{status.error()};
  if (comm == nullptr) return std::optional<NcclComm>();
  return std::optional<NcclComm>(NcclComm(loaded_, comm));
}

Result<ncclResult_t> NcclLibrary::async_error(const NcclComm& comm) const {
  ncclResult_t async = ncclSuccess;
  Status status = check(api().ncclCommGetAsyncError(comm.get(), &async), "ncclCommGetAsyncError");
  if (!status) return Error{status.error()};
  return async;
}

NcclComm::NcclComm(NcclComm&& other) noexcept
    : library_(std::move(other.library_)), comm_(std::exchange(other.comm_, nullptr)) {}

NcclComm::~NcclComm() {
  if (library_ && comm_ != nullptr) library_->api.ncclCommDestroy(comm_);
}

void NcclComm::abort() {
  if (library_ && comm_ != nullptr) library_->api.ncclCommAbort(comm_);
  comm_ = nullptr;
}

std::string nccl_version_string(int code) {
  int major = 0;
  int minor = 0;
  int patch = 0;
  if (code >= 10000) {
    major = code / 10000;
    minor = code / 100 % 100;
    patch = code % 100;
  } else {
    major = code / 1000;
    minor = code / 100 % 10;
    patch = code % 100;
  }
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

}  // namespace nccltune
