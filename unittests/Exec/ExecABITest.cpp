//===- ExecABITest.cpp - Runtime functions compiled code calls ------------===//

#include "tra/Exec/ABI.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace {

/// A row-major matrix stored with leading dimension `ld`, read as stored or
/// transposed: element (i, j) of the operand BLAS sees.
struct Operand {
  std::vector<float> data;
  int64_t ld;
  bool trans;

  float at(int64_t batchOffset, int64_t i, int64_t j) const {
    return trans ? data[batchOffset + j * ld + i]
                 : data[batchOffset + i * ld + j];
  }
};

/// Returns a deterministic pseudo-random vector of `n` values in [-1, 1).
std::vector<float> values(size_t n, unsigned seed) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = static_cast<float>(((i + 1) * 2654435761u + seed) % 2001) / 1000.0f -
           1.0f;
  return v;
}

/// One sgemm configuration.
struct GemmCase {
  int64_t batch, m, n, k;
  bool transA, transB;
  int64_t padA, padB, padC;
  float beta;
};

class SgemmTest : public ::testing::TestWithParam<GemmCase> {};

TEST_P(SgemmTest, MatchesNaiveProduct) {
  GemmCase c = GetParam();
  // Stored shapes: A is m x k (k x m if transposed), B k x n (n x k).
  int64_t aRows = c.transA ? c.k : c.m, aCols = c.transA ? c.m : c.k;
  int64_t bRows = c.transB ? c.n : c.k, bCols = c.transB ? c.k : c.n;
  Operand a{{}, aCols + c.padA, c.transA};
  Operand b{{}, bCols + c.padB, c.transB};
  int64_t ldc = c.n + c.padC;
  int64_t strideA = aRows * a.ld + 3, strideB = bRows * b.ld + 5;
  int64_t strideC = c.m * ldc + 7;
  a.data = values(c.batch * strideA, 1);
  b.data = values(c.batch * strideB, 2);
  std::vector<float> out = values(c.batch * strideC, 3);
  std::vector<float> expected = out;
  for (int64_t p = 0; p < c.batch; ++p)
    for (int64_t i = 0; i < c.m; ++i)
      for (int64_t j = 0; j < c.n; ++j) {
        double sum = 0.0;
        for (int64_t q = 0; q < c.k; ++q)
          sum += double(a.at(p * strideA, i, q)) * b.at(p * strideB, q, j);
        float &e = expected[p * strideC + i * ldc + j];
        e = float(sum + (c.beta == 0.0f ? 0.0 : double(c.beta) * e));
      }
  tra_exec_sgemm(c.batch, c.transA, c.transB, c.m, c.n, c.k, 1.0f,
                 a.data.data(), a.ld, strideA, b.data.data(), b.ld, strideB,
                 c.beta, out.data(), ldc, strideC);
  for (size_t i = 0; i < out.size(); ++i)
    ASSERT_NEAR(out[i], expected[i], 1e-4) << "element " << i;
}

INSTANTIATE_TEST_SUITE_P(
    Layouts, SgemmTest,
    ::testing::Values(GemmCase{1, 16, 24, 32, false, false, 0, 0, 0, 0.0f},
                      GemmCase{1, 16, 24, 32, false, true, 0, 0, 0, 0.0f},
                      GemmCase{1, 16, 24, 32, true, false, 0, 0, 0, 1.0f},
                      GemmCase{1, 7, 5, 3, true, true, 2, 3, 4, 1.0f},
                      GemmCase{3, 8, 4, 16, false, false, 1, 0, 2, 0.0f},
                      GemmCase{4, 1, 9, 6, false, true, 0, 0, 0, 0.5f},
                      GemmCase{2, 5, 1, 7, true, false, 0, 1, 0, 0.0f}));

TEST(ProfileTest, CountsOnlyWhileEnabled) {
  tra_exec_profile_begin(0);
  tra_exec_profile_end(0);
  EXPECT_EQ(tra_exec_profile_count(0), 0);
  tra_exec_profile_enable(2);
  tra_exec_profile_begin(1);
  tra_exec_profile_end(1);
  tra_exec_profile_begin(1);
  tra_exec_profile_end(1);
  // Ids outside the enabled range are ignored.
  tra_exec_profile_begin(7);
  tra_exec_profile_end(7);
  EXPECT_EQ(tra_exec_profile_count(0), 0);
  EXPECT_EQ(tra_exec_profile_count(1), 2);
  EXPECT_EQ(tra_exec_profile_count(7), 0);
  EXPECT_GE(tra_exec_profile_seconds(1), 0.0);
  tra_exec_profile_enable(2);
  EXPECT_EQ(tra_exec_profile_count(1), 0);
}

TEST(ExecAlloc, AlignedWritableBlocks) {
  for (size_t alignment :
       {size_t(16), size_t(64), size_t(128), size_t(4096), size_t(8192)})
    for (size_t size : {size_t(1), size_t(1000), size_t(1) << 20}) {
      auto *p = static_cast<unsigned char *>(
          _mlir_memref_to_llvm_aligned_alloc(alignment, size));
      ASSERT_NE(p, nullptr);
      EXPECT_EQ(
          reinterpret_cast<uintptr_t>(p) % std::max<size_t>(alignment, 64), 0u)
          << "alignment " << alignment << ", size " << size;
      p[0] = 1;
      p[size - 1] = 2;
      _mlir_memref_to_llvm_free(p);
    }
  void *p = _mlir_memref_to_llvm_alloc(100);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u);
  _mlir_memref_to_llvm_free(p);
  _mlir_memref_to_llvm_free(nullptr);
}

TEST(ExecAlloc, LargeBlocksAreReused) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "blocks are not cached under AddressSanitizer";
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  GTEST_SKIP() << "blocks are not cached under AddressSanitizer";
#endif
#endif
  tra_exec_release_cached_memory();
  EXPECT_EQ(tra_exec_cached_bytes(), 0);
  const size_t big = size_t(2) << 20;
  void *a = _mlir_memref_to_llvm_aligned_alloc(64, big);
  void *b = _mlir_memref_to_llvm_aligned_alloc(64, big);
  ASSERT_NE(a, b);
  _mlir_memref_to_llvm_free(a);
  EXPECT_GE(tra_exec_cached_bytes(), static_cast<int64_t>(big));
  // The same size and alignment gets the kept block back; another size or
  // alignment does not.
  void *other = _mlir_memref_to_llvm_aligned_alloc(64, big + 4096);
  EXPECT_NE(other, a);
  void *again = _mlir_memref_to_llvm_aligned_alloc(64, big);
  EXPECT_EQ(again, a);
  EXPECT_EQ(tra_exec_cached_bytes(), 0);
  // Small blocks are not kept.
  void *small = _mlir_memref_to_llvm_alloc(256);
  _mlir_memref_to_llvm_free(small);
  EXPECT_EQ(tra_exec_cached_bytes(), 0);
  for (void *p : {again, b, other})
    _mlir_memref_to_llvm_free(p);
  EXPECT_GT(tra_exec_cached_bytes(), 0);
  tra_exec_release_cached_memory();
  EXPECT_EQ(tra_exec_cached_bytes(), 0);
}

} // namespace
