//===- Tensor.h - Host tensors, element types and conversions ---*- C++ -*-===//
//
// `HostTensor` is a dense, row-major (C order) tensor in host memory. Its bytes
// are either owned or a read-only view into memory kept alive by a
// `std::shared_ptr` (for example a memory-mapped checkpoint file), so reading
// a large checkpoint need not copy it.
//
// All multi-byte elements are little-endian, which is also the host order:
// the runtime only builds for little-endian hosts. Element pointers into a
// view may be unaligned (file formats do not all align tensor data); the
// accessors below use memcpy and are safe either way.
//
//===----------------------------------------------------------------------===//

#ifndef TRA_RUNTIME_TENSOR_H
#define TRA_RUNTIME_TENSOR_H

#include "tra/Runtime/Error.h"
#include "tra/Runtime/LargePages.h"

#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the tra runtime supports little-endian hosts only"
#endif

namespace tra::rt {

/// Element types the runtime reads, writes and converts between.
enum class DType { F32, F16, BF16, F64, I64, I32, I16, I8, U8, Bool };

/// All element types, in declaration order.
inline constexpr DType kAllDTypes[] = {
    DType::F32, DType::F16, DType::BF16, DType::F64, DType::I64,
    DType::I32, DType::I16, DType::I8,   DType::U8,  DType::Bool};

/// Returns the size of one element in bytes.
size_t dtypeSize(DType dtype);

/// Returns the lower-case name of `dtype`: "f32", "f16", "bf16", "f64", "i64",
/// "i32", "i16", "i8", "u8" or "bool".
const char *dtypeName(DType dtype);

/// Parses a dtype name. Accepts, case-insensitively, the names `dtypeName`
/// returns and the NumPy/PyTorch spellings "float32", "float", "float16",
/// "half", "bfloat16", "float64", "double", "int64", "long", "int32", "int",
/// "int16", "short", "int8", "uint8" and "bool". Returns nullopt otherwise.
std::optional<DType> parseDType(std::string_view name);

/// Returns true for F32, F16, BF16 and F64.
bool isFloatingPoint(DType dtype);

/// Returns the number of elements of `shape` (1 for a 0-d shape), or nullopt
/// if a dimension is negative or the count overflows int64_t.
std::optional<int64_t> shapeElementCount(const std::vector<int64_t> &shape);

/// Returns the byte size of a tensor of `dtype` and `shape`, or nullopt if a
/// dimension is negative or the size overflows int64_t.
std::optional<int64_t> shapeByteSize(DType dtype,
                                     const std::vector<int64_t> &shape);

/// Formats a shape as "[2, 3]" ("[]" for 0-d).
std::string formatShape(const std::vector<int64_t> &shape);

//===----------------------------------------------------------------------===//
// 16-bit floating point conversions
//===----------------------------------------------------------------------===//

/// Converts an IEEE binary16 bit pattern to float (exact).
float halfToFloat(uint16_t bits);
/// Converts a float to the nearest IEEE binary16, ties to even. Values of
/// magnitude >= 65520 become infinity; NaNs stay NaN (quieted, sign and the
/// top payload bits kept).
uint16_t floatToHalf(float value);
/// Converts a double to the nearest binary16, ties to even, rounding once
/// (not double rounding through float).
uint16_t doubleToHalf(double value);

/// Converts a bfloat16 bit pattern to float (exact).
float bfloat16ToFloat(uint16_t bits);
/// Converts a float to the nearest bfloat16, ties to even. Overflow goes to
/// infinity; NaNs stay NaN (quieted, sign and top payload bits kept).
uint16_t floatToBFloat16(float value);
/// Converts a double to the nearest bfloat16, ties to even, rounding once.
uint16_t doubleToBFloat16(double value);

//===----------------------------------------------------------------------===//
// HostTensor
//===----------------------------------------------------------------------===//

/// A dense row-major tensor in host memory, owning its bytes or viewing bytes
/// kept alive by a shared owner. Copying a HostTensor copies owned bytes and
/// shares viewed bytes.
class HostTensor {
public:
  /// Constructs an empty f32 tensor of shape [0].
  HostTensor();

  /// Returns a zero-filled tensor. `shape` must have non-negative dimensions
  /// and a byte size that fits in memory.
  static HostTensor zeros(DType dtype, std::vector<int64_t> shape);

  /// Returns a tensor owning a copy of the `byteSize(dtype, shape)` bytes at
  /// `data`.
  static HostTensor copyOf(DType dtype, std::vector<int64_t> shape,
                           const void *data);

  /// Returns a tensor whose elements are `values` converted to `dtype` (see
  /// `convert`); `values.size()` must equal the element count of `shape`.
  static HostTensor fromDoubles(DType dtype, std::vector<int64_t> shape,
                                const std::vector<double> &values);

