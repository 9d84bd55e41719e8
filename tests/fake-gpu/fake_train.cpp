// fake_train: a training job's communication on the fake GPU stack, for what watches jobs (a
// profiler plugin such as NCCL's Inspector, then `nccltune observe`). Under
// `mpirun -np N fake_train [--steps S] [--comms world,rail,node] [--bytes LIST] [--compute-us U]`
// every rank loads CUDA and NCCL as nccltune does (--cuda-lib, --nccl-lib), makes a root
// communicator and splits off the communicators of a 3D-parallel job, named through
// ncclConfig_t's commName: "world" (every rank), "rail R" (the ranks of local rank R on every
// node: data parallel) and "node N" (the ranks of node N: tensor parallel). Each step is compute
// (the stream's clock advanced by U microseconds, libfakecuda's fakecuda_advance_stream) then,
// for every size of --bytes, all_reduce on the rail, all_gather and reduce_scatter on the node
// and all_reduce on the world; --hold-ms keeps the communicators that long after the last step
// (real time, for a profiler plugin's writer thread). Problems are one line on stderr, "fake_train: " first; exit 1.
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "collectives/cuda_driver.h"
#include "collectives/nccl_library.h"
#include "fakecuda_hooks.h"
#include "mpi_runtime/mpi_session.h"
#include "nccl_config.h"

namespace {

using namespace nccltune;

struct Options {
  int steps = 10;
  std::vector<std::string> comms{"world", "rail", "node"};
  std::vector<std::size_t> bytes{1u << 20};
  double compute_us = 1000;
  int hold_ms = 0;
  std::string nccl_lib = NcclLibrary::kDefaultPath;
  std::string cuda_lib = CudaDriver::kDefaultPath;
};

[[noreturn]] void usage_error(const std::string& line) {
  std::fprintf(stderr, "fake_train: %s\n", line.c_str());
  std::exit(2);
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream stream(text);
  for (std::string item; std::getline(stream, item, ',');) items.push_back(item);
  return items;
}

// "4096", "64K", "1M", "1G": bytes, a positive multiple of 4 (float32 elements).
std::size_t parse_bytes(const std::string& text) {
  char* end = nullptr;
  const unsigned long long value = std::strtoull(text.c_str(), &end, 10);
  unsigned long long scale = 1;
  if (*end == 'K') scale = 1ull << 10, ++end;
  else if (*end == 'M') scale = 1ull << 20, ++end;
  else if (*end == 'G') scale = 1ull << 30, ++end;
  if (end == text.c_str() || *end != '\0' || value == 0 || value > (1ull << 34) / scale || (value * scale) % 4 != 0)
    usage_error("--bytes: '" + text + "' is not a size in bytes (a multiple of 4, K, M or G suffix)");
  return static_cast<std::size_t>(value * scale);
}

Options parse(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) usage_error(flag + ": needs a value");
    const std::string value = argv[++i];
    if (flag == "--steps") {
      char* end = nullptr;
      const long steps = std::strtol(value.c_str(), &end, 10);
      if (*end != '\0' || steps < 1 || steps > 1000000) usage_error("--steps: '" + value + "' is not 1 or more");
      options.steps = static_cast<int>(steps);
    } else if (flag == "--comms") {
      options.comms = split_list(value);
      for (const std::string& comm : options.comms)
        if (comm != "world" && comm != "rail" && comm != "node")
          usage_error("--comms: unknown communicator '" + comm + "' (world, rail, node)");
    } else if (flag == "--bytes") {
      options.bytes.clear();
      for (const std::string& size : split_list(value)) options.bytes.push_back(parse_bytes(size));
      if (options.bytes.empty()) usage_error("--bytes: no size");
    } else if (flag == "--compute-us") {
      char* end = nullptr;
      options.compute_us = std::strtod(value.c_str(), &end);
      if (*end != '\0' || !(options.compute_us >= 0)) usage_error("--compute-us: '" + value + "' is not 0 or more");
    } else if (flag == "--hold-ms") {
      char* end = nullptr;
      const long hold = std::strtol(value.c_str(), &end, 10);
      if (*end != '\0' || hold < 0 || hold > 600000) usage_error("--hold-ms: '" + value + "' is not 0 to 600000");
      options.hold_ms = static_cast<int>(hold);
    } else if (flag == "--nccl-lib") {
      options.nccl_lib = value;
    } else if (flag == "--cuda-lib") {
      options.cuda_lib = value;
    } else {
      usage_error("unknown flag '" + flag + "'");
    }
  }
  return options;
}

bool wants(const Options& options, const char* comm) {
  return std::find(options.comms.begin(), options.comms.end(), comm) != options.comms.end();
}

// The job's communicators, destroyed at the end.
struct Comms {
  const NcclApi* api = nullptr;
  std::vector<std::pair<std::string, nccl_abi::ncclComm_t>> made;
  ~Comms() {
    for (auto& [name, comm] : made) api->ncclCommDestroy(comm);
  }
  nccl_abi::ncclComm_t find(const std::string& prefix) const {
    for (const auto& [name, comm] : made)
      if (name.rfind(prefix, 0) == 0) return comm;
    return nullptr;
  }
};

