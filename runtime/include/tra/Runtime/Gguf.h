//===- Gguf.h - GGUF files (llama.cpp's checkpoint format) ------*- C++ -*-===//
//
// GGUF, the file format of ggml and llama.cpp (ggml/docs/gguf.md), versions
// 2 and 3, little-endian:
//
//   "GGUF", u32 version, u64 tensor_count, u64 kv_count
//   kv_count x     (string key, u32 value type, value)
//   tensor_count x (string name, u32 n_dims, n_dims x u64 ne, u32 ggml type,
//                   u64 offset)
//   zero padding to the alignment, then the data section
//
// A string is a u64 byte length and the bytes (no terminator); an array is
// a u32 element type, a u64 count and the elements (arrays may nest). The
// alignment is the metadata value `general.alignment` (u32, a power of two;
// default 32); every tensor's offset, relative to the data section, is a
// multiple of it. ggml lists dimensions fastest-varying first: a row-major
// [rows, cols] matrix has ne = [cols, rows]. `GgufTensor::shape` is the
// row-major shape (ne reversed), as everywhere else in the runtime.
//
// The file is memory-mapped and nothing is copied at open: metadata values
// are decoded when asked for, tensors read on demand (`readTile` reads only
// the bytes of the region asked for). Tensor types read: F32, F16, BF16
// (returned in that dtype) and Q8_0 (blocks of 32 values along ne[0], each an
// f16 scale d and 32 int8 q, value d * q), dequantised to f32 when read.
// Every other ggml type (Q4_0, Q4_K, Q6_K, ...) is refused at open, by name.
//
// Opening validates the whole header before anything is handed out: the
// magic and version, every length against the bytes left in the file
// (nothing is read past the end; all size arithmetic is overflow-checked),
// counts (at most kMaxGgufEntries keys and tensors, so a hostile header
// cannot make the reader allocate more than a few hundred MiB), array
// nesting, duplicate keys and tensor names, at most 4 dimensions, the
// alignment, and that each tensor's bytes are aligned, lie inside the data
// section and overlap no other tensor. Every message names the file and the
// key or tensor concerned.
//
// The LLaMA view of a GGUF file (hyper-parameters, llama.cpp's tensor names,
// the vocabulary) is GgufLlama.h.
//
//===----------------------------------------------------------------------===//

#ifndef TRA_RUNTIME_GGUF_H
#define TRA_RUNTIME_GGUF_H

#include "tra/Runtime/Error.h"
#include "tra/Runtime/File.h"
#include "tra/Runtime/Llama.h"
#include "tra/Runtime/Tensor.h"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace tra::rt {

/// The most metadata keys, and the most tensors, a GGUF file may have.
inline constexpr uint64_t kMaxGgufEntries = uint64_t(1) << 20;
/// The deepest nesting of metadata arrays accepted.
inline constexpr int kMaxGgufArrayDepth = 4;
/// The most dimensions a GGUF tensor has (ggml's GGML_MAX_DIMS).
inline constexpr uint32_t kMaxGgufDims = 4;

/// The type of a GGUF metadata value (the format's numbering).
enum class GgufValueType : uint32_t {
  U8 = 0,
  I8 = 1,
  U16 = 2,
  I16 = 3,
  U32 = 4,
  I32 = 5,
  F32 = 6,
  Bool = 7,
  String = 8,
  Array = 9,
  U64 = 10,
  I64 = 11,
  F64 = 12,
};

/// Returns the name of a value type: "u8", ..., "string", "array".
const char *ggufValueTypeName(GgufValueType type);

/// The ggml tensor types the runtime reads (ggml's numbering).
enum class GgmlType : uint32_t { F32 = 0, F16 = 1, Q8_0 = 8, BF16 = 30 };

/// Returns ggml's name of tensor type `type` ("F32", "Q8_0", "Q4_K", ...),
/// or "" for a number ggml does not define.
std::string ggmlTypeName(uint32_t type);

/// Values per Q8_0 block (Llama.h's kQ8BlockValues), and the bytes of one
/// block (f16 scale + 32 int8).
inline constexpr int64_t kQ8_0BlockValues = kQ8BlockValues;
inline constexpr int64_t kQ8_0BlockBytes = 2 + kQ8_0BlockValues;

