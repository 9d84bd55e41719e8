// DataType: the element types the benchmark runs (nccl-tests' -d float|half|bfloat16|int32),
// with host-side encoding so that half and bfloat16 need no CUDA headers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "base/result.h"
#include "collectives/nccl_declarations.h"

namespace nccltune {

enum class DataType { float32, float16, bfloat16, int32 };

// "float", "half", "bfloat16", "int32" (nccl-tests' names).
std::string_view to_string(DataType type);
// Accepts nccl-tests' names and "float32", "fp32", "float16", "fp16", "bf16", "int".
Result<DataType> parse_data_type(std::string_view name);
std::size_t element_size(DataType type);
nccl_abi::ncclDataType_t to_nccl(DataType type);

// IEEE binary16 and bfloat16 from and to float, rounding to nearest even.
uint16_t float_to_half(float value);
float half_to_float(uint16_t bits);
uint16_t float_to_bfloat16(float value);
float bfloat16_to_float(uint16_t bits);

// Writes `value` as one element of `type` at `out` (element_size(type) bytes).
void encode_element(DataType type, double value, std::byte* out);
// Reads one element of `type` at `in`.
double decode_element(DataType type, const std::byte* in);

}  // namespace nccltune
