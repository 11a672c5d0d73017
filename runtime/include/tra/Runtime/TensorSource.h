//===- TensorSource.h - One way to read tiles of any checkpoint -*- C++ -*-===//
//
// `openTensorSource(path)` opens a checkpoint in any format the runtime reads
// and presents its tensors uniformly: names, global shapes, stored dtypes,
// and `readTile`, which returns any rectangular region of a tensor while
// reading only the byte ranges that region needs (files are memory-mapped;
// nothing is read at open beyond headers and indexes, except the replicated
// 1-D tensors of a Meta checkpoint, which are compared across shards).
//
// Recognised, by what `path` is:
//
//   | path                                         | format              |
//   | -------------------------------------------- | ------------------- |
//   | directory holding `tra-split.json`           | "tra-split"         |
//   | `tra-split.json` (or any JSON with "format": "tra-split") | "tra-split" |
//   | directory holding `params.json`              | "meta"              |
//   | directory holding `config.json` and          | "hf-llama"          |
//   |   `model.safetensors[.index.json]`           |                     |
//   | `*.json` with a "weight_map"                 | "safetensors-index" |
//   | file starting with "GGUF" (or `*.gguf`)      | "gguf"              |
//   | file starting with a safetensors header      | "safetensors"       |
//   | any other file                               | "llama2.c"          |
//
// (a directory with neither index is refused). The tra-split layout, one
// safetensors file per rank holding that rank's tiles plus an index, is
// described and written by TraSplit.h.
//
// Tensor names are the checkpoint's own; the LLaMA formats (llama2.c, Meta,
// Hugging Face LLaMA, tra-split written by `tra-llama reshard`) use Meta's
// names ("layers.0.attention.wq.weight") and layout, and also provide the
// model's hyper-parameters (`llamaParams`); so does a GGUF file of
// llama.cpp's "llama" architecture (GgufLlama.h: its "blk.N.attn_q.weight"
// read as "layers.N.attention.wq.weight", Q8_0 weights dequantised to f32
// when read as tiles, or read as stored by readQ8_0). A Hugging Face directory
// is mapped onto them: "model.layers.N.self_attn.q_proj.weight" is read as
// "layers.N.attention.wq.weight", with the per-head row permutation HF
// applies to wq and wk (for its rotate_half rotary convention) undone.
//
// A TensorSource is immutable once opened; `readTile` may be called from
// several threads at once. Every message names the file concerned and the
// tensor, as in "ckpt/rank-00001-of-00004.safetensors: tensor 'norm.weight':
// ...".
//
//===----------------------------------------------------------------------===//

#ifndef TRA_RUNTIME_TENSORSOURCE_H
#define TRA_RUNTIME_TENSORSOURCE_H

#include "tra/Runtime/Error.h"
#include "tra/Runtime/Llama.h"
#include "tra/Runtime/Tensor.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace tra::rt {

/// A tensor of a TensorSource: its name, stored dtype and global shape.
struct TensorInfo {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  /// Stored quantised as llama.cpp's Q8_0 (GGUF): `dtype` is f32, what
  /// readTile dequantises to; readQ8_0 returns the stored blocks.
  bool q8_0 = false;
};

/// A tensor quantised as Q8_0: its i8 values (the tensor's shape) and one
/// f16 scale per block of kQ8BlockValues (Llama.h) along the last
/// dimension.
struct Q8Tensor {
  HostTensor values, scales;
};

/// Read access to the tensors of one checkpoint, whatever its format.
class TensorSource {
public:
  virtual ~TensorSource() = default;

  /// Returns the format: "llama2.c", "meta", "hf-llama", "gguf",
  /// "safetensors", "safetensors-index" or "tra-split".
  virtual const char *format() const = 0;

  /// Returns the path the source was opened with.
  const std::string &path() const { return sourcePath; }
  /// Returns the tensors, in the checkpoint's order.
  const std::vector<TensorInfo> &tensors() const { return infos; }
  /// Returns the tensor named `name`, or null.
  const TensorInfo *find(std::string_view name) const;
  /// Returns the LLaMA hyper-parameters the checkpoint states (llama2.c
  /// header, params.json, config.json, GGUF metadata or the tra-split
  /// index), or nullopt.
  const std::optional<LlamaParams> &llamaParams() const { return params; }

  /// Returns the region of tensor `name` of extent `shape` starting at
  /// `offsets` (one each per dimension), as an owned row-major tensor of
  /// `dtype` (default: the stored dtype; otherwise converted as `convert`
  /// does). Reads only the bytes of the region. For a tra-split source the
  /// region is assembled from the tiles that cover it, taking each from
  /// rank `preferRank`'s file when that rank holds a copy (other sources
  /// ignore `preferRank`). Fails, naming the file and tensor, for an unknown
  /// tensor, a region outside the tensor, or a damaged or missing file.
  Result<HostTensor> readTile(std::string_view name,
                              const std::vector<int64_t> &offsets,
                              const std::vector<int64_t> &shape,
                              std::optional<DType> dtype = std::nullopt,
                              int64_t preferRank = -1) const;

  /// Returns the whole tensor `name` (see readTile).
  Result<HostTensor> read(std::string_view name,
                          std::optional<DType> dtype = std::nullopt) const;

  /// Returns the whole tensor `name`, stored as Q8_0 (TensorInfo::q8_0), as
  /// stored: 8-bit values and their scales, nothing dequantised. Fails,
  /// naming the file and tensor, for a tensor stored otherwise.
  Result<Q8Tensor> readQ8_0(std::string_view name) const;

protected:
  explicit TensorSource(std::string path) : sourcePath(std::move(path)) {}

  /// Adds a tensor to the listing (used while opening).
  void addTensor(TensorInfo info);

  /// Reads a region already checked to lie inside `info`'s tensor, in
  /// `dtype`.
  virtual Result<HostTensor> readRegion(const TensorInfo &info,
                                        const std::vector<int64_t> &offsets,
                                        const std::vector<int64_t> &shape,
                                        DType dtype,
                                        int64_t preferRank) const = 0;
  /// Reads `info`'s tensor, which has TensorInfo::q8_0, as stored.
  virtual Result<Q8Tensor> readStoredQ8_0(const TensorInfo &info) const;

  std::optional<LlamaParams> params;

private:
  std::string sourcePath;
  std::vector<TensorInfo> infos;
  std::unordered_map<std::string, size_t> byName;
};

/// Opens the checkpoint at `path` (see the file comment for the formats).
Result<std::unique_ptr<TensorSource>> openTensorSource(const std::string &path);

} // namespace tra::rt

#endif // TRA_RUNTIME_TENSORSOURCE_H
