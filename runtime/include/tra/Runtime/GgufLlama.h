//===- GgufLlama.h - LLaMA models in GGUF files -----------------*- C++ -*-===//
//
// A GGUF file (Gguf.h) of llama.cpp's "llama" architecture read as a LLaMA
// checkpoint: its hyper-parameters and its weights under Meta's names (its
// vocabulary: GgufTokenizer.h).
//
// Hyper-parameters (metadata; keys marked ? are optional):
//
//   general.architecture                  "llama" (anything else is refused)
//   llama.embedding_length                dim
//   llama.feed_forward_length             hidden_dim
//   llama.block_count                     n_layers
//   llama.attention.head_count            n_heads
//   llama.attention.head_count_kv ?       n_kv_heads (default n_heads)
//   llama.context_length                  max_seq_len
//   llama.attention.layer_norm_rms_epsilon  norm_eps
//   llama.rope.freq_base ?                rope_theta (default 10000)
//   llama.vocab_size ?, else the length of tokenizer.ggml.tokens, else the
//                                         rows of token_embd.weight
//
// Refused, by name, because tra's model does not compute them: a rotary
// dimension (llama.rope.dimension_count) other than the head size, RoPE
// scaling (llama.rope.scaling.type other than "none", or a rope_freqs.weight
// tensor), experts (llama.expert_count > 0).
//
// Tensors (GGUF name -> Meta name; the shapes must be those the parameters
// imply):
//
//   token_embd.weight        tok_embeddings.weight
//   blk.N.attn_norm.weight   layers.N.attention_norm.weight
//   blk.N.attn_q.weight      layers.N.attention.wq.weight   (also _k -> wk,
//                                                          _v -> wv)
//   blk.N.attn_output.weight layers.N.attention.wo.weight
//   blk.N.ffn_norm.weight    layers.N.ffn_norm.weight
//   blk.N.ffn_gate.weight    layers.N.feed_forward.w1.weight
//   blk.N.ffn_down.weight    layers.N.feed_forward.w2.weight
//   blk.N.ffn_up.weight      layers.N.feed_forward.w3.weight
//   output_norm.weight       norm.weight
//   output.weight            output.weight (absent: the classifier is the
//                            token embedding)
//
// Rotary layout: no row permutation. llama.cpp runs the "llama"
// architecture with LLAMA_ROPE_TYPE_NORM, which rotates adjacent pairs
// (x[2i], x[2i+1]) of each head, as Meta's model and tra's do; its
// converters store wq/wk in that layout. convert-llama2c-to-ggml copies
// llama2.c's (Meta-layout) matrices unchanged, and convert_hf_to_gguf.py
// applies LlamaModel.permute to HF's q_proj/k_proj, which undoes the
// per-head permutation HF's conversion applied for its rotate_half
// convention. (An HF directory read directly, TensorSource's "hf-llama",
// needs that permutation undone on reading; a GGUF file does not.)
//
// Element types: F32, F16 and BF16 weights keep their dtype (a caller may
// widen them); Q8_0 weights are dequantised to f32 when read as tiles, and
// `TensorSource::readQ8_0` returns them as stored (i8 values and f16
// scales), which the one-process engine keeps (about the file's bytes).
//
//===----------------------------------------------------------------------===//

#ifndef TRA_RUNTIME_GGUFLLAMA_H
#define TRA_RUNTIME_GGUFLLAMA_H

#include "tra/Runtime/Error.h"
#include "tra/Runtime/Gguf.h"
#include "tra/Runtime/Llama.h"
#include "tra/Runtime/TensorSource.h"

#include <memory>
#include <string>

namespace tra::rt {

/// Returns the LLaMA hyper-parameters of `file` (see the file comment),
/// checked against its tensors.
Result<LlamaParams> ggufLlamaParams(const GgufFile &file);

/// Returns the GGUF name of the Meta-named weight `metaName`
/// ("layers.3.attention.wq.weight" -> "blk.3.attn_q.weight"), or "" for a
/// name that is not a LLaMA weight.
std::string ggufLlamaTensorName(const std::string &metaName);

/// Opens the GGUF file at `path` as a TensorSource of format "gguf": the
/// LLaMA weights under Meta's names, read on demand, with the model's
/// parameters.
Result<std::unique_ptr<TensorSource>>
openGgufLlamaSource(const std::string &path);

} // namespace tra::rt

#endif // TRA_RUNTIME_GGUFLLAMA_H
