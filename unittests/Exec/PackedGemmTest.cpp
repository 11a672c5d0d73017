//===- PackedGemmTest.cpp - The runtime's packed GEMM ---------------------===//
//
// packedGemm (runtime/exec/PackedGemm.h) against a float64 product of the
// same values, for B in f32, f16 and bf16, every transpose, and shapes that
// cross every edge of the blocking: rows not a multiple of the 8-row
// sliver or of the 128-row block, columns not a multiple of the 32-column
// sliver, k not a multiple of the 256 block or of the 16 x 16 transpose,
// leading dimensions wider than the matrices, alpha and beta. Skipped on a
// CPU without AVX-512 (the runtime does not call it there).
//
//===----------------------------------------------------------------------===//

#include "PackedGemm.h"

#include "tra/Exec/ABI.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

using namespace tra::exec;

namespace {

/// Multiples of 1/64 in [-1, 1): exact in f16 and bf16, and their products
/// exact in f32, so only the f32 sums round.
std::vector<float> values(size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> d(-64, 63);
  std::vector<float> v(n);
  for (float &x : v)
    x = float(d(gen)) / 64.0f;
  return v;
}

uint16_t encode(float v, GemmBType type) {
  uint32_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  if (type == GemmBType::BF16)
    return uint16_t(bits >> 16);
  uint16_t sign = uint16_t((bits >> 16) & 0x8000u);
  int32_t exponent = int32_t((bits >> 23) & 0xffu);
  if (exponent == 0)
    return sign;
  return uint16_t(sign | uint32_t(exponent - 112) << 10 |
                  ((bits & 0x7fffffu) >> 13));
}

struct Case {
  GemmBType type;
  bool transA, transB;
  int64_t m, n, k;
  float alpha, beta;
};

class PackedGemmTest : public ::testing::TestWithParam<Case> {};

TEST_P(PackedGemmTest, MatchesFloat64Product) {
  if (!packedGemmAvailable())
    GTEST_SKIP() << "no AVX-512 on this CPU";
  Case c = GetParam();
  int64_t aRows = c.transA ? c.k : c.m, aCols = c.transA ? c.m : c.k;
  int64_t bRows = c.transB ? c.n : c.k, bCols = c.transB ? c.k : c.n;
  int64_t lda = aCols + 3, ldb = bCols + 5, ldc = c.n + 2;
  std::vector<float> a = values(size_t(aRows * lda), 1);
  std::vector<float> b = values(size_t(bRows * ldb), 2);
  std::vector<float> out = values(size_t(c.m * ldc), 3);
  std::vector<uint16_t> b16(b.size());
  for (size_t i = 0; i < b.size(); ++i)
    b16[i] = encode(b[i], c.type);
  std::vector<double> expected(out.begin(), out.end());
  for (int64_t i = 0; i < c.m; ++i)
    for (int64_t j = 0; j < c.n; ++j) {
      double sum = 0;
      for (int64_t p = 0; p < c.k; ++p)
        sum += double(c.transA ? a[p * lda + i] : a[i * lda + p]) *
               double(c.transB ? b[j * ldb + p] : b[p * ldb + j]);
      double &e = expected[size_t(i * ldc + j)];
      e = c.alpha * sum + (c.beta == 0.0f ? 0.0 : c.beta * e);
    }
  const void *bData = c.type == GemmBType::F32
                          ? static_cast<const void *>(b.data())
                          : static_cast<const void *>(b16.data());
  packedGemm(c.type, c.transA, c.transB, c.m, c.n, c.k, c.alpha, a.data(), lda,
             bData, ldb, c.beta, out.data(), ldc);
  // Columns past n (the padding of ldc) keep their values.
  for (size_t i = 0; i < out.size(); ++i)
    ASSERT_NEAR(out[i], expected[i], 1e-5 * (1 + std::fabs(expected[i])))
        << "row " << i / size_t(ldc) << " column " << i % size_t(ldc);
}

std::vector<Case> cases() {
  std::vector<Case> all;
  const int64_t shapes[][3] = {{1, 1, 1},      {3, 5, 7},     {8, 32, 16},
                               {9, 33, 17},    {17, 64, 255}, {130, 100, 300},
                               {129, 513, 33}, {64, 31, 600}, {256, 40, 520}};
  for (GemmBType type : {GemmBType::F32, GemmBType::F16, GemmBType::BF16})
    for (bool transA : {false, true})
      for (bool transB : {false, true})
        for (const auto &s : shapes) {
          bool odd = (s[0] + s[2]) % 2 != 0;
          all.push_back({type, transA, transB, s[0], s[1], s[2],
                         odd ? 0.5f : 1.0f, odd ? 0.0f : 0.75f});
        }
  return all;
}

INSTANTIATE_TEST_SUITE_P(Shapes, PackedGemmTest, ::testing::ValuesIn(cases()));

TEST(PackedGemm, NoProductScalesC) {
  if (!packedGemmAvailable())
    GTEST_SKIP() << "no AVX-512 on this CPU";
  std::vector<float> c = {1, 2, 3, 4};
  float unused = 0;
  packedGemm(GemmBType::F32, false, false, 2, 2, 0, 1.0f, &unused, 1, &unused,
             2, 0.5f, c.data(), 2);
  EXPECT_EQ(c, (std::vector<float>{0.5f, 1, 1.5f, 2}));
  packedGemm(GemmBType::F16, false, true, 2, 2, 0, 1.0f, &unused, 1, &unused, 1,
             0.0f, c.data(), 2);
  EXPECT_EQ(c, (std::vector<float>{0, 0, 0, 0}));
}

TEST(PackedGemm, RunsTheBuiltinKernelWithoutAProgram) {
  // This binary links the runtime without a compiled program, so no
  // generated kernels (MicrokernelTest.cpp tests those): the runtime's own
  // run, even when the generated ones are asked for.
  const std::string expected = packedGemmAvailable() ? "builtin" : "none";
  EXPECT_EQ(std::string(tra_exec_microkernel()), expected);
  tra_exec_use_generated_kernels(1);
  EXPECT_EQ(std::string(tra_exec_microkernel()), expected);
  tra_exec_use_generated_kernels(0);
  EXPECT_EQ(std::string(tra_exec_microkernel()), expected);
  // The dot products likewise: the runtime's AVX-512 or AVX2 ones.
  const std::string dots = tra_exec_dot_kernels();
  EXPECT_TRUE(dots == "builtin" || dots == "none") << dots;
  if (packedGemmAvailable())
    EXPECT_EQ(dots, "builtin");
  tra_exec_use_generated_kernels(1);
}

} // namespace
