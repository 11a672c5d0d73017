//===- StridedCopy.cpp - Copies between strided layouts -------------------===//

#include "tra/Runtime/StridedCopy.h"

#include <cstring>

using namespace tra::rt;

std::vector<int64_t>
tra::rt::rowMajorStrides(const std::vector<int64_t> &shape) {
  std::vector<int64_t> strides(shape.size());
  int64_t stride = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    strides[d] = stride;
    stride *= shape[d];
  }
  return strides;
}

void tra::rt::copyStridedTile(size_t elementSize, const uint8_t *src,
                              const std::vector<int64_t> &srcStrides,
                              const std::vector<int64_t> &offsets,
                              const std::vector<int64_t> &sizes, uint8_t *dst,
                              const std::vector<int64_t> &dstStrides) {
  const size_t rank = sizes.size();
  for (int64_t size : sizes)
    if (size == 0)
      return;
  const int64_t es = static_cast<int64_t>(elementSize);
  int64_t srcOff = 0;
  for (size_t d = 0; d < rank; ++d)
    srcOff += offsets[d] * srcStrides[d] * es;

  // Dimensions [runDim, rank) form one run that is contiguous on both sides
  // (dimensions of size 1 never break a run).
  size_t runDim = rank;
  int64_t runElements = 1;
  while (runDim > 0) {
    size_t d = runDim - 1;
    if (sizes[d] != 1 &&
        (srcStrides[d] != runElements || dstStrides[d] != runElements))
      break;
    runElements *= sizes[d];
    --runDim;
  }
  const size_t runBytes = static_cast<size_t>(runElements * es);

  std::vector<int64_t> index(runDim, 0);
  int64_t dstOff = 0;
  while (true) {
    std::memcpy(dst + dstOff, src + srcOff, runBytes);
    size_t d = runDim;
    while (true) {
      if (d == 0)
        return;
      --d;
      if (++index[d] < sizes[d]) {
        srcOff += srcStrides[d] * es;
        dstOff += dstStrides[d] * es;
        break;
      }
      srcOff -= (sizes[d] - 1) * srcStrides[d] * es;
      dstOff -= (sizes[d] - 1) * dstStrides[d] * es;
      index[d] = 0;
    }
  }
}
