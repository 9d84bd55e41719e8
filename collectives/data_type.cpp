#include "collectives/data_type.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <string>

namespace nccltune {

std::string_view to_string(DataType type) {
  switch (type) {
    case DataType::float32: return "float";
    case DataType::float16: return "half";
    case DataType::bfloat16: return "bfloat16";
    case DataType::int32: return "int32";
  }
  return "?";
}

Result<DataType> parse_data_type(std::string_view name) {
  if (name == "float" || name == "float32" || name == "fp32") return DataType::float32;
  if (name == "half" || name == "float16" || name == "fp16") return DataType::float16;
  if (name == "bfloat16" || name == "bf16") return DataType::bfloat16;
  if (name == "int32" || name == "int") return DataType::int32;
  return Error{"unknown data type '" + std::string(name) + "' (expected float, half, bfloat16 or int32)"};
}

std::size_t element_size(DataType type) {
  switch (type) {
    case DataType::float32: return 4;
    case DataType::float16: return 2;
    case DataType::bfloat16: return 2;
    case DataType::int32: return 4;
  }
  return 0;
}

nccl_abi::ncclDataType_t to_nccl(DataType type) {
  switch (type) {
    case DataType::float32: return nccl_abi::ncclFloat32;
    case DataType::float16: return nccl_abi::ncclFloat16;
    case DataType::bfloat16: return nccl_abi::ncclBfloat16;
    case DataType::int32: return nccl_abi::ncclInt32;
  }
  return nccl_abi::ncclFloat32;
}

uint16_t float_to_half(float value) {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  const auto sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const uint32_t exponent = (bits >> 23) & 0xffu;
  uint32_t mantissa = bits & 0x7fffffu;
  if (exponent == 0xff) {  // infinity or NaN
    return static_cast<uint16_t>(sign | 0x7c00u | (mantissa ? 0x200u : 0u));
  }
  const int half_exponent = static_cast<int>(exponent) - 127 + 15;
  if (half_exponent >= 0x1f) return static_cast<uint16_t>(sign | 0x7c00u);  // overflow
  if (half_exponent <= 0) {                                                 // subnormal or 0
    if (half_exponent < -10) return sign;
    mantissa |= 0x800000u;
    const int shift = 14 - half_exponent;
    uint32_t half_mantissa = mantissa >> shift;
    const uint32_t rest = mantissa & ((1u << shift) - 1);
    const uint32_t halfway = 1u << (shift - 1);
    if (rest > halfway || (rest == halfway && (half_mantissa & 1u))) ++half_mantissa;
    return static_cast<uint16_t>(sign | half_mantissa);
  }
  uint32_t half = (static_cast<uint32_t>(half_exponent) << 10) | (mantissa >> 13);
  const uint32_t rest = mantissa & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ++half;  // may carry into exponent
  return static_cast<uint16_t>(sign | half);
}

float half_to_float(uint16_t bits) {
  const uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  const uint32_t exponent = (bits >> 10) & 0x1fu;
  const uint32_t mantissa = bits & 0x3ffu;
  if (exponent == 0) {
    const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -magnitude : magnitude;
  }
  if (exponent == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  return std::bit_cast<float>(sign | ((exponent - 15 + 127) << 23) | (mantissa << 13));
}

uint16_t float_to_bfloat16(float value) {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  if (std::isnan(value)) return static_cast<uint16_t>((bits >> 16) | 0x40u);
  const uint32_t rounding = 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>((bits + rounding) >> 16);
}

float bfloat16_to_float(uint16_t bits) {
  return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16);
}

void encode_element(DataType type, double value, std::byte* out) {
  switch (type) {
    case DataType::float32: {
      const auto element = static_cast<float>(value);
      std::memcpy(out, &element, sizeof element);
      return;
    }
    case DataType::float16: {
      const uint16_t element = float_to_half(static_cast<float>(value));
      std::memcpy(out, &element, sizeof element);
      return;
    }
    case DataType::bfloat16: {
      const uint16_t element = float_to_bfloat16(static_cast<float>(value));
      std::memcpy(out, &element, sizeof element);
      return;
    }
    case DataType::int32: {
      const auto element = static_cast<int32_t>(value);
      std::memcpy(out, &element, sizeof element);
      return;
    }
  }
}

double decode_element(DataType type, const std::byte* in) {
  switch (type) {
    case DataType::float32: {
      float element = 0;
      std::memcpy(&element, in, sizeof element);
      return element;
    }
    case DataType::float16: {
      uint16_t element = 0;
      std::memcpy(&element, in, sizeof element);
      return half_to_float(element);
    }
    case DataType::bfloat16: {
      uint16_t element = 0;
      std::memcpy(&element, in, sizeof element);
      return bfloat16_to_float(element);
    }
    case DataType::int32: {
      int32_t element = 0;
      std::memcpy(&element, in, sizeof element);
      return element;
    }
  }
  return 0;
}

}  // namespace nccltune
