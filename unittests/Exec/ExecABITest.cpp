//===- ExecABITest.cpp - Runtime functions compiled code calls ------------===//

#include "tra/Exec/ABI.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
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

/// The batched C = op(A) * op(B) + beta * C in float64, rounded to f32:
/// what `c` holds afterwards (strides and leading dimensions as in
/// tra_exec_sgemm).
std::vector<float> referenceProduct(int64_t batch, int64_t m, int64_t n,
                                    int64_t k, const Operand &a,
                                    int64_t strideA, const Operand &b,
                                    int64_t strideB, float beta,
                                    std::vector<float> c, int64_t ldc,
                                    int64_t strideC) {
  for (int64_t p = 0; p < batch; ++p)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0.0;
        for (int64_t q = 0; q < k; ++q)
          sum += double(a.at(p * strideA, i, q)) * b.at(p * strideB, q, j);
        float &e = c[p * strideC + i * ldc + j];
        e = float(sum + (beta == 0.0f ? 0.0 : double(beta) * e));
      }
  return c;
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
  std::vector<float> expected =
      referenceProduct(c.batch, c.m, c.n, c.k, a, strideA, b, strideB, c.beta,
                       out, ldc, strideC);
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
                      GemmCase{2, 5, 1, 7, true, false, 0, 1, 0, 0.0f},
                      // Large enough for the one pool (AVX-512 + OpenMP):
                      // one row through gemvRow (A strided when
                      // transposed), several through the packed GEMM.
                      GemmCase{1, 1, 300, 260, false, true, 0, 2, 0, 0.0f},
                      GemmCase{2, 1, 300, 260, true, false, 3, 0, 0, 1.0f},
                      GemmCase{1, 130, 200, 170, false, true, 1, 2, 3, 0.0f},
                      GemmCase{2, 130, 200, 170, true, false, 0, 0, 0, 0.5f}));

/// The same products on two threads (the pool's threaded paths), with the
/// default costs and with parallel regions costing next to nothing (every
/// product splits).
TEST(Sgemm, TwoThreadsMatchOne) {
  const int64_t m = 130, n = 200, k = 170;
  std::vector<float> a = values(m * k, 1), b = values(k * n, 2);
  for (double sync : {0.0, 1e-12})
    for (int64_t rows : {int64_t(1), int64_t(9), m}) {
      tra_exec_set_parallel_costs(sync, 1e9, 1e9);
      std::vector<float> one(size_t(rows * n)), two(size_t(rows * n));
      tra_exec_set_num_threads(1);
      tra_exec_sgemm(1, 0, 0, rows, n, k, 1.0f, a.data(), k, 0, b.data(), n, 0,
                     0.0f, one.data(), n, 0);
      tra_exec_set_num_threads(2);
      tra_exec_sgemm(1, 0, 0, rows, n, k, 1.0f, a.data(), k, 0, b.data(), n, 0,
                     0.0f, two.data(), n, 0);
      tra_exec_set_num_threads(1);
      for (size_t i = 0; i < one.size(); ++i)
        ASSERT_NEAR(one[i], two[i], 1e-4) << rows << " rows, element " << i;
    }
  tra_exec_set_parallel_costs(0, 0, 0);
}

/// The 16-bit encoding of `v` (exactly representable: a multiple of 1/64 in
/// [-1, 1), or an IEEE half's special values) as f16 or bf16.
uint16_t encode16(float v, bool bf16) {
  uint32_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  if (bf16)
    return uint16_t(bits >> 16);
  uint16_t sign = uint16_t((bits >> 16) & 0x8000u);
  int32_t exponent = int32_t((bits >> 23) & 0xffu);
  if (exponent == 0)
    return sign; // zero
  if (exponent == 0xff)
    return uint16_t(sign | 0x7c00u | ((bits & 0x7fffffu) ? 0x200u : 0u));
  return uint16_t(sign | uint32_t(exponent - 112) << 10 |
                  ((bits & 0x7fffffu) >> 13));
}

/// tra_exec_gemm_mixed against a float64 product of the same values: 16-bit
/// inputs of every layout, one row (decoding) and several, B wider than one
/// panel of the widening.
struct MixedCase {
  bool bf16;
  int64_t batch, m, n, k;
  bool transA, transB;
  float beta;
};

