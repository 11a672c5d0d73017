//===- TraSplit.h - Checkpoints re-split for a plan, one file per rank -*- C++
//-*-===//
//
// The tra-split layout: a checkpoint cut into the tiles a plan gives each
// device (rank), so that every process of a distributed run reads exactly
// its own file. A directory holding
//
//   rank-00000-of-00008.safetensors ... rank-00007-of-00008.safetensors
//       one safetensors file per rank, holding exactly the tiles that rank
//       owns, each under its tensor's name (a replicated tile is stored in
//       every file of a rank that holds a copy). Should a rank own several
//       tiles of one tensor, they are stored as "NAME#K", K the tile's number
//       in the index's list for that tensor. "__metadata__" holds
//       {"format": "tra-split", "rank": "3", "ranks": "8"}.
//   tra-split.json
//       the index:
//       {"format": "tra-split", "version": 1, "ranks": 8,
//        "files": ["rank-00000-of-00008.safetensors", ...],
//        "metadata": {...},              // free-form: hardware, plan, source
//        "llama": {"dim": 64, ...},      // optional: the model's parameters
//        "tensors": {
//          "layers.0.attention.wq.weight": {
//            "dtype": "F32", "shape": [64, 64], "dist": "[8, 1] on 0-7",
//            "tiles": [{"offsets": [0, 0], "shape": [8, 64],
//                       "ranks": [0], "key": "layers.0.attention.wq.weight"},
//                      ...]}}}
//       Each tile lists the ranks holding a copy; the file of rank r is
//       files[r], where the tile is stored under "key". The distinct tiles
//       of a tensor cover it exactly, without overlap.
//
// The writer streams: it writes every rank file's header first (all tile
// shapes are known from the layout), then reads the source tile by tile,
// appending each tile to the files of the ranks that hold it, so that no
// more than one tile is in memory. Everything goes to "DIR.tmp.<pid>", which
// is renamed to DIR only once complete: a failed run leaves no DIR (and an
// existing split at DIR untouched).
//
//===----------------------------------------------------------------------===//

#ifndef TRA_RUNTIME_TRASPLIT_H
#define TRA_RUNTIME_TRASPLIT_H

#include "tra/Runtime/Error.h"
#include "tra/Runtime/Json.h"
#include "tra/Runtime/Llama.h"
#include "tra/Runtime/TensorSource.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tra::rt {

/// The index file's name inside a tra-split directory.
inline constexpr const char *kTraSplitIndexName = "tra-split.json";
/// The layout version written and read.
inline constexpr int64_t kTraSplitVersion = 1;

/// Returns the file name of rank `rank` of `ranks`:
/// "rank-00003-of-00008.safetensors".
std::string traSplitRankFileName(int64_t rank, int64_t ranks);

/// One tile of a tensor and the ranks holding a copy of it.
struct SplitTile {
  std::vector<int64_t> offsets;
  std::vector<int64_t> shape;
  std::vector<int64_t> ranks;
  /// The name the tile is stored under in each rank file (filled in by
  /// `checkSplitLayout`).
  std::string key;
};

/// A tensor of a split: its global shape, the dtype stored, its tiles.
struct SplitTensor {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  /// A human-readable description of the distribution (optional).
  std::string dist;
  std::vector<SplitTile> tiles;
};

/// The whole layout: what `writeTraSplit` writes and a tra-split source
/// reads.
struct SplitLayout {
  int64_t ranks = 0;
  std::vector<SplitTensor> tensors;
  /// The model's parameters, written as "llama" when set.
  std::optional<LlamaParams> llama;
  /// Free-form metadata (a JSON object, or null).
  JsonValue metadata;
};

/// Checks `layout` and fills in every tile's key: ranks >= 1, tensor names
/// distinct and non-empty, every tile inside its tensor with at least one
/// rank, ranks in [0, ranks) and distinct per tile, and the tiles of each
/// tensor disjoint and covering it. `source` names the layout in messages.
Status checkSplitLayout(SplitLayout &layout, const std::string &source);

/// What writing a split did.
struct SplitWriteStats {
  /// Bytes of tensor data read from the source (each tile once).
  uint64_t bytesRead = 0;
  /// Bytes written, all rank files and the index together.
  uint64_t bytesWritten = 0;
};

/// Called before each tensor is written: its position (0-based) and count,
/// the tensor, and the bytes it occupies over all rank files.
using SplitProgress = std::function<void(size_t index, size_t count,
                                         const SplitTensor &tensor,
                                         uint64_t bytes)>;

/// Writes `layout` to directory `dir`, reading every tile from `source` (in
/// the tile's dtype, converted as `convert` does). `dir` must not exist, be
/// an empty directory, or hold a previous tra-split (which is replaced
/// atomically); its parent directories are created. On failure nothing is
/// left at `dir` but what was there before.
Result<SplitWriteStats> writeTraSplit(const std::string &dir,
                                      const TensorSource &source,
                                      SplitLayout layout,
                                      const SplitProgress &progress = {});

/// Reads a tra-split index (`path`: the directory or its tra-split.json),
/// checking it as `checkSplitLayout` does; the rank files are not opened.
Result<SplitLayout> readTraSplitIndex(const std::string &path);

} // namespace tra::rt

#endif // TRA_RUNTIME_TRASPLIT_H
