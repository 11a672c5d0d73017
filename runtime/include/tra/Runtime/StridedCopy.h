//===- StridedCopy.h - Copies between strided layouts -----------*- C++ -*-===//
//
// Tensors in files are not always dense and row-major (a torch.save file may
// hold a transposed or expanded view), and tiles are assembled into larger
// buffers: these functions copy a tile between any two layouts given by
// element strides, in runs as long as both layouts allow.
//
//===----------------------------------------------------------------------===//

#ifndef TRA_RUNTIME_STRIDEDCOPY_H
#define TRA_RUNTIME_STRIDEDCOPY_H

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tra::rt {

/// Copies the elements of a tile between two strided layouts. `src` points at
/// element [0, ..., 0] of a tensor with element strides `srcStrides`; the
/// tile of extent `sizes` at `offsets` goes to `dst`, which points at the
/// tile's first element in a destination with element strides `dstStrides`.
/// Runs that are contiguous on both sides are copied with memcpy. The caller
/// guarantees that every address touched is valid.
void copyStridedTile(size_t elementSize, const uint8_t *src,
                     const std::vector<int64_t> &srcStrides,
                     const std::vector<int64_t> &offsets,
                     const std::vector<int64_t> &sizes, uint8_t *dst,
                     const std::vector<int64_t> &dstStrides);

/// Returns the row-major element strides of `shape`.
std::vector<int64_t> rowMajorStrides(const std::vector<int64_t> &shape);

} // namespace tra::rt

#endif // TRA_RUNTIME_STRIDEDCOPY_H
