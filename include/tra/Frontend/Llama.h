//===- Llama.h - LLaMA model front end --------------------------*- C++ -*-===//
//
// Builds the LLaMA architecture (LLaMA 1/2: RMSNorm, rotary embeddings of
// adjacent pairs, grouped-query attention with a KV cache, SwiGLU FFN) as
// model-level tra IR from its hyper-parameters.
//
//===----------------------------------------------------------------------===//

#ifndef TRA_FRONTEND_LLAMA_H
#define TRA_FRONTEND_LLAMA_H

#include "tra/Runtime/Llama.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <map>
#include <string>
#include <vector>

namespace mlir {
namespace tra {

/// Builds a module holding `@forward`, one step of the model over
/// `seqLen` tokens at positions pos .. pos+seqLen-1:
///
///   @forward(tokens: tensor<S x i64>, pos: tensor<i64>,
///            freqs_cos, freqs_sin: tensor<T x HD/2 x f32>,
///            layers.L.k_cache, layers.L.v_cache: tensor<T x NKV x HD x f32>,
///            <weights in llamaWeightShapes order, Meta names>)
///     -> (logits: tensor<S x V x f32>,
///         layers.L.k_cache_out, layers.L.v_cache_out)
///
/// Every argument and result carries its name in `tra.name`.
///
/// With `lastRowLogits` (and seqLen > 1) the step computes the logits of
/// one row only, the one a generator samples from: @forward takes
/// `logits_row: tensor<i64>` after `pos` (the row, 0 <= row < seqLen: the
/// last real token of a padded prefill chunk) and returns
/// `logits: tensor<1 x V x f32>`. The classifier is the largest single
/// product of a small model (V x D per row): a 128-token prefill chunk
/// multiplies it once instead of 128 times.
///
/// `weightDTypes` gives a weight's element type by name: f32 (also for a
/// name it does not hold), f16, bf16 or i8. A 16-bit weight stays 16-bit: a
/// projection by it rounds its activations to the weight's type and
/// multiplies in mixed precision (16-bit inputs, f32 accumulation and
/// result, as a GPU's tensor cores do); an embedding row or a norm weight
/// is widened exactly to f32 where it is used. An i8 weight (a matrix
/// whose rows are whole blocks of kQ8BlockValues) is quantised as
/// llama.cpp's Q8_0: @forward also takes its f16 block scales, named
/// `q8ScalesName(weight)`, after all weights (in the weights' order); a
/// projection multiplies the f32 activations by values and scales inside
/// one einsum ("sBJ,eBJ,eB->se"), an embedding row is dequantised where it
/// is gathered. The rest of the model computes in f32.
using LlamaWeightDTypes = std::map<std::string, ::tra::rt::DType>;
OwningOpRef<ModuleOp>
buildLlamaModule(MLIRContext *context, const ::tra::rt::LlamaParams &params,
                 int64_t seqLen, const LlamaWeightDTypes &weightDTypes = {},
                 bool lastRowLogits = false);

} // namespace tra
} // namespace mlir

#endif // TRA_FRONTEND_LLAMA_H
