// The MPI job a tune or bench runs in: ranks, node grouping (real hosts, or emulated nodes with
// NCCLTUNE_EMULATE_NODES=N: consecutive equal blocks of ranks act as N nodes), and the RankGroup
// operations. The only file that includes mpi.h.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/result.h"
#include "mpi_runtime/node_layout.h"
#include "mpi_runtime/rank_group.h"

namespace nccltune {

class MpiSession : public RankGroup {
 public:
  // MPI_Init; MPI_Finalize in the destructor. Reads NCCLTUNE_EMULATE_NODES.
  static Result<std::unique_ptr<MpiSession>> start(int* argc, char*** argv);
  ~MpiSession() override;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  const NodeLayout& layout() const { return layout_; }
  void broadcast(void* data, std::size_t bytes, int root) override;
  int max(int value) override;
  int min(int value) override;
  void max(std::vector<double>& values) override;
  void min(std::vector<double>& values) override;
  void sum(std::vector<double>& values) override;
  void sum(std::vector<int64_t>& values) override;
  std::vector<std::string> gather(const std::string& value) override;
  std::unique_ptr<RankGroup> split(int color) override;
  using RankGroup::broadcast;
  // Ends every rank of the job (a rank that cannot go on must not leave the others waiting).
  [[noreturn]] void abort(int code);

 private:
  MpiSession() = default;
  int rank_ = 0;
  int size_ = 1;
  NodeLayout layout_;
  std::unique_ptr<RankGroup> world_;  // MPI_COMM_WORLD's operations (mpi_session.cpp)
};

}  // namespace nccltune
