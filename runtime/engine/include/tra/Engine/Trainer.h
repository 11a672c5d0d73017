//===- Trainer.h - Running a compiled LLaMA training step -------*- C++ -*-===//
//
// The runtime half of training: a compiled training step (the train_step of
// the LLaMA training loss, tra/Frontend/LlamaPrograms.h) loaded in process,
// the parameters and optimizer states it updates held between steps, the
// learning-rate schedule, the batches of a token stream, and checkpoints.
// No MLIR dependency: tra-llama train and any other client drive it.
//
// The step program's tensors, by name:
//   inputs   tokens, targets i64[batch, seq], freqs_cos / freqs_sin
//            f32[max_seq_len, head_dim / 2], every weight (f32, Meta
//            names), every optimizer state (any other f32 input: starts at
//            zero), lr f32[], step f32[] (AdamW: 1 for the first step);
//   outputs  loss f32[], grad_norm f32[], <input>_out for every weight and
//            state.
//
//===----------------------------------------------------------------------===//

#ifndef TRA_ENGINE_TRAINER_H
#define TRA_ENGINE_TRAINER_H

#include "tra/Exec/Library.h"
#include "tra/Runtime/Error.h"
#include "tra/Runtime/Llama.h"
#include "tra/Runtime/Safetensors.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tra::engine {

/// Linear warm-up to `peak` over `warmup` steps, then cosine decay to `min`
/// at step `total` (steps are 1-based).
struct LearningRateSchedule {
  double peak = 3e-4;
  double min = 0.0;
  int64_t warmup = 0;
  int64_t total = 1;
  double at(int64_t step) const;
};

/// Cuts a token stream into training batches: batch i holds `batch`
/// consecutive windows of seq + 1 tokens (inputs and the next-token
/// targets), continuing where batch i - 1 ended and wrapping around at the
/// end of the stream.
class TokenBatches {
public:
  /// Fails (naming `what`) if the stream is shorter than one window, or
  /// holds an id outside [0, vocab).
  static rt::Result<TokenBatches> create(std::vector<int64_t> stream,
                                         int64_t vocab, int64_t batch,
                                         int64_t seq, const std::string &what);
  /// The tokens and targets [batch * seq] of batch `index` (0-based).
  void get(int64_t index, std::vector<int64_t> &tokens,
           std::vector<int64_t> &targets) const;
  int64_t streamLength() const { return int64_t(stream.size()); }
  const std::vector<int64_t> &ids() const { return stream; }

private:
  std::vector<int64_t> stream;
  int64_t batch = 0, seq = 0;
};

/// The tensors of a compiled training step by role: indices into the
/// program's inputs and outputs (-1: absent; only `step` is optional).
struct TrainStepTensors {
  int64_t tokens = -1, targets = -1, cos = -1, sin = -1, lr = -1, step = -1;
  int64_t loss = -1, gradNorm = -1;
  int64_t batch = 0, seq = 0;
  /// A weight or optimizer state: its input and its `<name>_out` output.
  struct Parameter {
    std::string name;
    int64_t input = -1, output = -1;
    /// An optimizer state (not one of the model's weights).
    bool isState = false;
  };
  std::vector<Parameter> parameters;

  /// Reads the roles of `program`'s tensors (`file` names it in errors) for
  /// the model `params`: tokens and targets i64 [batch, seq], the rotary
  /// tables f32 [max_seq_len, head_dim / 2], lr and step f32 scalars, every
  /// other input f32 with an output `<name>_out`, every model weight among
  /// them, outputs loss and grad_norm.
  static rt::Result<TrainStepTensors> read(const TraExecProgram &program,
                                           const std::string &file,
                                           const rt::LlamaParams &params);
};

/// The token ids of a 1-D int32 or int64 .npy file (errors name it).
rt::Result<std::vector<int64_t>> readTokenIds(const std::string &path);

/// What one step reports.
struct TrainStepStats {
  double loss = 0, gradNorm = 0, lr = 0;
};

/// A compiled training step with its parameters and optimizer states.
class Trainer {
public:
  /// Binds `program` to the model `params`, the initial `weights` (whole
  /// tensors by Meta name, converted to f32) and `states` (optimizer states
  /// by name; a state the program reads that is not given starts at zero),
  /// `stepsDone` steps into training. Errors name a missing weight, a
  /// tensor of the wrong shape, or a program that is not a training step.
  static rt::Result<std::unique_ptr<Trainer>>
  create(std::unique_ptr<exec::ProgramLibrary> program,
         const rt::LlamaParams &params,
         const std::vector<std::pair<std::string, rt::HostTensor>> &weights,
         const std::vector<rt::NamedTensor> &states, int64_t stepsDone);

  int64_t batch() const { return batchSize; }
  int64_t seqLen() const { return sequence; }
  int64_t stepsDone() const { return done; }

  /// Runs one step on `tokens` and `targets` ([batch * seq] each) at
  /// learning rate `lr`; the parameters and states advance. A loss or norm
  /// that is not finite is an error (the step is not taken).
  rt::Result<TrainStepStats> step(const std::vector<int64_t> &tokens,
                                  const std::vector<int64_t> &targets,
                                  double lr);

  /// The current weights, as a checkpoint of `params`.
  rt::LlamaCheckpoint weights() const;
  /// The current optimizer states.
  std::vector<rt::NamedTensor> states() const;

private:
  Trainer() = default;
  struct Slot {
    std::string name;
    rt::HostTensor value; // the input buffer
    int64_t input = -1, output = -1;
    bool isState = false;
  };
  std::unique_ptr<exec::ProgramLibrary> program;
  rt::LlamaParams params;
  int64_t batchSize = 0, sequence = 0, done = 0;
  std::vector<Slot> slots;
  rt::HostTensor tokens, targets, cosTable, sinTable, lr, stepNumber;
  int64_t tokensIn = -1, targetsIn = -1, cosIn = -1, sinIn = -1, lrIn = -1,
          stepIn = -1, lossOut = -1, normOut = -1;
  std::vector<rt::HostTensor> outputs;
};

/// Writes a training checkpoint into the new directory `dir` (which must not
/// exist): `model.bin` (llama2.c), `model.safetensors` (Meta names) and
/// `optimizer.safetensors` (the states; metadata "step" and `metadata`).
/// Everything is written into a temporary directory beside it that is
/// renamed into place at the end, so an interrupted write leaves no
/// directory under the name; then `dir`'s parent gets a file `latest`
/// naming it (written atomically).
rt::Status writeTrainingCheckpoint(const std::string &dir,
                                   const rt::LlamaCheckpoint &weights,
                                   const std::vector<rt::NamedTensor> &states,
                                   int64_t step,
                                   const rt::SafetensorsMetadata &metadata);

/// A training checkpoint read back.
struct TrainingCheckpoint {
  rt::LlamaCheckpoint weights;
  std::vector<rt::NamedTensor> states;
  int64_t step = 0;
  rt::SafetensorsMetadata metadata;
};

/// Reads the checkpoint directory `path`, or, when `path` holds a file
/// `latest`, the checkpoint it names. Errors name the file.
rt::Result<TrainingCheckpoint> readTrainingCheckpoint(const std::string &path);

} // namespace tra::engine

#endif // TRA_ENGINE_TRAINER_H
