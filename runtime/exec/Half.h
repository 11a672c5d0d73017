//===- Half.h - 16-bit floats widened to f32 --------------------*- C++ -*-===//
//
// Internal to runtime/exec: exact f16 / bf16 to f32 conversions, scalar and
// (F16C) vectorised, for the products of 16-bit matrices.
//
//===----------------------------------------------------------------------===//

#ifndef TRA_EXEC_HALF_H
#define TRA_EXEC_HALF_H

#include "tra/Exec/ABI.h"

#include <cstdint>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace tra {
namespace exec {

/// An IEEE half to float, exactly (subnormals, infinities and NaN included).
inline float halfToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000u) << 16;
  uint32_t exponent = (h >> 10) & 0x1fu;
  uint32_t mantissa = h & 0x3ffu;
  uint32_t bits;
  if (exponent == 0x1f) {
    bits = sign | 0x7f800000u | (mantissa << 13);
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    bits = sign;
  } else {
    // Subnormal: normalise.
    int shift = 0;
    while (!(mantissa & 0x400u)) {
      mantissa <<= 1;
      ++shift;
    }
    bits = sign | (uint32_t(113 - shift) << 23) | ((mantissa & 0x3ffu) << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

/// A bfloat16 to float (exact).
inline float bf16ToFloat(uint16_t h) {
  uint32_t bits = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

/// Widens `count` consecutive elements of type `dtype` (TRA_EXEC_F16 or
/// TRA_EXEC_BF16) into f32.
void widen(int64_t dtype, const uint16_t *src, float *dst, int64_t count);

/// Element `i` of an array of `dtype` (TRA_EXEC_F32, F16 or BF16) as f32.
inline float elementAsFloat(int64_t dtype, const void *p, int64_t i) {
  if (dtype == TRA_EXEC_F32)
    return static_cast<const float *>(p)[i];
  uint16_t h = static_cast<const uint16_t *>(p)[i];
  return dtype == TRA_EXEC_BF16 ? bf16ToFloat(h) : halfToFloat(h);
}

#if defined(__x86_64__)
#define TRA_EXEC_AVX512 __attribute__((target("avx512f,f16c,fma")))

/// Sixteen consecutive elements of `Dtype` (TRA_EXEC_F32, F16 or BF16) as
/// f32, with AVX-512.
template <int Dtype>
TRA_EXEC_AVX512 inline __m512 load16AsFloat(const void *p) {
  if constexpr (Dtype == TRA_EXEC_F32) {
    return _mm512_loadu_ps(p);
  } else if constexpr (Dtype == TRA_EXEC_F16) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(static_cast<const __m256i *>(p)));
  } else {
    __m512i wide = _mm512_cvtepu16_epi32(
        _mm256_loadu_si256(static_cast<const __m256i *>(p)));
    return _mm512_castsi512_ps(_mm512_slli_epi32(wide, 16));
  }
}
#endif

} // namespace exec
} // namespace tra

#endif // TRA_EXEC_HALF_H
