// The collective operations a trial needs between the ranks of one MPI job, as an interface so
// the trial logic is testable without MPI (tuner/mpi_session.* implements it with MPI).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace nccltune {

class RankGroup {
 public:
  virtual ~RankGroup() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual void broadcast(void* data, std::size_t bytes, int root) = 0;
  virtual int max(int value) = 0;
  virtual int min(int value) = 0;
  virtual void max(std::vector<double>& values) = 0;                      // element-wise, in place
  virtual void min(std::vector<double>& values) = 0;                      // element-wise, in place
  virtual void sum(std::vector<double>& values) = 0;                      // element-wise, in place
  virtual void sum(std::vector<int64_t>& values) = 0;                     // element-wise, in place
  virtual std::vector<std::string> gather(const std::string& value) = 0;  // to every rank
  // The ranks that pass the same `color` (0 or more) as a group of their own, in this group's rank
  // order; nullptr for a rank that passes -1 (in no group). Every rank of this group calls it.
  virtual std::unique_ptr<RankGroup> split(int color) = 0;

  // Broadcasts a string from `root`.
  std::string broadcast(const std::string& value, int root);
};

// A group of one: for a single-process run and for tests.
class SoloGroup : public RankGroup {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  void broadcast(void*, std::size_t, int) override {}
  int max(int value) override { return value; }
  int min(int value) override { return value; }
  void max(std::vector<double>&) override {}
  void min(std::vector<double>&) override {}
  void sum(std::vector<double>&) override {}
  void sum(std::vector<int64_t>&) override {}
  std::vector<std::string> gather(const std::string& value) override { return {value}; }
  std::unique_ptr<RankGroup> split(int color) override {
    return color < 0 ? nullptr : std::make_unique<SoloGroup>();
  }
};

}  // namespace nccltune