  /// Returns a read-only view of the bytes at `data`, which `owner` keeps
  /// alive. Mutating the view (through `mutableData` or `store`) first copies
  /// the bytes into owned storage.
  static HostTensor view(DType dtype, std::vector<int64_t> shape,
                         const uint8_t *data,
                         std::shared_ptr<const void> owner);

  /// Returns the element type.
  DType dtype() const { return elementType; }
  /// Returns the shape.
  const std::vector<int64_t> &shape() const { return dims; }
  /// Returns the number of dimensions.
  int64_t rank() const { return static_cast<int64_t>(dims.size()); }
  /// Returns the number of elements (1 for a 0-d tensor).
  int64_t numElements() const { return elementCount; }
  /// Returns the size of the data in bytes.
  size_t byteSize() const {
    return static_cast<size_t>(elementCount) * dtypeSize(elementType);
  }
  /// Returns true if the bytes are a view rather than owned.
  bool isView() const { return viewData != nullptr; }

  /// Returns the bytes (null only when the tensor holds no bytes).
  const uint8_t *data() const { return viewData ? viewData : ownedData.data(); }
  /// Returns writable bytes, first copying a view into owned storage.
  uint8_t *mutableData();

  /// Reads element `index` (row-major flat index) as a `T`, which must be the
  /// C++ type of the same size as the dtype (uint16_t for f16/bf16, uint8_t
  /// or bool for bool).
  template <class T> T load(int64_t index) const {
    static_assert(std::is_trivially_copyable_v<T>);
    T value;
    std::memcpy(&value, data() + index * sizeof(T), sizeof(T));
    return value;
  }
  /// Writes element `index`; see `load`.
  template <class T> void store(int64_t index, T value) {
    static_assert(std::is_trivially_copyable_v<T>);
    std::memcpy(mutableData() + index * sizeof(T), &value, sizeof(T));
  }

  /// Reads element `index` converted to double (bf16/f16 exactly; i64 values
  /// beyond 2^53 rounded).
  double loadAsDouble(int64_t index) const;

  /// Returns true if both tensors have the same dtype, shape and bytes.
  bool identical(const HostTensor &other) const;

private:
  DType elementType = DType::F32;
  std::vector<int64_t> dims;
  int64_t elementCount = 0;
  /// Large buffers on huge pages (LargePages.h): weights and caches that
  /// decoding steps stream.
  std::vector<uint8_t, LargePageAllocator<uint8_t>> ownedData;
  const uint8_t *viewData = nullptr;
  std::shared_ptr<const void> viewOwner;
};

/// Returns `tensor` converted to `dtype`, element by element:
///  - to a floating type: rounded to nearest, ties to even, in one rounding
///    step; overflow gives infinity; NaN stays NaN;
///  - floating to integer: truncated toward zero and saturated to the target
///    range, NaN gives 0 (NumPy leaves these cases undefined);
///  - integer to narrower integer: wraps modulo 2^bits, as NumPy does;
///  - to bool: nonzero (including NaN) gives true; from bool: 0 or 1.
/// Converting to the same dtype returns a copy that shares a view's bytes.
HostTensor convert(const HostTensor &tensor, DType dtype);

/// Checks that the tile at `offsets` of extent `sizes` lies inside `shape`.
/// Succeeds if so, else fails with a description of the problem.
Status checkTile(const std::vector<int64_t> &shape,
                 const std::vector<int64_t> &offsets,
                 const std::vector<int64_t> &sizes);

/// Copies the tile of `sizes` starting at `offsets` out of the row-major
/// tensor of `dtype` and `shape` whose bytes start at `data`, into `out`
/// (row-major, `byteSize(dtype, sizes)` bytes). Reads only the bytes of the
/// tile, in runs as long as the layout allows. The tile must be valid (see
/// `checkTile`).
void copyTile(DType dtype, const std::vector<int64_t> &shape,
              const uint8_t *data, const std::vector<int64_t> &offsets,
              const std::vector<int64_t> &sizes, uint8_t *out);

/// The inverse of copyTile: copies the row-major tile of `sizes` at `tile`
/// into the row-major tensor of `dtype` and `shape` at `data`, at `offsets`.
/// The tile must be valid (see `checkTile`).
void insertTile(DType dtype, const std::vector<int64_t> &shape, uint8_t *data,
                const std::vector<int64_t> &offsets,
                const std::vector<int64_t> &sizes, const uint8_t *tile);

/// Returns the tile of `tensor` of extent `sizes` starting at `offsets`, or an
/// error if it does not lie inside the tensor.
Result<HostTensor> extractTile(const HostTensor &tensor,
                               const std::vector<int64_t> &offsets,
                               const std::vector<int64_t> &sizes);

} // namespace tra::rt

#endif // TRA_RUNTIME_TENSOR_H
