//===- Pth.h - PyTorch torch.save files (zip archives) -------- -*- C++ -*-===//
//
// Reads the tensors of a file written by `torch.save` (PyTorch >= 1.6, the
// zip format) without Python: a zip archive (read by Zip.h) whose entries
// are stored uncompressed, holding
//   PREFIX/data.pkl      a pickle of the saved object,
//   PREFIX/data/KEY      the raw bytes of each storage,
//   PREFIX/version, PREFIX/byteorder (newer versions), ...
// where PREFIX is "archive" or the saved file's stem. Zip64 archives (files or
// offsets beyond 4 GiB) are supported.
//
// The pickle is run by a small, strict interpreter (Pickle.h) that knows only
// what `torch.save` emits for a state dict (protocols 2 to 5): dicts and
// OrderedDicts (their `_metadata` state is ignored), tuples, lists, numbers,
// strings, and tensors rebuilt by
//   torch._utils._rebuild_tensor_v2(STORAGE, storage_offset, size, stride,
//                                   requires_grad, backward_hooks[, metadata])
//   torch._utils._rebuild_tensor_v3(..., backward_hooks, dtype[, metadata])
//   torch._utils._rebuild_parameter(TENSOR, requires_grad, backward_hooks)
// where STORAGE is the persistent id ('storage', torch.<Type>Storage, KEY,
// location, numel). Any other global (a class of the user's, a TorchScript
// archive) is refused, so reading a file never runs or trusts foreign code.
// The saved object must be a dict mapping names to tensors.
//
// Storage types: Float, Half, BFloat16, Double, Long, Int, Short, Char, Byte
// and Bool storages, and UntypedStorage with the dtype given to
// `_rebuild_tensor_v3`. Tensors may share a storage, start at an offset into
// it and have any non-negative strides (transposed, expanded): `get` returns
// a zero-copy view of the memory-mapped file for contiguous tensors, and
// `readTile` copies exactly the elements of a tile for any layout.
//
// Opening checks the zip structure, the pickle (and its CRC-32), and that
// every tensor's elements lie inside its storage, which must hold the bytes
// its numel says; every message names the file, and the tensor when there is
// one. A storage's bytes are not read at open: its CRC-32 is verified the
// first time a read covers all of them (`get`, or a `readTile` of the whole
// tensor, of a tensor that spans its whole storage), so a damaged file fails
// with "tensor 'w': zip entry 'PREFIX/data/KEY' is damaged: ..." instead of
// giving wrong values, while tile reads of large tensors read only their
// tiles. A tensor that views only part of its storage is never verified.
//
//===----------------------------------------------------------------------===//

#ifndef TRA_RUNTIME_PTH_H
#define TRA_RUNTIME_PTH_H

#include "tra/Runtime/Error.h"
#include "tra/Runtime/File.h"
// readTileInto writes to a layout given by strides; rowMajorStrides and
// copyStridedTile, which this header used to declare, are there.
#include "tra/Runtime/StridedCopy.h"
#include "tra/Runtime/Tensor.h"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace tra::rt {

/// One tensor of a torch.save file.
struct PthTensor {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  /// Strides in elements, one per dimension (all >= 0).
  std::vector<int64_t> stride;
  /// The storage's key: its bytes are the archive entry "PREFIX/data/KEY".
  std::string storageKey;
  /// The storage's type as pickled, e.g. "HalfStorage".
  std::string storageType;
  /// Offset of the first element into the storage, in elements.
  int64_t storageOffset = 0;
  /// Byte offset of the storage's data in the file, and its length.
  uint64_t storageBegin = 0;
  uint64_t storageBytes = 0;
  /// The CRC-32 the archive records for the storage's bytes.
  uint32_t storageCrc32 = 0;

  /// Returns true if the elements are laid out densely in row-major order.
  bool isContiguous() const;
  /// Returns the number of elements.
  int64_t numElements() const;
};

/// A memory-mapped torch.save file and the tensors it holds.
class PthFile {
public:
  /// Maps the file at `path`, reads its zip directory and pickle, and checks
  /// every tensor against its storage.
  static Result<PthFile> open(const std::string &path);

  /// Returns the path the file was opened with.
  const std::string &path() const { return file->path(); }
  /// Returns the archive's top-level folder ("archive", or the file stem).
  const std::string &archivePrefix() const { return prefix; }
  /// Returns the tensors in the order of the pickled dict.
  const std::vector<PthTensor> &tensors() const { return entries; }

  /// Returns the tensor named `name`, or null.
  const PthTensor *find(std::string_view name) const;
  /// Returns the tensor named `name`, or an error naming the file and tensor.
  Result<const PthTensor *> entry(std::string_view name) const;

  /// Returns tensor `name`: a zero-copy view into the mapped file if it is
  /// contiguous, else an owned row-major copy.
  Result<HostTensor> get(std::string_view name) const;

  /// Returns the tile of tensor `name` of extent `sizes` at `offsets`, as an
  /// owned row-major tensor of the tensor's dtype. Reads only the tile's
  /// elements (read-ahead is turned off for the tensor's bytes while copying
  /// a tile smaller than the tensor).
  Result<HostTensor> readTile(std::string_view name,
                              const std::vector<int64_t> &offsets,
                              const std::vector<int64_t> &sizes) const;

  /// Like `readTile`, but writes the tile's elements (of the tensor's dtype)
  /// to `out`, the address of the tile's first element in a destination with
  /// element strides `outStrides` (one per dimension), so a caller can
  /// assemble a larger tile from several tensors without another copy.
  Status readTileInto(std::string_view name,
                      const std::vector<int64_t> &offsets,
                      const std::vector<int64_t> &sizes, uint8_t *out,
                      const std::vector<int64_t> &outStrides) const;

  /// Drops this process's pages of the mapped file (after copies of what
  /// was needed were made; MappedFile::releasePages).
  void releasePages() const { file->releasePages(0, file->size()); }

private:
  PthFile() = default;
  /// Verifies the CRC-32 of `tensor`'s storage, once per storage (the
  /// outcome is kept, also for copies of this PthFile).
  Status checkStorage(const PthTensor &tensor) const;

  struct StorageChecks;
  std::shared_ptr<StorageChecks> checks;
  std::shared_ptr<const MappedFile> file;
  std::string prefix;
  std::vector<PthTensor> entries;
  std::unordered_map<std::string, size_t> byName;
};

} // namespace tra::rt

#endif // TRA_RUNTIME_PTH_H
