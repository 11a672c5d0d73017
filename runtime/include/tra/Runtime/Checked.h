//===- Checked.h - Overflow-checked integer arithmetic ----------*- C++ -*-===//
//
// Sizes and offsets read from a file are untrusted: readers combine them with
// these functions, which report overflow instead of wrapping (or invoking
// undefined behaviour).
//
//===----------------------------------------------------------------------===//

#ifndef TRA_RUNTIME_CHECKED_H
#define TRA_RUNTIME_CHECKED_H

#include <cstdint>
#include <optional>

namespace tra::rt {

/// Returns a + b, or nullopt if it overflows int64_t.
inline std::optional<int64_t> checkedAdd(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r))
    return std::nullopt;
  return r;
}

/// Returns a * b, or nullopt if it overflows int64_t.
inline std::optional<int64_t> checkedMul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r))
    return std::nullopt;
  return r;
}

} // namespace tra::rt

#endif // TRA_RUNTIME_CHECKED_H
