//===- GemmQ8Test.cpp - Products by Q8_0-quantised weights ----------------===//
//
// tra_exec_gemm_q8 (tra/Exec/ABI.h) and its path without AVX-512
// (gemmQ8Generic, runtime/exec/GemmQ8.h) against a float64 product of the
// same int8 quants and half scales: a few rows of C (passes over W, one to
// four rows of A each) and more (the packed GEMM, or panels and sgemm),
// rows of W and shapes not multiples of the kernels' blockings, a few
// blocks and many, leading dimensions wider than the matrices (their
// padding NaN, so that reading it shows), beta 0 over a C of NaN and
// beta 1, quants down to -128, negative and subnormal scales, and shapes
// large enough for the OpenMP threads.
//
//===----------------------------------------------------------------------===//

#include "GemmQ8.h"

#include "tra/Exec/ABI.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

using namespace tra::exec;

namespace {

const float kNaN = std::numeric_limits<float>::quiet_NaN();

/// An IEEE half's value, decoded independently of the runtime's Half.h.
double halfValue(uint16_t h) {
  int exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
  double magnitude = exponent == 0
                         ? std::ldexp(double(mantissa), -24)
                         : std::ldexp(double(1024 + mantissa), exponent - 25);
  return (h & 0x8000u) ? -magnitude : magnitude;
}

/// A Q8_0 matrix of `rows` x (32 * blocks) with padded rows (ldq, lds); the
/// padding holds -1 quants and NaN scales.
struct Weights {
  int64_t rows, blocks, ldq, lds;
  std::vector<int8_t> q;
  std::vector<uint16_t> scales;

  Weights(int64_t rows, int64_t blocks, unsigned seed)
      : rows(rows), blocks(blocks), ldq(32 * blocks + 5), lds(blocks + 2),
        q(size_t(rows * ldq), int8_t(-1)),
        scales(size_t(rows * lds), uint16_t(0x7e00u)) {
    std::mt19937 gen(seed);
    std::uniform_int_distribution<int> quant(-128, 127);
    // Exponent fields 0 (subnormal) to 17 (up to 8): both signs.
    std::uniform_int_distribution<int> exponent(0, 17), mantissa(0, 1023),
        sign(0, 1);
    for (int64_t j = 0; j < rows; ++j) {
      for (int64_t p = 0; p < 32 * blocks; ++p)
        q[size_t(j * ldq + p)] = int8_t(quant(gen));
      for (int64_t b = 0; b < blocks; ++b)
        scales[size_t(j * lds + b)] =
            uint16_t(sign(gen) << 15 | exponent(gen) << 10 | mantissa(gen));
    }
    if (rows > 0 && blocks > 0) {
      q[0] = -128;
      scales[0] = 0x8001u; // the smallest negative subnormal
    }
  }

  Q8Matrix matrix() const { return {q.data(), ldq, scales.data(), lds}; }

  double element(int64_t j, int64_t p) const {
    return double(q[size_t(j * ldq + p)]) *
           halfValue(scales[size_t(j * lds + p / 32)]);
  }
};

/// Values in [-1, 1) with a padded row length `ld`, the padding NaN.
std::vector<float> activations(int64_t rows, int64_t cols, int64_t ld,
                               unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<float> v(size_t(std::max<int64_t>(rows * ld, 1)), kNaN);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t p = 0; p < cols; ++p)
      v[size_t(i * ld + p)] = d(gen);
  return v;
}

/// The product runs through the C ABI, or the path without AVX-512.
enum class Path { Abi, Generic };

void run(Path path, int64_t m, int64_t n, const Weights &w, const float *a,
         int64_t lda, float beta, float *c, int64_t ldc) {
  if (path == Path::Abi)
    tra_exec_gemm_q8(m, n, w.blocks, a, lda, w.q.data(), w.ldq, w.scales.data(),
                     w.lds, beta, c, ldc);
  else
    gemmQ8Generic(m, n, w.blocks, a, lda, w.matrix(), beta, c, ldc);
}

/// Runs C = A * W^T (+ C) for m rows on `path` and compares every element
/// of C, its padding included, with a float64 product.
void checkProduct(Path path, int64_t m, int64_t n, int64_t blocks, float beta) {
  const int64_t k = 32 * blocks, lda = k + 3, ldc = n + 2;
  Weights w(n, blocks, unsigned(7 * m + n + 100 * blocks));
  std::vector<float> a = activations(m, k, lda, unsigned(m + 3 * n));
  // beta 0: C is NaN, padding included; beta 1: values to add to.
  std::vector<float> c = beta == 0.0f
                             ? std::vector<float>(size_t(m * ldc), kNaN)
                             : activations(m, ldc, ldc, 5);
  const std::vector<float> before = c;
  run(path, m, n, w, a.data(), lda, beta, c.data(), ldc);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0, magnitude = 0;
      for (int64_t p = 0; p < k; ++p) {
        double product = double(a[size_t(i * lda + p)]) * w.element(j, p);
        sum += product;
        magnitude += std::fabs(product);
      }
      if (beta != 0.0f) {
        sum += before[size_t(i * ldc + j)];
        magnitude += std::fabs(before[size_t(i * ldc + j)]);
      }
      ASSERT_NEAR(c[size_t(i * ldc + j)], sum, 1e-5 * magnitude + 1e-30)
          << "row " << i << " column " << j;
    }
    // Columns past n keep what they held.
    for (int64_t j = n; j < ldc; ++j) {
      float was = before[size_t(i * ldc + j)], is = c[size_t(i * ldc + j)];
      ASSERT_TRUE(std::isnan(was) ? std::isnan(is) : is == was)
          << "padding of row " << i << " column " << j;
    }
  }
}

