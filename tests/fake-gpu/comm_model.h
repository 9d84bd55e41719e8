// CommModel: how one fake communicator behaves, decided once at ncclCommInitRank from the model
// and the NCCL_* environment of that moment; and the time of one op, by the model's formula
// (tests/fake-gpu/README.md):
//   time = lat_us * lat_scale + bytes / algbw,
//   algbw = busbw_gbps * channel scale * effects / busbw_factor(op, nranks)   (GB/s = 1e9 B/s)
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "channel_rules.h"
#include "collectives/nccl_declarations.h"
#include "fake_model.h"
#include "nccl_env.h"

namespace nccltune::fake {

struct AlgoProto {
  std::string algo;
  std::string proto;

  friend bool operator==(const AlgoProto&, const AlgoProto&) = default;
};

// Where a communicator's ranks sit, for the faults that name nodes: this rank's emulated node
// index (nccl_debug.h, emulated_node_indexes), the distinct indexes of all its ranks, and NCCL's
// node count and local ranks (by host, or by NVLink domain under MNNVL: mnnvl_domains.h). The
// default is a communicator on one host, node 0.
struct CommNodes {
  int node = 0;
  std::vector<int> present{0};  // ascending
  int count = 1;
  int fewest_local_ranks = 0;  // the fewest of its ranks on any of its nodes; 0: nranks / count
  int local_ranks = 0;         // the ranks on this rank's node; 0: nranks / count

  bool holds(int index) const;
};

struct CommModel {
  int rank = 0;
  int nranks = 1;
  int channels = 1;       // NCCL's coll channels (connect.cc), for every algorithm but NVLS
  double channel_scale = 1;  // the model's busbw_scale at `channels`
  int nvls_channels = 0;  // NVLS's own channels (nvls.cc); 0: no NVLS support on this communicator
  int nodes = 1;          // NCCL's node count
  // The coll and NVLS channels with no NCCL_* set: the model's times are NCCL's at its defaults,
  // so a size's channel scale is relative to the channels NCCL's defaults run that size on.
  int default_channels = 1;
  int default_nvls_channels = 0;
  ThreadCounts threads;  // NCCL_NTHREADS, NCCL_LL128_NTHREADS as NCCL reads them (channel_rules.h)
  int nccl_version = kDefaultNcclVersion;
  int local_ranks = 1;    // NCCL's local ranks of this rank's node (comm->localRanks)
  double busbw_scale = 1;  // product of the effects that hold for every algorithm
  double lat_scale = 1;
  // Effects that hold for some pairs only (Effect::scoped): the model's scope, narrowed to where
  // NCCL lets their variables act (knob_scope.h).
  std::vector<Effect> algo_effects;
  std::vector<AlgoProto> allowed;  // by NCCL_ALGO, NCCL_PROTO and `requires`, in model order
  // When `allowed` is empty, why (the settings that left nothing), and whether NCCL_ALGO or
  // NCCL_PROTO did: NCCL fails the collective's calls then, not the communicator's init.
  std::string no_pair;
  bool no_pair_by_list = false;
  std::vector<FaultKind> faults;   // faults that hold for this rank
  // `corrupt` faults whose `when` names NCCL_ALGO and/or NCCL_PROTO: the rest of `when` held at
  // init, and these names are matched against the pair each op runs (corrupts()).
  std::vector<Condition> corrupting_pairs;
  double slow_factor = 1;  // slow_rank's, slow_node's and slow_link's factors that hold, else 1

