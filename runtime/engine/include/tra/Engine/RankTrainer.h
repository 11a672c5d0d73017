//===- RankTrainer.h - One MPI rank of a distributed training run -*- C++ -*-=//
//
// The engine of a LLaMA training step planned for several devices, as one
// rank of the MPI job that runs the whole training (tra-llama-train-worker).
// The step program is a shared library holding each rank's program with the
// tiles it reads and writes (TraExecRankProgram); its tensors are those of
// Trainer.h (tokens, targets, rotary tables, weights, optimizer states, lr,
// step; loss, grad_norm and <input>_out). Rank r:
//
//  - reads only its tiles of the weights (from any checkpoint
//    rt::openTensorSource reads) and of the optimizer states (a
//    safetensors file; a state it does not hold starts at zero);
//  - cuts its tiles of each step's tokens and targets from the batch every
//    rank computes, and of the rotary tables;
//  - keeps its tiles of the weights and states between steps: a step's
//    output tile becomes the next step's input tile, moved between ranks
//    where the planner chose other tiles for the output (Redistribute.h);
//  - learns the loss and the gradient norm (every rank, so that all agree
//    on stopping);
//  - for a checkpoint, sends its tiles to rank 0, which assembles the whole
//    tensors.
//
// Host programs only (CPU plans, GPU plans emulated on CPUs). Needs the MPI
// runtime (runtime/mpi); no MLIR dependency.
//
//===----------------------------------------------------------------------===//

#ifndef TRA_ENGINE_RANKTRAINER_H
#define TRA_ENGINE_RANKTRAINER_H

#include "tra/Engine/TileLayout.h"
#include "tra/Engine/Trainer.h"
#include "tra/Exec/Library.h"
#include "tra/Runtime/Llama.h"
#include "tra/Runtime/Tensor.h"

#include <memory>
#include <string>
#include <vector>

namespace tra::engine {

class RankTrainer {
public:
  /// Loads the training step at `programPath` (before MPI starts): a
  /// distributed host program.
  static rt::Result<std::unique_ptr<RankTrainer>>
  load(const std::string &programPath);

  /// The number of ranks of the program, and a hash of its plan (equal on
  /// every rank of a sound job).
  int64_t numRanks() const;
  uint64_t fingerprint() const;

  /// Reads rank `rank`'s tiles of the weights from `weights` (a checkpoint
  /// stating the LLaMA parameters) and of the optimizer states from
  /// `states` (a safetensors file, or "" for all zeros), `stepsDone` steps
  /// into training; `threads` (if > 0) overrides the program's thread
  /// count. Errors name the file and tensor.
  rt::Status init(int rank, const std::string &weights,
                  const std::string &states, int64_t stepsDone,
                  int64_t threads);

  /// The model's parameters, the batch and the sequence length (after init).
  const rt::LlamaParams &params() const { return p; }
  int64_t batch() const { return batchSize; }
  int64_t seqLen() const { return sequence; }
  int64_t stepsDone() const { return done; }

  /// Runs one step on the whole batch's `tokens` and `targets` ([batch *
  /// seq] each, the same on every rank) at learning rate `lr`. Collective.
  /// A loss or norm that is not finite is an error on every rank (the
  /// step is not taken).
  rt::Result<TrainStepStats> step(const std::vector<int64_t> &tokens,
                                  const std::vector<int64_t> &targets,
                                  double lr);

  /// Collective: rank 0 receives the whole weights and optimizer states
  /// (the other ranks' outputs are left empty).
  rt::Status gather(rt::LlamaCheckpoint &weights,
                    std::vector<rt::NamedTensor> &states);

  /// The bytes of weights and states moved between ranks because a step's
  /// output tiles differ from its input tiles (all ranks together).
  int64_t relayoutBytes = 0;

private:
  RankTrainer() = default;
  /// A weight or optimizer state: this rank's input tile (`value`) and
  /// output tile (`latest`), and where every rank's tiles are.
  struct Slot {
    std::string name;
    bool isState = false;
    int64_t input = -1, output = -1; // the program's tensors
    Layout in, out;
    int64_t inSlot = -1, outSlot = -1; // this rank's buffers (-1: none)
    rt::HostTensor value, latest;
    /// Whether `value` holds the newest values (no step yet, or the output
    /// tiles equal the input tiles), else `latest` does.
    bool valueIsLatest = true;
  };
  /// The tile of an i64 batch tensor, the rotary tables or a scalar.
  struct Fed {
    int64_t slot = -1;
    Box box;
    rt::HostTensor tile;
  };
  rt::Status bind(const std::string &weights, const std::string &states,
                  int64_t threads);
  /// Every rank's copy of the scalar output `tensor` (loss, grad_norm).
  rt::Result<double> scalarOutput(int64_t tensor, int64_t slot);

  std::unique_ptr<exec::ProgramLibrary> library;
  int me = 0;
  rt::LlamaParams p;
  int64_t batchSize = 0, sequence = 0, done = 0;
  std::vector<Slot> slots;
  std::vector<Fed> tokens, targets, tables, rates, stepNumbers;
  int64_t lossTensor = -1, normTensor = -1, lossSlot = -1, normSlot = -1;
  std::vector<rt::HostTensor> outputs; // this rank's output tiles, by slot
  std::vector<void *> buffers;
};

} // namespace tra::engine

#endif // TRA_ENGINE_RANKTRAINER_H
