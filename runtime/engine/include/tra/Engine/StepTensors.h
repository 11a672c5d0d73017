//===- StepTensors.h - The tensors of a LLaMA step program ------*- C++ -*-===//
//
// A step of a LLaMA model, as the front end builds it (@forward of
// lib/Frontend/Llama.cpp), reads and writes tensors named by their role:
//
//   inputs   tokens i64[seq], pos i64[], freqs_cos / freqs_sin
//            f32[max_seq_len, head_dim / 2], layers.L.k_cache /
//            layers.L.v_cache f32[max_seq_len, n_kv_heads, head_dim], and
//            every weight under its checkpoint name (f32, or f16/bf16
//            where the program keeps the checkpoint's 16-bit weights);
//   outputs  logits f32[seq, vocab], layers.L.k_cache_out /
//            layers.L.v_cache_out.
//
// The engines bind a compiled program's buffers by these names, so the
// convention is stated once, here. No MLIR dependency.
//
//===----------------------------------------------------------------------===//

#ifndef TRA_ENGINE_STEPTENSORS_H
#define TRA_ENGINE_STEPTENSORS_H

#include "tra/Runtime/Llama.h"

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace tra::engine {

/// What one argument or result of a step program holds.
enum class StepTensorKind {
  Tokens,
  Position,
  /// The row whose logits a one-row step returns (`logits_row`).
  LogitsRow,
  RopeCos,
  RopeSin,
  /// A KV cache; `cache` is its index (2 * layer, + 1 for values).
  Cache,
  Logits,
  /// Anything else: an input is a weight, an output is unknown.
  Other,
};

struct StepTensorRole {
  StepTensorKind kind = StepTensorKind::Other;
  /// For StepTensorKind::Cache: 2 * layer + (key ? 0 : 1).
  int64_t cache = -1;
};

/// The role of the input named `name` in a model of `layers` layers.
StepTensorRole classifyStepInput(std::string_view name, int64_t layers);
/// The role of the output named `name` (caches end in "_out").
StepTensorRole classifyStepOutput(std::string_view name, int64_t layers);

/// The shape of one KV cache: [max_seq_len, n_kv_heads, head_dim].
std::vector<int64_t> cacheShape(const rt::LlamaParams &p);
/// The shape of each rotary table: [max_seq_len, head_dim / 2].
std::vector<int64_t> ropeTableShape(const rt::LlamaParams &p);

/// The ABI element type (TraExecDType) of a weight of `dtype`: f32, f16 or
/// bf16, else -1.
int64_t weightABIType(rt::DType dtype);
/// The runtime dtype of a weight the program reads as ABI type `abi`, if it
/// is one a weight may have (f32, f16, bf16).
std::optional<rt::DType> weightDType(int64_t abi);

} // namespace tra::engine

#endif // TRA_ENGINE_STEPTENSORS_H