  bool has(FaultKind kind) const;
  // The channels `pair` runs on (getAlgoInfo, src/enqueue.cc): NVLS and NVLSTree NVLS's own,
  // the rest NCCL's coll channels.
  int channels_for(const AlgoProto& pair) const;
  // The same with no NCCL_* set.
  int default_channels_for(const AlgoProto& pair) const;
};

// Whether an op that runs `pair` corrupts its output: a `corrupt` fault that held at init, or one
// whose NCCL_ALGO / NCCL_PROTO names `pair` (collectives with a cost table; not alltoall). A protocol that
// corrupts does so whoever picked it: NCCL_ALGO/NCCL_PROTO, NCCL's cost model or a tuner plugin.
bool corrupts(const CommModel& comm, const AlgoProto& pair);

// The communicator as collective `op` sees it (a scoped NCCL_ALGO / NCCL_PROTO applies per
// collective), for a rank on `nodes.node`: faults with a `node` hold only there (slow_node: when
// the communicator holds it), slow_link when it holds both ends. A collective NCCL offers no
// pair (`allowed` empty) still resolves: its calls fail, as NCCL's do.
Result<CommModel> resolve_comm_model(const FakeModel& model, const NcclEnv& env, int rank, int nranks,
                                     std::string_view op = "all_reduce", const CommNodes& nodes = {});

// Whether NCCL has an NVLS kernel for reduction `op` on `type` (ncclNvlsSupported,
// src/include/device.h: sum on 32/64-bit integers, half, bfloat16, float and double; min and max
// on the integers and the 16-bit floats; ncclAvg, PreMulSum or SumPostDiv there, never).
// all_gather and broadcast reduce nothing and always may (getAlgoInfo, src/enqueue.cc).
bool nvls_reduces(std::string_view collective, nccl_abi::ncclRedOp_t op, nccl_abi::ncclDataType_t type);
// Whether PAT runs `collective` with reduction `op`: not ReduceScatter with ncclAvg (PreMulSum or
// SumPostDiv; updateCollCostTable, src/enqueue.cc).
bool pat_reduces(std::string_view collective, nccl_abi::ncclRedOp_t op);

// NCCL's coll channels as src/graph/connect.cc sets them (ncclTopoPostset): the model's default,
// first capped by NCCL_MAX_NCHANNELS and NCCL_MAX_CTAS, then raised to NCCL_MIN_NCHANNELS and
// NCCL_MIN_CTAS, at most 64 (MAXCHANNELS).
int channels_used(const FakeModel& model, const NcclEnv& env);
// NVLS's channels (ncclNvlsInit, src/transport/nvls.cc): 16 on SM 9.x, 24 on one node / 32 on
// more on SM 10.x, NCCL_NVLS_NCHANNELS instead when above 0, bounded by NCCL_MIN_CTAS and
// NCCL_MAX_CTAS; never NCCL_MIN/MAX_NCHANNELS. 0 when NVLS is off: NCCL_NVLS_ENABLE=0, or fewer
// than 2 of the communicator's GPUs on a node (3 before NCCL 2.28.7), or no multicast support
// (`nccl_log.nvls`, by default whether the model has NVLS or NVLSTree).
int nvls_channels_used(const FakeModel& model, const NcclEnv& env, const CommNodes& nodes, int nranks);
// busbw_scale for `channels`: the nearest listed count at or below it (the smallest listed
// count when all are above; 1 when none is listed).
double channel_scale(const FakeModel& model, int channels);

// nccl-tests' busbw factors, the fake's own copy: all_reduce 2(n-1)/n; all_gather,
// reduce_scatter, alltoall (n-1)/n; broadcast, reduce 1.
double busbw_factor(std::string_view op, int nranks);

// One pair's cost on a communicator, as NCCL's time model holds it: time = lat_us + bytes /
// algbw (its init tuning table prints the two as latency/bandwidth). algbw 0: one rank (factor 0).
struct PairCost {
  double lat_us = 0;
  double algbw_gbps = 0;
};
// The hardware's cost (`algos`, with channels and effects) on the channels `pair` runs on, or
// on `channels` when above 0 (a tuner plugin's nChannels: at most the communicator's).
PairCost pair_cost(const FakeModel& model, const CommModel& comm, const AlgoProto& pair, std::string_view op,
                   int channels = 0);
// NCCL's own estimate of `pair` (`nccl_model`: no effects, no channel scaling, as NCCL's model
// knows neither), or nullopt when the model has no nccl_model or it does not rate the pair.
std::optional<PairCost> nccl_pair_cost(const FakeModel& model, const CommModel& comm, const AlgoProto& pair,
                                       std::string_view op);
double cost_time_us(const PairCost& cost, double bytes);

// The channels an op of `bytes` that runs `pair` uses (channels_at_size, channel_rules.h): of
// those the communicator gives the pair, or of `plugin_channels` when above 0 (a tuner plugin's
// nChannels, at most the communicator's; NCCL keeps that count, F14).
int op_channels(const CommModel& comm, const AlgoProto& pair, std::string_view op, double bytes,
                int plugin_channels = 0);
// The formula for one pair; a factor of 0 (one rank) leaves the latency alone. Its channel scale
// is for the channels NCCL runs `bytes` on (channels_at_size, channel_rules.h), relative to those
// its defaults run that size on: below the size where every channel is used, more channels gain
// nothing.
double pair_time_us(const FakeModel& model, const CommModel& comm, const AlgoProto& pair, std::string_view op,
                    double bytes, int channels = 0);
// What NCCL would pick among `comm.allowed` (NCCL_ALGO and NCCL_PROTO are a filter, NCCL's cost
// model still chooses): with `nccl_model`, its cheapest pair there (topoGetAlgoInfo); else the
// model's default for the size when allowed, else the fastest allowed pair (an older model's
// stand-in, kinder than NCCL). `comm.allowed` must not be empty.
AlgoProto choose_algo_proto(const FakeModel& model, const CommModel& comm, std::string_view op, double bytes);
// Time of one op on this rank that runs `pair`, before noise: its time times slow_factor.
double pair_op_time_us(const FakeModel& model, const CommModel& comm, const AlgoProto& pair,
                       std::string_view op, double bytes, int channels = 0);
// The same for the pair NCCL would pick (choose_algo_proto).
double op_time_us(const FakeModel& model, const CommModel& comm, std::string_view op, double bytes);

// Multiplicative noise on each timed op: 1 + cv * z, z standard normal from a generator seeded
// by the model's seed and the rank, so runs repeat exactly. With cv 0 every factor is exactly 1.
class NoiseSource {
 public:
  NoiseSource(const Noise& noise, int rank);
  double next_factor();

 private:
  uint64_t next_bits();

  double cv_;
  uint64_t state_;
};

}  // namespace nccltune::fake
