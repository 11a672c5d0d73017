//===- RankModel.h - One MPI rank of a distributed LLaMA model --*- C++ -*-===//
//
// The engine of a LLaMA model planned for several devices, as one rank of
// the MPI job that runs the whole generation (tra-llama-worker). Every step
// program is a shared library holding each rank's program with the tiles it
// reads and writes (TraExecRankProgram). Rank r:
//
//  - loads the libraries before MPI starts (their MPI calls bind to this
//    process's MPI runtime; the caller checks with tra_mpi_init that every
//    rank runs the same plans, by numRanks() and fingerprint());
//  - reads only its tiles of the weights from the checkpoint (any format
//    rt::openTensorSource reads; a tra-split checkpoint from this rank's own
//    file) and of the rotary tables;
//  - keeps its tiles of the KV caches in memory across steps: a step reads
//    one set and writes the other, which becomes the next step's input —
//    unchanged when the next program's input tiles are the previous
//    program's output tiles, else moved between ranks (Redistribute.h);
//  - gathers the logits tiles on rank 0.
//
// With an accelerator (runtime/cuda's, one GPU per rank, connected to the
// other ranks' by the caller) the programs are GPU programs: the weight
// tiles (in the dtype the programs read them: 16-bit weights stay 16-bit),
// the rotary tiles and the KV-cache tiles live in device memory; a step
// copies its tokens and position there and its logits tile back. KV-cache
// tiles that change rank between programs go through host memory.
//
// Needs the MPI runtime (runtime/mpi); no MLIR dependency.
//
//===----------------------------------------------------------------------===//

#ifndef TRA_ENGINE_RANKMODEL_H
#define TRA_ENGINE_RANKMODEL_H

#include "tra/Engine/DeviceMemory.h"
#include "tra/Engine/StepChunks.h"
#include "tra/Engine/TileLayout.h"
#include "tra/Exec/Driver.h"
#include "tra/Exec/Library.h"
#include "tra/Runtime/Llama.h"
#include "tra/Runtime/Tensor.h"
#include "tra/Runtime/TensorSource.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tra::engine {

class RankModel {
public:
  /// Loads the step programs at `programPaths` (before MPI starts): each
  /// must be a distributed program, all for the same number of ranks.
  static rt::Result<std::unique_ptr<RankModel>>
  load(const std::vector<std::string> &programPaths);

  ~RankModel();
  RankModel(const RankModel &) = delete;
  RankModel &operator=(const RankModel &) = delete;
  /// Whether the programs are GPU programs (each rank needs a GPU).
  bool onGpu() const { return gpuPrograms; }
  /// Whether a program reads a weight in a 16-bit type (after init).
  bool sixteenBitWeights() const { return anySixteenBit; }
  /// Opens `checkpoint` and reads rank `rank`'s tiles of every program;
  /// `maxSeqLen` (if > 0) shortens the model's KV caches as the programs
  /// were built; `threads` (if > 0) overrides the programs' thread count.
  /// GPU programs need `accelerator` (initialized: this rank's GPU).
  rt::Status init(int rank, const std::string &checkpoint, int64_t maxSeqLen,
                  int64_t threads,
                  const exec::Accelerator *accelerator = nullptr);

  /// The number of ranks of the programs.
  int64_t numRanks() const { return ranks; }
  /// A hash of the programs' plans: equal on every rank of a sound job.
  uint64_t fingerprint() const { return planFingerprint; }
  /// The model's parameters (after init).
  const rt::LlamaParams &params() const { return p; }
  /// Whether a program runs steps of `seq` tokens (after init).
  bool hasProgram(int64_t seq) const;
  /// The tokens per step of the programs (after init).
  std::vector<int64_t> programLengths() const;

  /// Runs one step over tokens[pos, pos + n) on this rank, in chunks of
  /// the programs loaded (StepChunks.h); rank 0 receives every row of the
  /// logits (allRows) or the last. Collective: every rank runs the same
  /// steps.
  rt::Status step(const std::vector<int64_t> &tokens, int64_t pos, int64_t n,
                  std::vector<double> &logits);
  /// For each step program whose part on this rank fetched weights from
  /// the memory tiers of the node: "@forward (N tokens per step): fetched
  /// ... per run (R runs)".
  std::vector<std::string> tierFetchReport() const;

