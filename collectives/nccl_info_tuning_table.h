// The tuning table NCCL prints on rank 0 of every communicator at init (INFO TUNING,
// src/graph/tuning.cc ncclTopoTuneModel; the same lines from 2.18 to 2.30): its cost model of
// each collective with each algorithm and protocol, in blocks of three algorithms:
//   "  Algorithm   |" then " %14s   %14s   %14s |" per algorithm of the block
//   "  Protocol    |" then " %14s |" for all three slots of the block, even a block of one
//   " Max NThreads |" then " %14d |" per algorithm and protocol
//   "%13s |" (Broadcast, Reduce, AllGather, ReduceScatter, AllReduce) then "%8.1f/%6.1f |" per
//   algorithm and protocol: latency in microseconds / bandwidth in GB/s
// 2.23 and later have seven algorithms: (Tree Ring CollNetDirect) (CollNetChain NVLS NVLSTree)
// (PAT); before, six in two blocks.
//
// The bandwidth is what NCCL's time model divides the bytes by (time = latency + bytes / (1000 x
// bw), ncclTopoGetAlgoTime), so an algorithm bandwidth whatever NCCL called it on the way (it
// converts its bus bandwidth for Ring, Tree, NVLS and CollNet: "Convert bus BW to algorithm BW";
// NCCL 2.11 and before headed the table "Latency/AlgBw"). nccl-tests' busbw factor turns it into
// the busbw nccl-tests would show if the model held, which is what a measurement compares with.
//
// No marker tells a disabled cell: 0.0/0.0 is a pair NCCL never modelled (left out here), a
// latency with a bandwidth of 0.0 a pair it disabled (NCCL_ALGO, NCCL_PROTO, the hardware).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nccltune {

// One (collective, algorithm, protocol) pair of the table. Names are spelled as the TUNING
// choice lines spell them since 2.24 ("AllReduce", "NVLS_TREE", "SIMPLE"), so the two compare.
struct NcclModelCell {
  std::string op;
  std::string algo;
  std::string proto;
  double latency_us = 0;
  double algbw = 0;                // GB/s; 0 when NCCL disabled the pair
  std::optional<int> max_threads;  // the " Max NThreads" row
  friend bool operator==(const NcclModelCell&, const NcclModelCell&) = default;
};

struct NcclModelTable {
  // The communicator's ranks: the last "nranks"/"nRanks" its process printed before the table.
  std::optional<int> ranks;
  std::vector<NcclModelCell> cells;  // in the printed order, pairs never modelled left out
  friend bool operator==(const NcclModelTable&, const NcclModelTable&) = default;
};

inline constexpr std::size_t kMaxModelCells = 1024;  // per table
inline constexpr std::size_t kMaxModelTables = 64;   // per reader

// The busbw nccl-tests would show at a size large enough for the latency not to count: algbw x
// the collective's busbw factor; nullopt without the ranks or for a collective nccl-tests lacks.
std::optional<double> model_busbw(const NcclModelCell& cell, std::optional<int> ranks);

// Reads the table of one process line by line (lines of other ranks and processes must go to
// their own reader). A table ends where an Algorithm line names an algorithm it already has, or
// at take().
class NcclTuningTableReader {
 public:
  // Reads one message (after "NCCL INFO "); false when it is not a line of the table.
  // `ranks` is what the process said of its communicator so far.
  bool read(std::string_view body, std::optional<int> ranks);
  // The tables read, the one under way included; leaves the reader empty.
  std::vector<NcclModelTable> take();

 private:
  void finish();

  std::vector<std::string> algos_;               // the current block's
  std::vector<std::string> protos_;              // the current block's, one period
  std::vector<std::optional<int>> max_threads_;  // per cell of the current block
  std::vector<std::string> table_algos_;         // every block's of the table under way
  NcclModelTable table_;
  bool started_ = false;
  std::vector<NcclModelTable> done_;
};

}  // namespace nccltune