int run(MpiSession& session, const Options& options) {
  const int rank = session.rank();
  const auto failed = [&](const std::string& why) {
    std::fprintf(stderr, "fake_train: rank %d: %s\n", rank, why.c_str());
    return 1;
  };
  Result<CudaDriver> cuda = CudaDriver::load(options.cuda_lib);
  if (!cuda) return failed("--cuda-lib: " + cuda.error());
  // The compute phase: libfakecuda's clock, found by the soname of the copy just loaded.
  fakecuda_advance_stream_fn advance = nullptr;
  if (void* loaded = dlopen(options.cuda_lib.c_str(), RTLD_NOW | RTLD_NOLOAD)) {
    advance = reinterpret_cast<fakecuda_advance_stream_fn>(dlsym(loaded, "fakecuda_advance_stream"));
    dlclose(loaded);
  }
  if (advance == nullptr && options.compute_us > 0)
    return failed("--cuda-lib " + options.cuda_lib + " has no fakecuda_advance_stream: --compute-us needs libfakecuda.so");
  const NodeLayout& layout = session.layout();
  Result<CudaContext> context = cuda->use_device(layout.local_rank);
  if (!context) return failed(context.error());
  Result<CudaStream> stream = cuda->create_stream();
  if (!stream) return failed(stream.error());
  Result<NcclLibrary> nccl = NcclLibrary::load(options.nccl_lib);
  if (!nccl) return failed("--nccl-lib: " + nccl.error());
  nccl_abi::ncclUniqueId id{};
  if (rank == 0) {
    Result<nccl_abi::ncclUniqueId> made = nccl->unique_id();
    if (!made) return failed(made.error());
    id = *made;
  }
  session.broadcast(&id, sizeof id, 0);
  Result<NcclComm> root = nccl->init_rank(session.size(), id, rank);
  if (!root) return failed(root.error());
  const NcclApi& api = nccl->api();
  if (api.ncclCommSplit == nullptr) return failed("--nccl-lib " + options.nccl_lib + " has no ncclCommSplit");

  Comms comms;
  comms.api = &api;
  const auto split = [&](int color, int key, const std::string& name) -> Status {
    fake::NcclConfig config;
    config.commName = name.c_str();
    nccl_abi::ncclComm_t comm = nullptr;
    Status status = nccl->check(
        api.ncclCommSplit(root->get(), color, key, &comm, reinterpret_cast<nccl_abi::ncclConfig_t*>(&config)),
        "ncclCommSplit(" + name + ")");
    if (status && comm != nullptr) comms.made.emplace_back(name, comm);
    return status;
  };
  if (wants(options, "world"))
    if (Status made = split(0, rank, "world"); !made) return failed(made.error());
  if (wants(options, "rail"))
    if (Status made = split(layout.local_rank, layout.node, "rail " + std::to_string(layout.local_rank)); !made)
      return failed(made.error());
  if (wants(options, "node"))
    if (Status made = split(layout.node, layout.local_rank, "node " + std::to_string(layout.node)); !made)
      return failed(made.error());

  const std::size_t largest = *std::max_element(options.bytes.begin(), options.bytes.end());
  Result<DeviceBuffer> send = cuda->allocate(largest);
  Result<DeviceBuffer> recv = cuda->allocate(largest);
  if (!send || !recv) return failed(!send ? send.error() : recv.error());
  if (Status filled = cuda->fill_bytes(*send, largest, 0); !filled) return failed(filled.error());
  const auto cu_stream = reinterpret_cast<nccl_abi::cudaStream_t>(stream->get());
  constexpr auto kFloat = nccl_abi::ncclFloat32;
  const nccl_abi::ncclComm_t world = comms.find("world");
  const nccl_abi::ncclComm_t rail = comms.find("rail");
  const nccl_abi::ncclComm_t node = comms.find("node");
  const std::size_t node_ranks = static_cast<std::size_t>(layout.local_size);
  for (int step = 0; step < options.steps; ++step) {
    if (advance != nullptr && options.compute_us > 0) advance(stream->get(), options.compute_us);
    for (const std::size_t bytes : options.bytes) {
      const std::size_t count = bytes / 4;
      std::vector<std::pair<nccl_abi::ncclResult_t, const char*>> results;
      if (rail != nullptr)
        results.emplace_back(api.ncclAllReduce(send->data(), recv->data(), count, kFloat, nccl_abi::ncclSum, rail,
                                               cu_stream),
                             "ncclAllReduce(rail)");
      if (node != nullptr) {
        const std::size_t part = std::max<std::size_t>(count / node_ranks, 1);
        results.emplace_back(api.ncclAllGather(send->data(), recv->data(), part, kFloat, node, cu_stream),
                             "ncclAllGather(node)");
        results.emplace_back(api.ncclReduceScatter(send->data(), recv->data(), part, kFloat, nccl_abi::ncclSum,
                                                   node, cu_stream),
                             "ncclReduceScatter(node)");
      }
      if (world != nullptr)
        results.emplace_back(api.ncclAllReduce(send->data(), recv->data(), count, kFloat, nccl_abi::ncclSum, world,
                                               cu_stream),
                             "ncclAllReduce(world)");
      for (const auto& [result, call] : results)
        if (Status ok = nccl->check(result, call); !ok) return failed(ok.error());
    }
  }
  if (Status done = cuda->synchronize(*stream); !done) return failed(done.error());
  // A profiler plugin writes from a thread of its own, on its own clock (NCCL's Inspector every
  // NCCL_INSPECTOR_DUMP_THREAD_INTERVAL_MICROSECONDS, and only while a communicator lives).
  if (options.hold_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(options.hold_ms));
  if (rank == 0)
    std::printf("fake_train: %d steps on %d ranks (%d nodes): %zu communicators per rank\n", options.steps,
                session.size(), layout.nodes, comms.made.size());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const Options options = parse(argc, argv);
  auto session = nccltune::MpiSession::start(&argc, &argv);
  if (!session) {
    std::fprintf(stderr, "fake_train: %s\n", session.error().c_str());
    return 1;
  }
  const int status = run(**session, options);
  if (status != 0) (*session)->abort(status);
  return 0;
}
