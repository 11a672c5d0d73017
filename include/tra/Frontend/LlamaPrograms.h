//===- LlamaPrograms.h - Compiled step programs of a LLaMA model -*- C++ -*-=//
//
// The compiler's half of running a LLaMA model: @forward of the model over
// `seq` tokens per step (buildLlamaModule) compiled into a shared library
// through the library cache, ready for the engine (runtime/engine): loaded
// for its LocalModel on one device, or planned for several devices into a
// library of every rank's program that the ranks of one MPI job load
// (RankModel). tra-llama and the Python package share it.
//
//===----------------------------------------------------------------------===//

#ifndef TRA_FRONTEND_LLAMAPROGRAMS_H
#define TRA_FRONTEND_LLAMAPROGRAMS_H

#include "tra/Autodiff/TrainStep.h"
#include "tra/Frontend/Llama.h"
#include "tra/Hardware/Hardware.h"
#include "tra/Runtime/Llama.h"
#include "tra/Target/LibraryCache.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/Error.h"

namespace mlir {
namespace tra {

/// Builds @forward of `params` over `seq` tokens per step and compiles it
/// for one device with `threads` threads (or loads it from
/// `cacheDirectory`, none if empty; `keyExtra`, e.g. the hardware
/// description, is part of the cache key). Cache notes go to `notes`. With
/// `cuda` the step is a GPU program (for a LocalModel with an accelerator).
/// `weightDTypes` are the weights' element types; with `lastRowLogits` the
/// step returns the logits of one row (buildLlamaModule). With `hardware`
/// (one device), the step is planned for it first: a device without the
/// memory for the weights, caches and activations is the planner's error,
/// and weights it keeps in a memory tier are noted.
llvm::Expected<CompiledProgram>
compileLlamaStep(MLIRContext &context, const ::tra::rt::LlamaParams &params,
                 int64_t seq, int64_t threads, StringRef cacheDirectory,
                 StringRef keyExtra, llvm::raw_ostream &notes,
                 bool cuda = false, const LlamaWeightDTypes &weightDTypes = {},
                 bool lastRowLogits = false,
                 const ::tra::hw::HardwareDescription *hardware = nullptr);

/// Builds @forward of `params` over `seq` tokens per step, plans it for
/// `hardware` with the planning pipeline (plan::planModule) and finds its
/// distributed library in `cacheDirectory` or compiles it there (into
/// `scratchDirectory` without a usable cache; see
/// findOrCompileDistributedLibrary). Every rank runs `threads` threads. With
/// `cuda` every rank is a GPU program (one GPU each, moves through NCCL).
/// `weightDTypes` are the weights' element types; with `lastRowLogits` the
/// step returns the logits of one row (buildLlamaModule).
llvm::Expected<CachedLibrary> compileLlamaDistributedStep(
    MLIRContext &context, const ::tra::rt::LlamaParams &params, int64_t seq,
    const ::tra::hw::HardwareDescription &hardware, int64_t threads,
    StringRef cacheDirectory, StringRef scratchDirectory,
    llvm::raw_ostream &notes, bool cuda = false,
    const LlamaWeightDTypes &weightDTypes = {}, bool lastRowLogits = false);

/// Builds the training loss of `params` over `batch` sequences of `seq`
/// tokens (buildLlamaTrainingModule), its whole training step with
/// `optimizer` (buildTrainStep: every weight is a parameter) as
/// @train_step, plans it for the one device of `hardware` (its memory
/// holds the weights, optimizer states and the activations the backward
/// pass keeps, or some of those are recomputed: plan::planForOneDevice;
/// `notes` gets the plan's line, `explain` the EXPLAIN report), and
/// compiles it with `threads` threads (or loads it from `cacheDirectory`;
/// the hardware is part of the cache key). The runtime's engine::Trainer
/// runs it.
llvm::Expected<CompiledProgram> compileLlamaTrainStep(
    MLIRContext &context, const ::tra::rt::LlamaParams &params, int64_t batch,
    int64_t seq, const OptimizerOptions &optimizer,
    const ::tra::hw::HardwareDescription &hardware, int64_t threads,
    StringRef cacheDirectory, llvm::raw_ostream &notes,
    llvm::raw_ostream *explain = nullptr);

/// The training step of compileLlamaTrainStep planned for `hardware` with
/// the planning pipeline and compiled (or found in `cacheDirectory`) into a
/// distributed library of every rank's host program, each on `threads`
/// threads (the runtime's engine::RankTrainer runs a rank). `notes` gets
/// the cache notes and one line with the plan's estimated step time and
/// largest per-device memory; `explain`, when given, the EXPLAIN report.
llvm::Expected<CachedLibrary> compileLlamaDistributedTrainStep(
    MLIRContext &context, const ::tra::rt::LlamaParams &params, int64_t batch,
    int64_t seq, const OptimizerOptions &optimizer,
    const ::tra::hw::HardwareDescription &hardware, int64_t threads,
    StringRef cacheDirectory, StringRef scratchDirectory,
    llvm::raw_ostream &notes, llvm::raw_ostream *explain = nullptr);

} // namespace tra
} // namespace mlir

#endif // TRA_FRONTEND_LLAMAPROGRAMS_H