class GemmMixedTest : public ::testing::TestWithParam<MixedCase> {};

TEST_P(GemmMixedTest, MatchesFloat64Product) {
  MixedCase c = GetParam();
  int64_t aRows = c.transA ? c.k : c.m, aCols = c.transA ? c.m : c.k;
  int64_t bRows = c.transB ? c.n : c.k, bCols = c.transB ? c.k : c.n;
  int64_t lda = aCols + 3, ldb = bCols + 5, ldc = c.n + 2;
  int64_t strideA = aRows * lda + 1, strideB = bRows * ldb + 9;
  int64_t strideC = c.m * ldc + 4;
  auto quantized = [](size_t n, unsigned seed) {
    std::vector<float> v = values(n, seed);
    for (float &x : v)
      x = std::floor(x * 64.0f) / 64.0f;
    return v;
  };
  std::vector<float> a = quantized(c.batch * strideA, 1);
  std::vector<float> b = quantized(c.batch * strideB, 2);
  std::vector<uint16_t> a16(a.size()), b16(b.size());
  for (size_t i = 0; i < a.size(); ++i)
    a16[i] = encode16(a[i], c.bf16);
  for (size_t i = 0; i < b.size(); ++i)
    b16[i] = encode16(b[i], c.bf16);
  std::vector<float> out = values(c.batch * strideC, 3);
  std::vector<float> expected = referenceProduct(
      c.batch, c.m, c.n, c.k, Operand{a, lda, c.transA}, strideA,
      Operand{b, ldb, c.transB}, strideB, c.beta, out, ldc, strideC);
  tra_exec_gemm_mixed(c.bf16 ? TRA_EXEC_BF16 : TRA_EXEC_F16, TRA_EXEC_F32,
                      c.batch, c.transA, c.transB, c.m, c.n, c.k, 1.0f,
                      a16.data(), lda, strideA, b16.data(), ldb, strideB,
                      c.beta, out.data(), ldc, strideC);
  // Products of two 7-bit values are exact in f32; only the f32 sums round.
  for (size_t i = 0; i < out.size(); ++i)
    ASSERT_NEAR(out[i], expected[i], 1e-4 * (1 + std::fabs(expected[i])))
        << "element " << i;
}

INSTANTIATE_TEST_SUITE_P(
    Layouts, GemmMixedTest,
    ::testing::Values(MixedCase{false, 1, 1, 700, 300, false, true, 0.0f},
                      MixedCase{true, 1, 1, 700, 300, false, true, 0.0f},
                      MixedCase{false, 2, 1, 500, 257, false, false, 1.0f},
                      MixedCase{true, 2, 5, 500, 257, true, false, 0.0f},
                      MixedCase{false, 3, 7, 33, 40, true, true, 1.0f},
                      MixedCase{true, 1, 130, 300, 260, false, true, 0.0f},
                      // One row large enough for the OpenMP threads.
                      MixedCase{false, 1, 1, 1000, 300, false, true, 1.0f},
                      MixedCase{true, 2, 1, 1100, 260, true, false, 0.0f}));

/// Half-precision special values widen exactly: the largest finite value, a
/// subnormal, signed zero and infinity (1 x 1 products with 1).
TEST(GemmMixed, HalfSpecialValues) {
  const uint16_t one = 0x3c00u;
  struct {
    uint16_t half;
    float value;
  } cases[] = {{0x7bffu, 65504.0f},  {0x0001u, std::ldexp(1.0f, -24)},
               {0x8000u, -0.0f},     {0x7c00u, INFINITY},
               {0xfc00u, -INFINITY}, {0x3555u, 0.333251953125f}};
  for (auto c : cases) {
    float out = 7.0f;
    tra_exec_gemm_mixed(TRA_EXEC_F16, TRA_EXEC_F32, 1, 0, 0, 1, 1, 1, 1.0f,
                        &c.half, 1, 0, &one, 1, 0, 0.0f, &out, 1, 0);
    EXPECT_EQ(out, c.value) << std::hex << c.half;
  }
}

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