struct Case {
  int64_t m, n, blocks;
  float beta;
};

class GemmQ8Test : public ::testing::TestWithParam<Case> {};

TEST_P(GemmQ8Test, AbiMatchesFloat64Product) {
  Case c = GetParam();
  checkProduct(Path::Abi, c.m, c.n, c.blocks, c.beta);
}

TEST_P(GemmQ8Test, GenericMatchesFloat64Product) {
  Case c = GetParam();
  checkProduct(Path::Generic, c.m, c.n, c.blocks, c.beta);
}

std::vector<Case> cases() {
  std::vector<Case> all;
  for (int64_t m : {1, 2, 7, 33, 128})
    for (int64_t n : {1, 5, 16, 17, 63, 300})
      for (int64_t blocks : {1, 2, 3, 24})
        for (float beta : {0.0f, 1.0f})
          all.push_back({m, n, blocks, beta});
  // One row of C with W large enough for the OpenMP threads (2^18
  // elements and more), the rows not a multiple of four; blocks beyond one
  // chunk of the kernel's scales (64).
  all.push_back({1, 1111, 8, 0.0f});
  all.push_back({1, 4099, 3, 1.0f});
  all.push_back({1, 130, 70, 1.0f});
  all.push_back({3, 130, 70, 0.0f});
  // The most rows of C that passes over W take, and one more.
  all.push_back({12, 63, 24, 1.0f});
  all.push_back({13, 63, 3, 0.0f});
  return all;
}

INSTANTIATE_TEST_SUITE_P(Shapes, GemmQ8Test, ::testing::ValuesIn(cases()));

/// The same products on three threads (uneven splits of the rows of W and
/// of the packed GEMM's tasks) as on one, within rounding; with parallel
/// regions costing next to nothing, even the small ones split.
TEST(GemmQ8, ThreeThreadsMatchFloat64Product) {
  tra_exec_set_num_threads(3);
  for (double sync : {0.0, 1e-12}) {
    // 0: the defaults (invalid figures).
    tra_exec_set_parallel_costs(sync, 1e9, 1e9);
    for (Path path : {Path::Abi, Path::Generic}) {
      checkProduct(path, 1, 2049, 24, 0.0f);
      checkProduct(path, 1, 5, 1, 1.0f);
      checkProduct(path, 128, 300, 24, 1.0f);
      checkProduct(path, 9, 40, 2, 0.0f);
    }
  }
  tra_exec_set_parallel_costs(0, 0, 0);
  tra_exec_set_num_threads(1);
}

/// An element product is exact in f32: the extreme quants times the
/// extreme scales (largest half, smallest subnormal, negative ones).
TEST(GemmQ8, ProductsAreExact) {
  struct {
    int8_t quant;
    uint16_t scale;
  } cases[] = {{-128, 0x7bffu}, {127, 0x0001u}, {-128, 0x8001u},
               {-1, 0x3555u},   {127, 0x83ffu}, {-128, 0x0000u}};
  for (Path path : {Path::Abi, Path::Generic})
    for (int64_t m : {1, 2})
      for (auto e : cases) {
        // One block; only element 5 of the row of A is non-zero (1).
        std::vector<int8_t> q(32, 3);
        q[5] = e.quant;
        std::vector<float> a(size_t(32 * m), 0.0f);
        for (int64_t i = 0; i < m; ++i)
          a[size_t(32 * i + 5)] = 1.0f;
        std::vector<float> c(size_t(m), kNaN);
        if (path == Path::Abi)
          tra_exec_gemm_q8(m, 1, 1, a.data(), 32, q.data(), 32, &e.scale, 1,
                           0.0f, c.data(), 1);
        else
          gemmQ8Generic(m, 1, 1, a.data(), 32,
                        Q8Matrix{q.data(), 32, &e.scale, 1}, 0.0f, c.data(), 1);
        for (float v : c)
          EXPECT_EQ(double(v), double(e.quant) * halfValue(e.scale))
              << int(e.quant) << " x " << std::hex << e.scale;
      }
}

/// m == 0 or n == 0 touches nothing; blocks == 0 gives C = beta * C.
TEST(GemmQ8, EmptyProducts) {
  const int8_t q[32] = {};
  const uint16_t scale = 0x3c00u;
  const float a[64] = {};
  for (Path path : {Path::Abi, Path::Generic}) {
    std::vector<float> c = {1, 2, 3, 4};
    auto call = [&](int64_t m, int64_t n, int64_t blocks, float beta) {
      if (path == Path::Abi)
        tra_exec_gemm_q8(m, n, blocks, a, 32, q, 32, &scale, 1, beta, c.data(),
                         2);
      else
        gemmQ8Generic(m, n, blocks, a, 32, Q8Matrix{q, 32, &scale, 1}, beta,
                      c.data(), 2);
    };
    call(0, 2, 1, 0.0f);
    call(2, 0, 1, 0.0f);
    EXPECT_EQ(c, (std::vector<float>{1, 2, 3, 4}));
    for (int64_t m : {1, 2}) {
      c = {1, 2, 3, 4};
      call(m, 2, 0, 1.0f);
      EXPECT_EQ(c, (std::vector<float>{1, 2, 3, 4}));
      c = {kNaN, kNaN, kNaN, kNaN};
      call(m, 2, 0, 0.0f);
      // Rows m and beyond are not C's.
      for (int64_t i = 0; i < 4; ++i) {
        if (i < 2 * m)
          EXPECT_EQ(c[size_t(i)], 0.0f) << "m " << m << " element " << i;
        else
          EXPECT_TRUE(std::isnan(c[size_t(i)]))
              << "m " << m << " element " << i;
      }
    }
  }
}

} // namespace