/// One metadata key-value pair; the value's bytes stay in the mapped file.
struct GgufEntry {
  std::string_view key;
  GgufValueType type = GgufValueType::U8;
  /// For an array: the element type and the number of elements.
  GgufValueType elementType = GgufValueType::U8;
  uint64_t count = 0;
  /// The value's encoding (for an array, its first element).
  const uint8_t *data = nullptr;
};

/// One tensor of a GGUF file.
struct GgufTensor {
  std::string_view name;
  /// The ggml type: one of GgmlType.
  GgmlType type = GgmlType::F32;
  /// Row-major shape: ggml's ne, reversed.
  std::vector<int64_t> shape;
  /// The absolute file offset of the tensor's bytes, and their number.
  uint64_t offset = 0;
  uint64_t bytes = 0;

  /// The dtype `readTile` returns: f32 for Q8_0, else the stored type.
  DType dtype() const;
};

/// A validated, memory-mapped GGUF file.
class GgufFile {
public:
  /// Maps and validates the file at `path` (see the file comment).
  static Result<GgufFile> open(const std::string &path);

  /// Returns the path the file was opened with.
  const std::string &path() const { return file->path(); }
  /// Returns the format version (2 or 3).
  uint32_t version() const { return formatVersion; }
  /// Returns the alignment of tensor data.
  uint64_t alignment() const { return dataAlignment; }
  /// Returns the file offset of the data section.
  uint64_t dataOffset() const { return dataStart; }

  /// Returns the metadata, in file order.
  const std::vector<GgufEntry> &entries() const { return metadata; }
  /// Returns the metadata entry `key`, or null.
  const GgufEntry *find(std::string_view key) const;
  /// Returns the string value of `key`.
  Result<std::string_view> getString(std::string_view key) const;
  /// Returns the value of `key`, which must be of an integer type and not
  /// negative.
  Result<uint64_t> getUnsigned(std::string_view key) const;
  /// Returns the value of `key`, of type f32 or f64.
  Result<double> getFloat(std::string_view key) const;
  /// Returns the elements of the array of strings `key` (views into the
  /// mapped file).
  Result<std::vector<std::string_view>>
  getStringArray(std::string_view key) const;
  /// Returns the elements of the array of f32 `key`.
  Result<std::vector<float>> getF32Array(std::string_view key) const;
  /// Returns the elements of the array `key` of an integer type.
  Result<std::vector<int64_t>> getIntArray(std::string_view key) const;

  /// Returns the tensors, in file order.
  const std::vector<GgufTensor> &tensors() const { return tensorList; }
  /// Returns the tensor named `name`, or null.
  const GgufTensor *findTensor(std::string_view name) const;

  /// Returns the region of `tensor` (one of tensors()) of extent `sizes` at
  /// `offsets`, as an owned row-major tensor of `tensor.dtype()`, reading
  /// only the bytes of that region (for Q8_0: the blocks it touches).
  Result<HostTensor> readTile(const GgufTensor &tensor,
                              const std::vector<int64_t> &offsets,
                              const std::vector<int64_t> &sizes) const;
  /// Returns the whole `tensor`: a zero-copy view into the mapped file for
  /// F32, F16 and BF16, dequantised to f32 for Q8_0.
  Result<HostTensor> read(const GgufTensor &tensor) const;
  /// Returns the whole Q8_0 `tensor` as stored, its blocks split into the
  /// i8 values (the tensor's shape) and the f16 scales (the shape with the
  /// last extent divided by kQ8_0BlockValues); fails for another type.
  Result<std::pair<HostTensor, HostTensor>>
  readQ8_0(const GgufTensor &tensor) const;

private:
  GgufFile() = default;
  Result<const GgufEntry *> entry(std::string_view key) const;
  Result<const GgufEntry *> array(std::string_view key,
                                  bool (*element)(GgufValueType),
                                  const char *expected) const;

  std::shared_ptr<const MappedFile> file;
  uint32_t formatVersion = 0;
  uint64_t dataAlignment = 32;
  uint64_t dataStart = 0;
  std::vector<GgufEntry> metadata;
  std::unordered_map<std::string_view, size_t> byKey;
  std::vector<GgufTensor> tensorList;
  std::unordered_map<std::string_view, size_t> byName;
};

/// Returns true if the `size` bytes at `data` start with the GGUF magic.
bool hasGgufMagic(const uint8_t *data, size_t size);

/// Returns true if the file at `path` is a regular file starting with the
/// GGUF magic.
bool isGgufFile(const std::string &path);

} // namespace tra::rt

#endif // TRA_RUNTIME_GGUF_H
