// libfakenccl.so's inside, shared by its files: the communicator (NCCL's opaque struct ncclComm)
// and the helpers that more than one of them uses. One concern per file: fake_nccl_init.cpp makes
// communicators (ncclCommInitRank, ncclCommSplit) and ends them, fake_nccl_collectives.cpp runs a
// collective (NCCL's pair or a tuner plugin's, the data, the clock), fake_nccl_groups.cpp holds
// ncclGroupStart/End with what they defer (a group's collectives, send/recv), and
// fake_nccl_comm.cpp the communicator's faults, failures and clock. Not installed: the fake's
// own header.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/result.h"
#include "collectives/nccl_declarations.h"
#include "comm_model.h"
#include "fake_model.h"
#include "fakecuda_hooks.h"
#include "nccl_debug.h"
#include "nccl_env.h"
#include "profiler_plugin_host.h"
#include "shared_comm.h"
#include "split_share.h"
#include "tuner_plugin_host.h"

#define FAKE_EXPORT extern "C" __attribute__((visibility("default")))

namespace fakenccl {

using namespace nccltune::nccl_abi;
using nccltune::Result;
using nccltune::Status;
using nccltune::fake::CommModel;
using nccltune::fake::DebugLog;
using nccltune::fake::FakeModel;
using nccltune::fake::FaultKind;
using nccltune::fake::NoiseSource;
using nccltune::fake::ProfilerPluginHost;
using nccltune::fake::SharedComm;
using nccltune::fake::Transfer;
using nccltune::fake::TunerPluginHost;

// One line on stderr, "fakenccl: " first.
void say(const std::string& line);

// libfakecuda.so's extra exports (fakecuda_hooks.h).
struct FakeCudaHooks {
  fakecuda_advance_stream_fn advance_stream = nullptr;
  fakecuda_stream_clock_fn stream_clock = nullptr;
  fakecuda_current_device_fn current_device = nullptr;
  fakecuda_is_device_range_fn is_device_range = nullptr;
};

enum class Collective { all_reduce, all_gather, reduce_scatter, broadcast, reduce };

// One checked collective call: what it moves, and the size NCCL plans it by (its nBytes,
// ncclFuncMaxSendRecvCount: all_gather and reduce_scatter count every rank's part).
struct CollectiveCall {
  Collective kind = Collective::all_reduce;
  const void* sendbuff = nullptr;
  void* recvbuff = nullptr;
  std::size_t count = 0;
  ncclDataType_t type = ncclFloat32;
  ncclRedOp_t op = ncclSum;
  int root = 0;
  cudaStream_t stream = nullptr;
  std::size_t nbytes = 0;
  std::size_t out_count = 0;  // elements this rank receives
};

// The model one collective runs under and how the communicator behaves for it (the model's
// `collectives` entry for that op).
struct OpModel {
  FakeModel model;
  CommModel behaviour;
};

// What a communicator's init takes from its process, as ncclCommInitRank read it. A split
// inherits it from its parent: NCCL reads its environment once per process (F19, N9), and the
// host and device are the process's.
struct ProcessSetup {
  FakeModel model;  // NCCLTUNE_FAKE_MODEL as read, before model_for_nodes
  nccltune::fake::NcclEnv env;
  std::string host;       // this process's host (process_host)
  bool emulated = false;  // the host is NCCLTUNE_EMULATE_NODES's "-node<k>"
  int device = 0;         // the current device at ncclCommInitRank
  int world_rank = 0;     // the launcher's rank of this process (late_rank's `rank`)
  FakeCudaHooks hooks;
};

}  // namespace fakenccl

// NCCL's communicator (ncclComm_t points to it), global as NCCL's opaque struct is.
struct ncclComm {
  ncclComm(fakenccl::FakeModel fake_model, fakenccl::CommModel comm_model,
           std::map<std::string, fakenccl::OpModel> op_models, fakenccl::SharedComm shared_comm,
           fakenccl::ProcessSetup setup, const fakenccl::ncclUniqueId& comm_id, fakenccl::DebugLog debug)
      : model(std::move(fake_model)),
        behaviour(std::move(comm_model)),
        ops(std::move(op_models)),
        noise(model.noise, behaviour.rank),
        shared(std::move(shared_comm)),
        cuda(setup.hooks),
        process(std::move(setup)),
        id(comm_id),
        log(std::move(debug)) {}