TEST(TierTest, CountsFetchesPerTier) {
  tra_exec_tier_reset();
  tra_exec_tier_fetched(1000, TRA_EXEC_TIER_HOST);
  tra_exec_tier_fetched(24, TRA_EXEC_TIER_HOST);
  tra_exec_tier_fetched(4096, TRA_EXEC_TIER_DISK);
  // Device memory, unknown tiers and negative sizes are not counted.
  tra_exec_tier_fetched(7, TRA_EXEC_TIER_DEVICE);
  tra_exec_tier_fetched(7, 3);
  tra_exec_tier_fetched(7, -1);
  tra_exec_tier_fetched(-5, TRA_EXEC_TIER_HOST);
  EXPECT_EQ(tra_exec_tier_bytes(TRA_EXEC_TIER_HOST), 1024);
  EXPECT_EQ(tra_exec_tier_fetches(TRA_EXEC_TIER_HOST), 2);
  EXPECT_EQ(tra_exec_tier_bytes(TRA_EXEC_TIER_DISK), 4096);
  EXPECT_EQ(tra_exec_tier_fetches(TRA_EXEC_TIER_DISK), 1);
  EXPECT_EQ(tra_exec_tier_bytes(TRA_EXEC_TIER_DEVICE), 0);
  EXPECT_EQ(tra_exec_tier_bytes(3), 0);
  EXPECT_EQ(tra_exec_tier_fetches(-1), 0);
  tra_exec_tier_reset();
  EXPECT_EQ(tra_exec_tier_bytes(TRA_EXEC_TIER_HOST), 0);
  EXPECT_EQ(tra_exec_tier_fetches(TRA_EXEC_TIER_DISK), 0);
}

/// Starts a fetch of up to 4 dimensions (unused ones: size 1, stride 0).
int64_t startFetch(void *dst, const void *src, int64_t elementBytes,
                   std::vector<int64_t> sizes, std::vector<int64_t> dstStrides,
                   std::vector<int64_t> srcStrides) {
  int64_t rank = int64_t(sizes.size());
  sizes.resize(4, 1);
  dstStrides.resize(4, 0);
  srcStrides.resize(4, 0);
  return tra_exec_fetch_start(dst, src, elementBytes, rank, sizes[0], sizes[1],
                              sizes[2], sizes[3], dstStrides[0], dstStrides[1],
                              dstStrides[2], dstStrides[3], srcStrides[0],
                              srcStrides[1], srcStrides[2], srcStrides[3]);
}

TEST(TierTest, FetchesCopyStridedTilesInTheBackground) {
  tra_exec_tier_reset();
  // A 6 x 10 x 3 tensor of floats; fetch the block [1:5, 2:9, 0:3) (rows of
  // 7 x 3 contiguous floats), the whole tensor, and a column of it.
  std::vector<float> src(6 * 10 * 3);
  for (size_t i = 0; i < src.size(); ++i)
    src[i] = float(i);
  std::vector<float> block(4 * 7 * 3, -1), whole(src.size(), -1), column(6, -1);
  int64_t a = startFetch(block.data(), &src[(1 * 10 + 2) * 3], 4, {4, 7, 3},
                         {21, 3, 1}, {30, 3, 1});
  int64_t b = startFetch(whole.data(), src.data(), 4, {6, 10, 3}, {30, 3, 1},
                         {30, 3, 1});
  int64_t c = startFetch(column.data(), &src[4 * 3 + 1], 4, {6, 1, 1},
                         {1, 0, 0}, {30, 3, 1});
  EXPECT_GE(a, 0);
  EXPECT_NE(a, b);
  EXPECT_NE(b, c);
  // Waited for out of order.
  tra_exec_fetch_wait(c);
  tra_exec_fetch_wait(a);
  tra_exec_fetch_wait(b);
  EXPECT_EQ(tra_exec_take_check_failure(), nullptr);
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 7; ++j)
      for (int k = 0; k < 3; ++k)
        ASSERT_EQ(block[(i * 7 + j) * 3 + k],
                  src[((i + 1) * 10 + j + 2) * 3 + k])
            << i << " " << j << " " << k;
  EXPECT_EQ(whole, src);
  for (int i = 0; i < 6; ++i)
    EXPECT_EQ(column[i], src[i * 30 + 4 * 3 + 1]);
  // The copy thread timed its copies.
  EXPECT_GT(tra_exec_fetch_copy_ns(), 0);
  EXPECT_GE(tra_exec_fetch_wait_ns(), 0);
  tra_exec_tier_reset();
  EXPECT_EQ(tra_exec_fetch_copy_ns(), 0);
  EXPECT_EQ(tra_exec_fetch_wait_ns(), 0);
}

