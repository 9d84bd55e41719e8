#include "collectives/data_check.h"

namespace nccltune {

void fill_send_elements(const DataPattern& pattern, int rank, std::size_t first, std::span<std::byte> out) {
  const std::size_t size = element_size(pattern.type());
  const std::size_t count = out.size() / size;
  for (std::size_t i = 0; i < count; ++i) {
    const auto value = static_cast<double>(pattern.value(rank, first + i));
    encode_element(pattern.type(), value, out.data() + i * size);
  }
}

int64_t count_wrong_elements(const CollectiveSpec& spec, const BufferLayout& layout,
                             const DataPattern& pattern, int rank, int root, std::size_t first,
                             std::span<const std::byte> received) {
  const std::size_t size = element_size(pattern.type());
  const std::size_t count = received.size() / size;
  int64_t wrong = 0;
  for (std::size_t i = 0; i < count; ++i) {
    const ExpectedElement source = spec.expected(first + i, layout, rank, pattern.nranks(), root);
    int64_t expected = 0;
    switch (source.kind) {
      case ExpectedElement::Kind::unchecked: continue;
      case ExpectedElement::Kind::sum: expected = pattern.sum(source.index); break;
      case ExpectedElement::Kind::rank_value: expected = pattern.value(source.rank, source.index); break;
    }
    const double value = decode_element(pattern.type(), received.data() + i * size);
    if (!(value == static_cast<double>(expected))) ++wrong;
  }
  return wrong;
}

}  // namespace nccltune
