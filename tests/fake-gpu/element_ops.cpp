#include "element_ops.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace nccltune::fake {

using namespace nccl_abi;

namespace {

// binary16 <-> float, the fake's own copy.
float from_half(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu;
  const uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0) {
    const float value = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -value : value;
  }
  if (exponent == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

uint16_t to_half(float f) {
  const uint32_t bits = std::bit_cast<uint32_t>(f);
  const uint32_t sign = (bits >> 16) & 0x8000u;
  if (std::isnan(f)) return static_cast<uint16_t>(sign | 0x7e00u);
  const float magnitude = std::fabs(f);
  if (magnitude >= 65520.0f) return static_cast<uint16_t>(sign | 0x7c00u);
  if (magnitude < 0x1.0p-14f) {  // subnormal: multiples of 2^-24, rounded to nearest even
    const auto units = static_cast<uint32_t>(std::nearbyint(magnitude * 0x1.0p24f));
    return static_cast<uint16_t>(sign | units);
  }
  const uint32_t exponent = ((bits >> 23) & 0xffu) - 112;
  uint32_t half = (exponent << 10) | ((bits >> 13) & 0x3ffu);
  const uint32_t rest = bits & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ++half;
  return static_cast<uint16_t>(sign | half);
}

float from_bfloat16(uint16_t b) {
  return std::bit_cast<float>(static_cast<uint32_t>(b) << 16);
}

uint16_t to_bfloat16(float f) {
  const uint32_t bits = std::bit_cast<uint32_t>(f);
  if (std::isnan(f)) return static_cast<uint16_t>((bits >> 16) | 0x40u);
  return static_cast<uint16_t>((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
}

template <class T>
T apply(ncclRedOp_t op, T a, T b) {
  if (op == ncclMax) return std::max(a, b);
  if (op == ncclMin) return std::min(a, b);
  if constexpr (std::is_integral_v<T>) {  // wrap around, as the GPU does
    using U = std::make_unsigned_t<T>;
    const auto x = static_cast<U>(a);
    const auto y = static_cast<U>(b);
    return static_cast<T>(op == ncclProd ? static_cast<U>(x * y) : static_cast<U>(x + y));
  } else {
    return op == ncclProd ? a * b : a + b;
  }
}

template <class T>
void reduce_typed(ncclRedOp_t op, void* destination, const void* source, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) {
    T a;
    T b;
    std::memcpy(&a, static_cast<const std::byte*>(destination) + i * sizeof(T), sizeof(T));
    std::memcpy(&b, static_cast<const std::byte*>(source) + i * sizeof(T), sizeof(T));
    const T result = apply(op, a, b);
    std::memcpy(static_cast<std::byte*>(destination) + i * sizeof(T), &result, sizeof(T));
  }
}

// 16-bit floating types: reduce in float, round back.
template <float (*decode)(uint16_t), uint16_t (*encode)(float)>
void reduce_16bit(ncclRedOp_t op, void* destination, const void* source, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) {
    uint16_t a = 0;
    uint16_t b = 0;
    std::memcpy(&a, static_cast<const std::byte*>(destination) + 2 * i, 2);
    std::memcpy(&b, static_cast<const std::byte*>(source) + 2 * i, 2);
    const uint16_t result = encode(apply(op, decode(a), decode(b)));
    std::memcpy(static_cast<std::byte*>(destination) + 2 * i, &result, 2);
  }
}

}  // namespace

std::size_t type_size(ncclDataType_t type) {
  switch (type) {
    case ncclInt8:
    case ncclUint8: return 1;
    case ncclFloat16:
    case ncclBfloat16: return 2;
    case ncclInt32:
    case ncclUint32:
    case ncclFloat32: return 4;
    case ncclInt64:
    case ncclUint64:
    case ncclFloat64: return 8;
    default: return 0;
  }
}

bool supported_op(ncclRedOp_t op) {
  return op == ncclSum || op == ncclProd || op == ncclMax || op == ncclMin || op == ncclAvg;
}

namespace {

template <class T>
void divide_typed(void* data, std::size_t count, int by) {
  for (std::size_t i = 0; i < count; ++i) {
    T value;
    std::memcpy(&value, static_cast<std::byte*>(data) + i * sizeof(T), sizeof(T));
    value = static_cast<T>(value / static_cast<T>(by));
    std::memcpy(static_cast<std::byte*>(data) + i * sizeof(T), &value, sizeof(T));
  }
}

template <float (*decode)(uint16_t), uint16_t (*encode)(float)>
void divide_16bit(void* data, std::size_t count, int by) {
  for (std::size_t i = 0; i < count; ++i) {
    uint16_t value = 0;
    std::memcpy(&value, static_cast<std::byte*>(data) + 2 * i, 2);
    value = encode(decode(value) / static_cast<float>(by));
    std::memcpy(static_cast<std::byte*>(data) + 2 * i, &value, 2);
  }
}

}  // namespace

void divide_elements(ncclDataType_t type, void* data, std::size_t count, int by) {
  switch (type) {
    case ncclInt8: return divide_typed<int8_t>(data, count, by);
    case ncclUint8: return divide_typed<uint8_t>(data, count, by);
    case ncclInt32: return divide_typed<int32_t>(data, count, by);
    case ncclUint32: return divide_typed<uint32_t>(data, count, by);
    case ncclInt64: return divide_typed<int64_t>(data, count, by);
    case ncclUint64: return divide_typed<uint64_t>(data, count, by);
    case ncclFloat32: return divide_typed<float>(data, count, by);
    case ncclFloat64: return divide_typed<double>(data, count, by);
    case ncclFloat16: return divide_16bit<from_half, to_half>(data, count, by);
    case ncclBfloat16: return divide_16bit<from_bfloat16, to_bfloat16>(data, count, by);
    default: return;
  }
}

void reduce_into(ncclDataType_t type, ncclRedOp_t op, void* destination, const void* source,
                 std::size_t count) {
  switch (type) {
    case ncclInt8: return reduce_typed<int8_t>(op, destination, source, count);
    case ncclUint8: return reduce_typed<uint8_t>(op, destination, source, count);
    case ncclInt32: return reduce_typed<int32_t>(op, destination, source, count);
    case ncclUint32: return reduce_typed<uint32_t>(op, destination, source, count);
    case ncclInt64: return reduce_typed<int64_t>(op, destination, source, count);
    case ncclUint64: return reduce_typed<uint64_t>(op, destination, source, count);
    case ncclFloat32: return reduce_typed<float>(op, destination, source, count);
    case ncclFloat64: return reduce_typed<double>(op, destination, source, count);
    case ncclFloat16: return reduce_16bit<from_half, to_half>(op, destination, source, count);
    case ncclBfloat16: return reduce_16bit<from_bfloat16, to_bfloat16>(op, destination, source, count);
    default: return;
  }
}

std::size_t corrupt_elements(void* buffer, std::size_t count, std::size_t element_size) {
  std::size_t changed = 0;
  for (std::size_t i = 0; i < count; i += 97, ++changed)
    std::memset(static_cast<std::byte*>(buffer) + i * element_size, 0x7f, element_size);
  return changed;
}

}  // namespace nccltune::fake
