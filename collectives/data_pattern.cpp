#include "collectives/data_pattern.h"

#include <algorithm>

namespace nccltune {

namespace {

// The largest integer up to which every integer is exact in `type`.
int64_t exact_integer_limit(DataType type) {
  switch (type) {
    case DataType::float32: return int64_t{1} << 24;
    case DataType::float16: return 2048;
    case DataType::bfloat16: return 256;
    case DataType::int32: return int64_t{1} << 30;
  }
  return 256;
}

uint64_t mix(uint64_t x) {  // splitmix64's finalizer
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace

DataPattern::DataPattern(DataType type, int nranks)
    : type_(type), nranks_(std::max(nranks, 1)), sums_(kPeriod, 0) {
  const int64_t limit = exact_integer_limit(type);
  // Values 0..max_value_ from at most `contributing_ranks_` ranks: sums stay <= limit.
  max_value_ = std::clamp<int64_t>(limit / nranks_, 1, 7);
  contributing_ranks_ = static_cast<int>(std::min<int64_t>(nranks_, limit / max_value_));
  for (int rank = 0; rank < contributing_ranks_; ++rank)
    for (std::size_t index = 0; index < kPeriod; ++index) sums_[index] += value(rank, index);
}

int64_t DataPattern::value(int rank, std::size_t index) const {
  if (rank < 0 || rank >= contributing_ranks_) return 0;
  const uint64_t key = (static_cast<uint64_t>(rank) << 32) ^ (index % kPeriod);
  return static_cast<int64_t>(mix(key) % static_cast<uint64_t>(max_value_ + 1));
}

int64_t DataPattern::sum(std::size_t index) const {
  return sums_[index % kPeriod];
}

}  // namespace nccltune
