//===- LocalModel.h - A LLaMA model run in this process ---------*- C++ -*-===//
//
// The engine of a LLaMA model on one device: step programs compiled by tra
// into shared libraries (one per step length: 1 token for decoding, a
// prefill chunk, e.g. 128 tokens, that prompts of any length run in, see
// StepChunks.h) are loaded into this process and run on the weights where the
// checkpoint holds them. The model owns the state between steps: the rotary
// tables and the KV caches, updated in place where the program allows its cache
// outputs to be its inputs' buffers (compiled programs do:
// tra-alias-entry-outputs), else double-buffered (a step reads one set and
// writes the other, which the program returns; then the sets swap). tra-llama
// and the Python package run one-device generations through it; compiling the
// programs is the caller's business (the compiler's library cache). No MLIR
// dependency.
//
// With an accelerator (runtime/cuda's, tra/Cuda/Accelerator.h) the model runs
// step programs compiled for a GPU: the weights they read and the rotary
// tables are copied to device memory once, the KV caches live there, and a
// step copies only its tokens and position to the device and its logits
// back.
//
//===----------------------------------------------------------------------===//

#ifndef TRA_ENGINE_LOCALMODEL_H
#define TRA_ENGINE_LOCALMODEL_H

#include "tra/Engine/DeviceMemory.h"
#include "tra/Engine/StepChunks.h"
#include "tra/Exec/Driver.h"
#include "tra/Exec/Library.h"
#include "tra/Runtime/Error.h"
#include "tra/Runtime/Llama.h"

#include <array>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace tra::engine {

class LocalModel {
public:
  /// Prepares a model over `checkpoint`'s weights, which must outlive it:
  /// they are used in place (brought into memory now rather than page by
  /// page in the first step) by programs that read them in their checkpoint
  /// dtype (f32, or 16-bit: built with those LlamaWeightDTypes); a program
  /// built for f32 weights reads a 16-bit one from an f32 copy made once.
  /// Its programs run on `threads` threads (at least 1).
  LocalModel(const rt::LlamaCheckpoint &checkpoint, int64_t threads,
             const exec::Accelerator *accelerator = nullptr);
  ~LocalModel();
  LocalModel(const LocalModel &) = delete;
  LocalModel &operator=(const LocalModel &) = delete;

  /// Adds the step program in `library` (a one-device @forward): binds each
  /// of its inputs and outputs by name (StepTensors.h), checking element
  /// type and shape against the model. A model may hold, for one step
  /// length, a program that returns every row of logits and one that
  /// returns the last row only (input `logits_row`). Errors name the
  /// library's file.
  rt::Status addProgram(std::unique_ptr<exec::ProgramLibrary> library);
  /// Whether a program runs steps of `seq` tokens.
  bool hasProgram(int64_t seq) const;
  /// Whether a program runs steps of `seq` tokens returning the last row
  /// of logits only (`oneRow`) or every row.
  bool hasProgram(int64_t seq, bool oneRow) const {
    return programs.count({seq, oneRow}) != 0;
  }

  /// The tokens per step of the programs added so far.
  std::vector<int64_t> programLengths() const;

  /// Runs one step over tokens[pos, pos + n) (the caches hold the positions
  /// before pos) with the programs added, in chunks (StepChunks.h): the
  /// program for n tokens if there is one, else the prefill chunk's and,
  /// for a rest shorter than it, one padded run or (a rest under
  /// kPrefillRowSpeedup of the chunk) one-token steps.
  /// `logits` receives every row (n x vocab) if allRows, else the last one
  /// (then each chunk runs the program of its length that computes the last row
  /// only, where there is one).
  rt::Status step(const std::vector<int64_t> &tokens, int64_t pos, int64_t n,
                  std::vector<double> &logits);

  /// For each step program that fetched weights from the memory tiers of
  /// the node (a plan that streams them): "@forward (N tokens per step):
  /// fetched ... per run (R runs)".
  std::vector<std::string> tierFetchReport() const;

