//===- TestValues.h - Deterministic test inputs of the exec tests -*- C++
//-*-===//
//
// Values the tests of compiled programs feed them: deterministic, spread
// over [-1, 1), different for each seed.
//
//===----------------------------------------------------------------------===//

#ifndef TRA_UNITTESTS_EXEC_TESTVALUES_H
#define TRA_UNITTESTS_EXEC_TESTVALUES_H

#include <cstddef>
#include <vector>

namespace tra::exec::testing {

/// `n` deterministic values in [-1, 1) (multiples of 1/1000).
inline std::vector<float> values(size_t n, unsigned seed) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = static_cast<float>(((i + 1) * 2654435761u + seed * 97u) % 2001) /
               1000.0f -
           1.0f;
  return v;
}

} // namespace tra::exec::testing

#endif // TRA_UNITTESTS_EXEC_TESTVALUES_H
