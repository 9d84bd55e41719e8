// Element-wise work of the fake NCCL on host memory: reductions for NCCL's data types (half and
// bfloat16 through float, rounding to nearest even), and the corruption the `corrupt` fault
// applies.
#pragma once

#include <cstddef>

#include "collectives/nccl_declarations.h"

namespace nccltune::fake {

// Bytes per element, or 0 for a type the fake does not support (the fp8 types).
std::size_t type_size(nccl_abi::ncclDataType_t type);
// Whether the fake reduces `op`: sum, prod, max, min, and avg (a sum, then divide_elements).
bool supported_op(nccl_abi::ncclRedOp_t op);

// destination[i] = op(destination[i], source[i]) for `count` elements; ncclAvg adds.
void reduce_into(nccl_abi::ncclDataType_t type, nccl_abi::ncclRedOp_t op, void* destination,
                 const void* source, std::size_t count);

// data[i] /= by for `count` elements: ncclAvg's last step (NCCL's SumPostDiv for integers; for
// floating types NCCL multiplies each input by 1/n first, PreMulSum, which can round differently).
void divide_elements(nccl_abi::ncclDataType_t type, void* data, std::size_t count, int by);

// Overwrites every 97th element (from the first) with bytes 0x7f: a value no data check expects.
// Returns how many elements it changed.
std::size_t corrupt_elements(void* buffer, std::size_t count, std::size_t element_size);

}  // namespace nccltune::fake