TEST(TierTest, ManyFetchesInFlight) {
  // More fetches than any queue bound one might add, each waited for later.
  constexpr int kFetches = 200;
  std::vector<std::vector<int32_t>> dst(kFetches, std::vector<int32_t>(256));
  std::vector<int32_t> src(256 * kFetches);
  for (size_t i = 0; i < src.size(); ++i)
    src[i] = int32_t(i * 7 + 1);
  std::vector<int64_t> handles;
  for (int f = 0; f < kFetches; ++f)
    handles.push_back(startFetch(dst[f].data(), &src[f * 256], 4, {16, 16},
                                 {16, 1}, {16, 1}));
  for (int f = kFetches; f-- > 0;)
    tra_exec_fetch_wait(handles[f]);
  for (int f = 0; f < kFetches; ++f)
    ASSERT_TRUE(std::equal(dst[f].begin(), dst[f].end(), &src[f * 256]));
  EXPECT_EQ(tra_exec_take_check_failure(), nullptr);
}

TEST(TierTest, LargeFetchesAreCopiedInPieces) {
  // One contiguous run of 3 MiB + 4 bytes (pieces of its bytes), and 1000
  // strided rows of 1 KiB (pieces of rows); the second is waited for at
  // once, so the waiting thread copies pieces too.
  std::vector<uint8_t> src((size_t(3) << 20) + 4);
  for (size_t i = 0; i < src.size(); ++i)
    src[i] = uint8_t(i * 131 + 7);
  std::vector<uint8_t> run(src.size()), rows(1000 * 1024);
  int64_t a =
      startFetch(run.data(), src.data(), 1, {int64_t(src.size())}, {1}, {1});
  int64_t b = startFetch(rows.data(), src.data() + 3, 1, {1000, 1024},
                         {1024, 1}, {3000, 1});
  tra_exec_fetch_wait(b);
  tra_exec_fetch_wait(a);
  EXPECT_EQ(run, src);
  for (int r = 0; r < 1000; ++r)
    ASSERT_EQ(std::memcmp(&rows[r * 1024], &src[3 + r * 3000], 1024), 0) << r;
  // Each handle is waited for once: a second wait is an unknown handle.
  tra_exec_fetch_wait(a);
  const char *failure = tra_exec_take_check_failure();
  ASSERT_NE(failure, nullptr);
  EXPECT_NE(std::string(failure).find("no fetch"), std::string::npos);
  // An empty tile is done at once.
  int64_t c = startFetch(run.data(), src.data(), 4, {0, 8}, {8, 1}, {8, 1});
  tra_exec_fetch_wait(c);
  EXPECT_EQ(tra_exec_take_check_failure(), nullptr);
}

TEST(TierTest, InvalidFetchesAreCheckFailures) {
  float a[4] = {1, 2, 3, 4}, b[4] = {0, 0, 0, 0};
  // A rank outside 1..4, a negative stride, a null buffer: nothing copied.
  EXPECT_EQ(startFetch(b, a, 4, {1, 1, 1, 1, 4}, {}, {}), -1);
  ASSERT_NE(tra_exec_take_check_failure(), nullptr);
  EXPECT_EQ(startFetch(b, a, 4, {4}, {-1}, {1}), -1);
  ASSERT_NE(tra_exec_take_check_failure(), nullptr);
  EXPECT_EQ(startFetch(nullptr, a, 4, {4}, {1}, {1}), -1);
  const char *failure = tra_exec_take_check_failure();
  ASSERT_NE(failure, nullptr);
  EXPECT_NE(std::string(failure).find("tra_comm.ifetch"), std::string::npos);
  EXPECT_EQ(b[0], 0);
  // The wait of a failed start says nothing more; an unknown handle does.
  tra_exec_fetch_wait(-1);
  EXPECT_EQ(tra_exec_take_check_failure(), nullptr);
  tra_exec_fetch_wait(int64_t(1) << 40);
  failure = tra_exec_take_check_failure();
  ASSERT_NE(failure, nullptr);
  EXPECT_NE(std::string(failure).find("no fetch"), std::string::npos);
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
