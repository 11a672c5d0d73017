//===- Npy.h - NumPy .npy files ---------------------------------*- C++ -*-===//
//
// Reads and writes the NumPy .npy format (format versions 1.0, 2.0 and 3.0),
// for C-order arrays of these dtypes:
//
//   .npy descr   <f4  <f2  <f8  <i8  <i4  <i2  |i1  |u1  |b1
//   DType        F32  F16  F64  I64  I32  I16  I8   U8   Bool
//
// ("=" is accepted for "<", and single-byte types may use any byte-order
// character.) Big-endian data, Fortran-order arrays whose layout differs from
// C order, structured dtypes and other dtypes are rejected with a message
// saying so.
//
// NumPy has no bfloat16, so `writeNpy` writes a BF16 tensor as F32 ("<f4"):
// the widening is exact, and NumPy can read the result. Reading that file
// back gives an F32 tensor; convert it with `convert(t, DType::BF16)` to get
// the original bits back.
//
//===----------------------------------------------------------------------===//

#ifndef TRA_RUNTIME_NPY_H
#define TRA_RUNTIME_NPY_H

#include "tra/Runtime/Error.h"
#include "tra/Runtime/File.h"
#include "tra/Runtime/Tensor.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tra::rt {

/// What the header of an .npy file says.
struct NpyHeader {
  /// Format version, e.g. 1.0.
  int majorVersion = 1;
  int minorVersion = 0;
  /// The dtype descriptor as written in the file, e.g. "<f4".
  std::string descr;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  /// Offset of the array data from the start of the file.
  size_t dataOffset = 0;
};

/// Options for `readNpy`.
struct NpyReadOptions {
  /// Return a read-only view into the memory-mapped file instead of a copy.
  /// The mapping stays alive as long as any tensor viewing it.
  bool memoryMap = false;
};

/// Returns the .npy descr of `dtype` ("<f4", ...), or nullopt for BF16.
std::optional<std::string> npyDescr(DType dtype);

/// Parses and validates the .npy file held in `data`/`size` (its header, and
/// that the data is as long as the shape requires). `path` names the file in
/// error messages.
Result<NpyHeader> parseNpy(const uint8_t *data, size_t size,
                           const std::string &path);

/// Reads and validates the header of the .npy file at `path`.
Result<NpyHeader> readNpyHeader(const std::string &path);

/// Reads the .npy file at `path`.
Result<HostTensor> readNpy(const std::string &path,
                           const NpyReadOptions &options = {});

/// Returns the bytes of the .npy file (format 1.0, or 2.0 if the header needs
/// it) holding `tensor`; BF16 is widened to F32. The data starts at a multiple
/// of 64 bytes, as NumPy does.
std::string encodeNpy(const HostTensor &tensor);

/// Writes `tensor` to `path` atomically (see `AtomicFileWriter`); BF16 is
/// written as F32.
Status writeNpy(const std::string &path, const HostTensor &tensor);

/// Writes `tensor` as .npy to a temporary file beside `path` and returns its
/// writer, not committed: a program's outputs are all written before any
/// replaces its destination (`commitAll`), so a failure leaves none.
Result<AtomicFileWriter> prepareNpy(const std::string &path,
                                    const HostTensor &tensor);

} // namespace tra::rt

#endif // TRA_RUNTIME_NPY_H
