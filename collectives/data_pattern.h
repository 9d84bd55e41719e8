// DataPattern: the input each rank sends, as a function of rank and element index (like
// nccl-tests), and the sums the data check expects. Values are small non-negative integers
// chosen so that every partial sum over ranks, in any order, is exact in the data type: a
// check needs no tolerance, and any lost, doubled or misplaced contribution shows.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "collectives/data_type.h"

namespace nccltune {

class DataPattern {
 public:
  DataPattern(DataType type, int nranks);

  // The value rank `rank` sends at element `index` of its send buffer.
  int64_t value(int rank, std::size_t index) const;
  // The sum of value(r, index) over every rank r.
  int64_t sum(std::size_t index) const;

  int nranks() const { return nranks_; }
  DataType type() const { return type_; }

 private:
  static constexpr std::size_t kPeriod = 4099;  // prime, so offsets of whole blocks still show

  DataType type_;
  int nranks_;
  int contributing_ranks_;  // ranks whose values are not all zero
  int64_t max_value_;
  std::vector<int64_t> sums_;  // sum(index) for index % kPeriod
};

}  // namespace nccltune
