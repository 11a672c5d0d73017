//===- StridedCopyTest.cpp - Copies between strided layouts ---------------===//

#include "tra/Runtime/StridedCopy.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cstring>
#include <random>

using namespace tra::rt;

namespace {

TEST(StridedCopyTest, TransposedSource) {
  // A 3x4 destination filled from a transposed 4x3 source, tile by tile.
  std::vector<float> source(12);
  for (int i = 0; i < 12; ++i)
    source[i] = float(i);
  // Source viewed as [3, 4] with strides [1, 3] (the transpose of [4, 3]).
  std::vector<float> out(6, -1);
  copyStridedTile(
      sizeof(float), reinterpret_cast<const uint8_t *>(source.data()), {1, 3},
      {1, 1}, {2, 3}, reinterpret_cast<uint8_t *>(out.data()), {3, 1});
  // Element [i][j] of the view is source[i + 3 j].
  std::vector<float> expected = {1 + 3, 1 + 6, 1 + 9, 2 + 3, 2 + 6, 2 + 9};
  EXPECT_EQ(out, expected);
}

TEST(StridedCopyTest, RowMajorStrides) {
  EXPECT_EQ(rowMajorStrides({2, 3, 4}), (std::vector<int64_t>{12, 4, 1}));
  EXPECT_EQ(rowMajorStrides({5}), (std::vector<int64_t>{1}));
  EXPECT_EQ(rowMajorStrides({}), (std::vector<int64_t>{}));
  EXPECT_EQ(rowMajorStrides({3, 0, 2}), (std::vector<int64_t>{0, 2, 1}));
}

TEST(StridedCopyTest, ZeroDimensionalAndEmptyTiles) {
  uint16_t value = 0x1234, out = 0;
  copyStridedTile(2, reinterpret_cast<const uint8_t *>(&value), {}, {}, {},
                  reinterpret_cast<uint8_t *>(&out), {});
  EXPECT_EQ(out, 0x1234);
  // An empty tile touches nothing, not even the pointers.
  copyStridedTile(4, nullptr, {3, 1}, {2, 0}, {0, 3}, nullptr, {3, 1});
}

/// Copies element by element: the definition copyStridedTile must match.
void naiveCopy(size_t elementSize, const uint8_t *src,
               const std::vector<int64_t> &srcStrides,
               const std::vector<int64_t> &offsets,
               const std::vector<int64_t> &sizes, uint8_t *dst,
               const std::vector<int64_t> &dstStrides) {
  int64_t count = 1;
  for (int64_t size : sizes)
    count *= size;
  for (int64_t flat = 0; flat < count; ++flat) {
    int64_t from = 0, to = 0, rest = flat;
    for (size_t d = sizes.size(); d-- > 0;) {
      int64_t index = rest % sizes[d];
      rest /= sizes[d];
      from += (offsets[d] + index) * srcStrides[d];
      to += index * dstStrides[d];
    }
    std::memcpy(dst + to * elementSize, src + from * elementSize, elementSize);
  }
}

TEST(StridedCopyTest, MatchesElementwiseCopyForAnyLayout) {
  // Random shapes, any permutation of the dimensions in the source, padded
  // or broadcast (stride 0) dimensions, and destinations with padding.
  std::mt19937 rng(11);
  auto uniform = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  for (int trial = 0; trial < 300; ++trial) {
    const size_t rank = size_t(uniform(0, 4));
    const size_t elementSize = size_t(1) << uniform(0, 3);
    std::vector<int64_t> shape(rank), offsets(rank), sizes(rank);
    for (size_t d = 0; d < rank; ++d) {
      shape[d] = uniform(1, 5);
      offsets[d] = uniform(0, shape[d] - 1);
      sizes[d] = uniform(1, shape[d] - offsets[d]);
    }
    // Source strides: a permuted row-major layout with optional padding,
    // and sometimes a broadcast dimension.
    std::vector<size_t> order(rank);
    for (size_t d = 0; d < rank; ++d)
      order[d] = d;
    std::shuffle(order.begin(), order.end(), rng);
    std::vector<int64_t> srcStrides(rank);
    int64_t stride = 1;
    for (size_t k = rank; k-- > 0;) {
      size_t d = order[k];
      srcStrides[d] = uniform(0, 5) == 0 ? 0 : stride;
      stride *= shape[d] + uniform(0, 1);
    }
    std::vector<int64_t> dstStrides(rank);
    stride = 1;
    for (size_t d = rank; d-- > 0;) {
      dstStrides[d] = stride;
      stride *= sizes[d] + uniform(0, 2);
    }
    int64_t srcElements = 1, dstElements = 1;
    for (size_t d = 0; d < rank; ++d) {
      srcElements += (shape[d] - 1) * srcStrides[d];
      dstElements += (sizes[d] - 1) * dstStrides[d];
    }
    std::vector<uint8_t> src(size_t(srcElements) * elementSize);
    for (uint8_t &byte : src)
      byte = uint8_t(uniform(0, 255));
    std::vector<uint8_t> got(size_t(dstElements) * elementSize, 0xee);
    std::vector<uint8_t> expected = got;
    copyStridedTile(elementSize, src.data(), srcStrides, offsets, sizes,
                    got.data(), dstStrides);
    naiveCopy(elementSize, src.data(), srcStrides, offsets, sizes,
              expected.data(), dstStrides);
    ASSERT_EQ(got, expected) << "trial " << trial << ", rank " << rank
                             << ", element size " << elementSize;
  }
}

} // namespace