  /// step() gathers every row of logits on rank 0 (else the last one only).
  bool allRows = true;

  /// KV caches moved from one step program's layout to another's, and the
  /// bytes that changed rank (all ranks together).
  int64_t cacheRelayouts = 0, cacheBytesMoved = 0;

private:
  /// This rank's part of one step program (a step length).
  struct Step {
    std::unique_ptr<exec::ProgramLibrary> library;
    const TraExecRankProgram *mine = nullptr;
    int64_t seq = 0;
    std::vector<void *> buffers;
    /// The tokens tile (slot, its box in the [seq] tokens).
    std::optional<std::pair<size_t, Box>> tokens;
    std::vector<size_t> posSlots;
    /// A one-row program (input `logits_row`): its slots, set to the
    /// chunk's last row; the logits are that row only.
    std::vector<size_t> rowSlots;
    bool oneRow = false;
    /// KV caches: per cache, the layouts of the input and output tiles and
    /// this rank's slots (if it holds a tile).
    std::vector<Layout> cacheIn, cacheOut;
    std::vector<std::optional<size_t>> cacheInSlot, cacheOutSlot;
    /// The logits tiles and this rank's slot.
    Layout logits;
    std::optional<size_t> logitsSlot;
    std::vector<rt::HostTensor> ownBuffers;
    /// GPU: the host copy of each slot the step fills or reads back
    /// (tokens, positions, logits), by slot, and its bytes.
    std::map<size_t, std::pair<void *, size_t>> hostCopies;
  };
  /// One KV cache: this rank's tile in `layout` (null before the first
  /// step: all zeros) and a spare buffer for the next step's output.
  struct Cache {
    const Layout *layout = nullptr;
    rt::HostTensor tile, spare;
    /// GPU: the tiles in device memory, and their bytes.
    void *deviceTile = nullptr, *deviceSpare = nullptr;
    size_t tileBytes = 0, spareBytes = 0;
  };

  RankModel() = default;
  rt::Status bindLayouts(Step &step);
  rt::Status bindBuffers(Step &step, int64_t threads);
  /// GPU: moves `step`'s buffers to the device.
  rt::Status placeOnDevice(Step &step);
  /// Binds the KV-cache tiles of `step` (host or device), moving tiles
  /// between ranks where the layout changes; `inputs` / `deviceInputs`
  /// receive this step's input tiles (host / GPU).
  rt::Status bindCaches(Step &step, std::vector<rt::HostTensor> &inputs,
                        std::vector<std::pair<void *, size_t>> &deviceInputs);
  /// Runs `step`'s program over `chunk` of `tokens` (padded to the
  /// program's length); rank 0 appends the logits rows [firstRow,
  /// chunk.count) to `logits`.
  rt::Status runStep(Step &step, const std::vector<int64_t> &tokens,
                     const StepChunk &chunk, int64_t firstRow,
                     std::vector<double> &logits);
  /// Rank 0 appends the logits rows [firstRow, n) of `step` to `logits`
  /// (no gather when firstRow is n).
  rt::Status gatherLogits(Step &step, int64_t firstRow, int64_t n,
                          std::vector<double> &logits);

  int me = 0;
  int64_t ranks = 0;
  uint64_t planFingerprint = 0;
  std::string checkpointPath;
  std::vector<Step> steps;
  std::unique_ptr<rt::TensorSource> source;
  rt::LlamaParams p;
  std::vector<float> cosTable, sinTable;
  std::map<std::string, rt::HostTensor> weights;
  std::vector<Cache> caches;
  bool gpuPrograms = false, anySixteenBit = false;
  const exec::Accelerator *accelerator = nullptr;
  /// GPU: the device copies of `weights`, by the same keys.
  std::map<std::string, void *> deviceWeights;
  /// GPU: the host-tier weight buffers placeOnDevice tried to pin, and
  /// whether it did (unpinned with the model).
  std::map<void *, bool> pinnedWeights;
  /// GPU: every device buffer above, freed with the model.
  DeviceMemory device;
};

} // namespace tra::engine

#endif // TRA_ENGINE_RANKMODEL_H
