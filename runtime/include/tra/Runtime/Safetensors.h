//===- Safetensors.h - safetensors files and sharded checkpoints -*- C++
//-*-===//
//
// The safetensors format (https://github.com/huggingface/safetensors): an
// 8-byte little-endian header length N, N bytes of JSON header, then the data
// section. The header maps each tensor name to
//   {"dtype": "F32", "shape": [2, 3], "data_offsets": [BEGIN, END]}
// (offsets relative to the data section) and may hold "__metadata__", a map
// of strings to strings. Supported dtypes: F32 F16 BF16 F64 I64 I32 I16 I8
// U8 BOOL.
//
// Files are memory-mapped; `get` returns a zero-copy view and `readTile`
// reads only the bytes of the requested tile, so a process can take its part
// of a large checkpoint without reading the rest.
//
// Opening validates the whole header as the reference implementation does:
// the header length must fit in the file, the JSON must be valid with no
// duplicate names, every dtype known, every byte range must match its
// shape and dtype, and the ranges must tile the data section exactly (no
// overlaps, holes or trailing bytes). Every message names the file, and the
// tensor when there is one.
//
// A sharded checkpoint is a "*.safetensors.index.json" file whose
// "weight_map" maps each tensor name to the shard file (relative to the index
// file's directory) that holds it; `SafetensorsCheckpoint` opens either form.
//
//===----------------------------------------------------------------------===//

#ifndef TRA_RUNTIME_SAFETENSORS_H
#define TRA_RUNTIME_SAFETENSORS_H

#include "tra/Runtime/Error.h"
#include "tra/Runtime/File.h"
#include "tra/Runtime/Json.h"
#include "tra/Runtime/Tensor.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace tra::rt {

/// The "__metadata__" of a safetensors file, in file order.
using SafetensorsMetadata = std::vector<std::pair<std::string, std::string>>;

/// Returns the safetensors name of `dtype`: "F32", ..., "BOOL".
const char *safetensorsDTypeName(DType dtype);
/// Parses a safetensors dtype name; nullopt if unknown or unsupported.
std::optional<DType> parseSafetensorsDType(std::string_view name);

/// One tensor listed in a safetensors header.
struct SafetensorsEntry {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  /// Byte range [begin, end) within the data section.
  uint64_t begin = 0;
  uint64_t end = 0;
};

/// A validated, memory-mapped safetensors file.
class SafetensorsFile {
public:
  /// Maps and validates the file at `path`.
  static Result<SafetensorsFile> open(const std::string &path);

  /// Returns the path the file was opened with.
  const std::string &path() const { return file->path(); }
  /// Returns the tensors in header order.
  const std::vector<SafetensorsEntry> &tensors() const { return entries; }
  /// Returns the "__metadata__" entries (empty if absent).
  const SafetensorsMetadata &metadata() const { return meta; }
  /// Returns the file offset of the data section (8 + header length).
  uint64_t dataOffset() const { return dataStart; }

  /// Returns the entry named `name`, or null.
  const SafetensorsEntry *find(std::string_view name) const;
  /// Returns the entry named `name`, or an error naming the file and tensor.
  Result<const SafetensorsEntry *> entry(std::string_view name) const;

  /// Returns tensor `name` as a zero-copy view into the mapped file.
  Result<HostTensor> get(std::string_view name) const;

  /// Returns the tile of tensor `name` of extent `sizes` starting at
  /// `offsets` (one per dimension), as an owned tensor. Only the tile's bytes
  /// are read; for a strided tile read-ahead is turned off for the tensor
  /// while copying so the kernel does not page in the rows in between.
  Result<HostTensor> readTile(std::string_view name,
                              const std::vector<int64_t> &offsets,
                              const std::vector<int64_t> &sizes) const;

private:
  SafetensorsFile() = default;

  std::shared_ptr<const MappedFile> file;
  std::vector<SafetensorsEntry> entries;
  std::unordered_map<std::string, size_t> byName;
  SafetensorsMetadata meta;
  uint64_t dataStart = 0;
};

/// A tensor with its name, for writing.
struct NamedTensor {
  std::string name;
  HostTensor tensor;
};

/// Writes `tensors` and `metadata` to a safetensors file at `path`,
/// atomically (see `AtomicFileWriter`). The header lists the tensors in the
/// given order and is padded with spaces to a multiple of 8 bytes; the data is
/// laid out by decreasing element size (stable), so every tensor's data is
/// aligned to its element size in the file. Names must be distinct and not
/// "__metadata__".
Status writeSafetensors(const std::string &path,
                        const std::vector<NamedTensor> &tensors,
                        const SafetensorsMetadata &metadata = {});

/// A checkpoint in safetensors form: a single file, or the shards listed by a
/// "*.safetensors.index.json" file.
class SafetensorsCheckpoint {
public:
  /// Opens `path`: an index file if it ends in ".json", else a single
  /// safetensors file. For an index, every shard is opened and validated and
  /// every tensor of the weight map must be present in its shard.
  static Result<SafetensorsCheckpoint> open(const std::string &path);

  /// Returns the path the checkpoint was opened with.
  const std::string &path() const { return checkpointPath; }
  /// Returns true if opened from an index file.
  bool isSharded() const { return sharded; }
  /// Returns the tensor names: weight-map order for an index, header order
  /// for a single file.
  const std::vector<std::string> &tensorNames() const { return names; }
  /// Returns the shard files, in order of first appearance.
  const std::vector<SafetensorsFile> &shards() const { return shardFiles; }
  /// Returns the index's "metadata" object (null if absent or unsharded).
  const JsonValue &indexMetadata() const { return metadataJson; }

  /// Returns the shard holding tensor `name`, or an error.
  Result<const SafetensorsFile *> shardOf(std::string_view name) const;
  /// Returns the entry of tensor `name` in its shard, or an error.
  Result<const SafetensorsEntry *> entry(std::string_view name) const;
  /// Returns tensor `name` as a zero-copy view (see SafetensorsFile::get).
  Result<HostTensor> get(std::string_view name) const;
  /// Returns a tile of tensor `name` (see SafetensorsFile::readTile).
  Result<HostTensor> readTile(std::string_view name,
                              const std::vector<int64_t> &offsets,
                              const std::vector<int64_t> &sizes) const;

private:
  SafetensorsCheckpoint() = default;

  std::string checkpointPath;
  bool sharded = false;
  std::vector<std::string> names;
  std::vector<SafetensorsFile> shardFiles;
  std::unordered_map<std::string, size_t> shardIndex;
  JsonValue metadataJson;
};

} // namespace tra::rt

#endif // TRA_RUNTIME_SAFETENSORS_H
