// TunerPluginHost: the fake NCCL's side of NCCL's tuner plugin interface, as NCCL 2.28.9 runs it
// (tests/fake-gpu/README.md, "Tuner plugins"). At ncclCommInitRank, NCCL_TUNER_PLUGIN names the
// library (a path or file name as dlopen takes it, else "X" -> libnccl-tuner-X.so; "none": no
// plugin), its table is ncclTunerPlugin_v7 (NCCL 2.32.6+), else _v6 (2.30.3+), else _v5, else _v4,
// and init runs with the communicator's ranks and node count; every collective then asks
// getCollInfo with a cost table, and the pair of lowest cost runs; finalize runs at ncclCommDestroy.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "comm_model.h"
#include "nccl_debug.h"
#include "nccl_tuner_abi.h"

namespace nccltune::fake {

// The cost table NCCL hands to getCollInfo: microseconds per (algorithm, protocol) cell, in
// NCCL's row order, NCCL_ALGO_PROTO_IGNORE (-1) for a pair NCCL does not allow.
using CostTable = std::array<std::array<float, tuner_abi::kNumProtocols>, tuner_abi::kNumAlgorithms>;

// NCCL's row and column of a pair of the model's names; nullopt for a name NCCL 2.28 has no cell for.
std::optional<std::pair<int, int>> cost_table_cell(const AlgoProto& pair);
// The pair of a cell.
AlgoProto cell_pair(int algorithm, int protocol);

// What NCCL's topoGetAlgoInfo (src/enqueue.cc) picks from a table: the cell of lowest cost that is
// not ignored and not negative, the first in row order on ties (a strict `<` over algorithms, then
// protocols; FIDELITY.md F38). nullopt when every cell is ignored.
std::optional<AlgoProto> lowest_cost_pair(const CostTable& table);
// The cost entered for a model's own choice where the model has no `nccl_model`: just below the
// table's lowest, so that NCCL's strict `<` picks it, as it would its own estimate's minimum.
float below_lowest(float lowest);

class TunerPluginHost {
 public:
  // What opening NCCL_TUNER_PLUGIN came to.
  struct Opened {
    std::unique_ptr<TunerPluginHost> host;  // null: no plugin (unset, "none", not found, no table)
    bool init_failed = false;               // the plugin's init returned `init_result`
    tuner_abi::ncclResult_t init_result = tuner_abi::ncclResult_t{};
  };

  // Loads the plugin `name` (NCCL_TUNER_PLUGIN's value; "" when unset, which opens
  // libnccl-tuner.so from the library path; the v7 table first when `nccl_version`, the model's,
  // is 2.32.6 or newer, then v6 when it is 2.30.3 or newer, then v5 and v4, as NCCL's
  // ncclTunerPluginLoad of that version) and runs its init for a communicator of
  // `nranks` ranks on `nnodes` nodes, its lines going to `log` (which must outlive the host).
  // NCCL's INFO lines about the load go to `log` as well.
  static Opened open(const std::string& name, int nccl_version, std::uint64_t comm_id, std::size_t nranks,
                     std::size_t nnodes, DebugLog& log);

  TunerPluginHost(const TunerPluginHost&) = delete;
  TunerPluginHost& operator=(const TunerPluginHost&) = delete;
  ~TunerPluginHost();  // finalize, then dlclose

  // getCollInfo for one collective (collType an ncclFunc_t); the plugin may lower costs in `table`
  // and set `channels`.
  tuner_abi::ncclResult_t get_coll_info(int coll_type, std::size_t bytes, CostTable& table, int& channels);

  const std::string& name() const { return name_; }
  // The ABI version of the table in use (4 to 7), as "TUNER/Plugin: Using <name> (vN)" said.
  int abi_version() const { return abi_version_; }

 private:
  TunerPluginHost() = default;

  void* library_ = nullptr;
  void* context_ = nullptr;
  std::string name_;
  int abi_version_ = 0;
  tuner_abi::getCollInfo_t get_coll_info_ = nullptr;
  tuner_abi::ncclResult_t (*finalize_)(void*) = nullptr;
  DebugLog* log_ = nullptr;
};

}  // namespace nccltune::fake