  fakenccl::FakeModel model;
  fakenccl::CommModel behaviour;
  std::map<std::string, fakenccl::OpModel> ops;  // by op name
  fakenccl::NoiseSource noise;
  fakenccl::SharedComm shared;
  fakenccl::FakeCudaHooks cuda;
  fakenccl::ProcessSetup process;  // for the communicators split off this one
  fakenccl::ncclUniqueId id;       // its segment's id; a split derives its children's from it
  int split_count = 0;             // ncclCommSplit calls so far (NCCL's comm->splitCount)
  // What a child that shares this communicator's resources is capped at (split_share.h): its own
  // channels, or those it was capped at itself when it shares its parent's.
  nccltune::fake::SharedChannels shared_channels;
  fakenccl::DebugLog log;
  // NCCL_TUNER_PLUGIN's plugin, after `log` (its lines go there): destroyed first, finalize included.
  std::unique_ptr<fakenccl::TunerPluginHost> tuner;
  // NCCL_PROFILER_PLUGIN's plugin for this communicator, after `log`: finalized at destroy.
  std::unique_ptr<fakenccl::ProfilerPluginHost> profiler;
  std::string name;  // config.commName, "" when none was given
  // NCCL's comm->seqNumber per ncclFunc_t: every collective counts, profiled or not.
  std::array<std::uint64_t, 5> seq_numbers{};
  // Microseconds this rank reaches each collective late (the model's late_rank faults).
  double late_us = 0;
  // Where each stream's clock stood when this communicator's last collective on it ended: the
  // ranks of a collective end together, so what one rank spent since beyond the others is how
  // late it arrives.
  std::map<fakenccl::cudaStream_t, double> collective_end;
  fakenccl::ncclResult_t async_error = fakenccl::ncclSuccess;
  std::vector<fakenccl::Transfer> pending;  // grouped send/recv, run at ncclGroupEnd
  fakenccl::cudaStream_t pending_stream = nullptr;
  std::vector<fakenccl::CollectiveCall> grouped;  // collectives of the open group, planned at ncclGroupEnd
};

namespace fakenccl {

// What `op` runs under: its own entry's model and behaviour, else the communicator's.
struct OpView {
  const FakeModel& model;
  const CommModel& behaviour;
};
OpView op_view(const ncclComm& comm, std::string_view op);

// "rank R: ", which starts the communicator's stderr lines.
std::string prefix(const ncclComm& comm);

// hang and crash fire when an op starts.
void fire_op_faults(const ncclComm& comm, const char* function, std::string_view op);

// The communicator's first failure sticks, as NCCL's asynchronous error does.
ncclResult_t fail(ncclComm& comm, const std::string& what, const std::string& error);
ncclResult_t invalid(const ncclComm& comm, const std::string& what, const std::string& error);

bool device_range(const ncclComm& comm, const void* pointer, std::size_t bytes);

// One op's time on the stream: the `pair` that runs, whoever chose it (NCCL's cost model, or a
// tuner plugin), with the comm's slow factors and noise.
// `channels`: a tuner plugin's nChannels (0: NCCL's own count for the pair).
void advance_clock(ncclComm& comm, cudaStream_t stream, const char* op, double bytes,
                   const nccltune::fake::AlgoProto& pair, int channels = 0);

// fake_nccl_collectives.cpp, for a group's collectives (fake_nccl_groups.cpp).
const char* function_name(Collective kind);
Result<nccltune::fake::AlgoProto> choose_pair(ncclComm& comm, Collective kind, const CommModel& behaviour,
                                              std::size_t nbytes, int& channels);
const CommModel* call_behaviour(const ncclComm& comm, const CollectiveCall& call,
                                std::optional<CommModel>& narrowed, ncclResult_t& error);
// `group`: the profiler plugin's group event of the launch, nullptr when there is none.
ncclResult_t execute_collective(ncclComm& comm, const CollectiveCall& call, const CommModel& behaviour,
                                const nccltune::fake::AlgoProto& pair, int plugin_channels, void* group);

// fake_nccl_groups.cpp: the open group of this thread (ncclGroupStart without its ncclGroupEnd).
bool in_group();
// `comm` has collectives or send/recv for the open group's ncclGroupEnd.
void join_group(ncclComm* comm);
// `comm` is destroyed: the group's end must not reach it.
void leave_group(ncclComm* comm);
// Runs `comm`'s send/recv now (outside a group) or at ncclGroupEnd.
ncclResult_t flush_pending(ncclComm& comm);

}  // namespace fakenccl