  /// Clears the KV caches (a new, unrelated generation).
  void resetCaches();

  const rt::LlamaParams &params() const { return p; }
  /// step() returns every row of logits (else the last one only). Programs
  /// that compute the last row only (buildLlamaModule's lastRowLogits)
  /// cannot give every row: step() fails with allRows.
  bool allRows = true;

private:
  struct Program {
    int64_t seq = 0;
    std::unique_ptr<exec::ProgramLibrary> library;
    std::vector<int64_t> tokens;
    int64_t pos = 0;
    /// A one-row program (input `logits_row`) returns the logits of the
    /// row `logitsRow` only.
    bool oneRow = false;
    int64_t logitsRow = 0;
    std::vector<float> logits;
    /// GPU programs: the device copies of `tokens`, `pos`, `logitsRow` and
    /// `logits`.
    void *deviceTokens = nullptr, *devicePos = nullptr,
         *deviceLogitsRow = nullptr, *deviceLogits = nullptr;
    std::vector<void *> buffers;
    /// (buffer slot, cache index 2 * layer + (k ? 0 : 1)).
    std::vector<std::pair<size_t, int64_t>> cacheInputs, cacheOutputs;
    /// Every cache output may be its input's buffer: the step updates the
    /// current set in place (no copy, no swap).
    bool cachesInPlace = false;
  };

  rt::Status bind(Program &program);
  /// Makes KV-cache set `set` (zeros), on the device for a GPU model, if it
  /// is not there yet.
  rt::Status allocateCacheSet(int set);
  /// Runs `program` over `chunk` of `tokens`; appends the logits rows
  /// [firstRow, chunk.count) to `logits`.
  rt::Status runProgram(Program &program, const std::vector<int64_t> &tokens,
                        const StepChunk &chunk, int64_t firstRow,
                        std::vector<double> &logits);
  /// GPU: the rotary tables and both cache sets on the device (once).
  rt::Status prepareDevice();
  /// Host: weight `name` in its dtype, or (`widen`) as f32, converted once.
  const void *hostWeight(const rt::HostTensor &weight, const std::string &name,
                         bool widen);
  /// GPU: the device copy of weight `name` in its dtype or (`widen`) as f32
  /// (made on first use).
  rt::Result<void *> deviceWeight(const rt::HostTensor &weight,
                                  const std::string &name, bool widen);
  /// GPU: pins the `bytes` at `host`, a weight the programs fetch from the
  /// host-memory tier, so that the fetches copy directly and overlap the
  /// kernels (once per buffer; a failure leaves it pageable).
  void pinHostWeight(void *host, size_t bytes);

  rt::LlamaParams p;
  int64_t threads = 1;
  std::vector<float> cosTable, sinTable;
  std::map<std::string, const rt::HostTensor *> weights;
  std::map<std::string, std::vector<float>> converted;
  /// Weights brought into memory (every one a program reads from device
  /// memory or the host tier; not those it streams from disk).
  std::set<std::string> prefaulted;
  /// Two sets of 2 * nLayers caches; set `parity` holds the current ones.
  std::array<std::vector<std::vector<float>>, 2> caches;
  bool parity = false;
  /// By (tokens per step, whether the program computes the last row of
  /// logits only).
  std::map<std::pair<int64_t, bool>, Program> programs;

  const exec::Accelerator *accelerator = nullptr;
  bool devicePrepared = false;
  void *deviceCos = nullptr, *deviceSin = nullptr;
  std::array<std::vector<void *>, 2> deviceCaches;
  std::map<std::pair<std::string, bool>, void *> deviceWeights;
  /// GPU: the host-tier weight buffers pinHostWeight tried, and whether it
  /// pinned them (unpinned with the model).
  std::map<void *, bool> pinnedWeights;
  /// GPU: every device buffer above, freed with the model.
  DeviceMemory device;
};

} // namespace tra::engine

#endif // TRA_ENGINE_LOCALMODEL_H
