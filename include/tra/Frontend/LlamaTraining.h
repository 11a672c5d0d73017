//===- LlamaTraining.h - LLaMA training loss in tra -------------*- C++ -*-===//
//
// The LLaMA architecture of Llama.h as a training loss: a batch of whole
// sequences (causal attention within each, no KV cache) and the mean
// next-token cross-entropy. tra-autodiff turns it into the gradient program.
//
//===----------------------------------------------------------------------===//

#ifndef TRA_FRONTEND_LLAMATRAINING_H
#define TRA_FRONTEND_LLAMATRAINING_H

#include "tra/Runtime/Llama.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace mlir {
namespace tra {

/// Builds a module holding `@loss`, the mean cross-entropy of predicting
/// `targets` from `tokens` over `batch` sequences of `seqLen` tokens
/// (positions 0 .. seqLen-1, seqLen <= max_seq_len):
///
///   @loss(tokens, targets: tensor<B x S x i64>,
///         freqs_cos, freqs_sin: tensor<T x HD/2 x f32>,
///         <weights in llamaWeightShapes order, Meta names, f32>)
///     -> (loss: tensor<f32>)
///
/// Weights are marked `tra.wrt`, so `tra-autodiff` differentiates with
/// respect to every weight by default. The rotary tables are those of
/// @forward (Llama.h); the loss reads their first seqLen rows.
OwningOpRef<ModuleOp>
buildLlamaTrainingModule(MLIRContext *context,
                         const ::tra::rt::LlamaParams &params, int64_t batch,
                         int64_t seqLen);

} // namespace tra
} // namespace mlir

#endif // TRA_FRONTEND_LLAMATRAINING_H
