//===- GgufTokenizer.h - The vocabulary of a GGUF file ----------*- C++ -*-===//
//
// The SentencePiece vocabulary a GGUF file (Gguf.h) of a LLaMA model holds,
// read as an rt::Tokenizer. `Tokenizer::open` reads it when given a GGUF
// file.
//
//===----------------------------------------------------------------------===//

#ifndef TRA_RUNTIME_GGUFTOKENIZER_H
#define TRA_RUNTIME_GGUFTOKENIZER_H

#include "tra/Runtime/Error.h"
#include "tra/Runtime/Gguf.h"
#include "tra/Runtime/Tokenizer.h"

#include <string>

namespace tra::rt {

/// Reads the SentencePiece vocabulary of `file`: tokenizer.ggml.model
/// "llama", tokenizer.ggml.tokens (pieces, with U+2581 for a space),
/// tokenizer.ggml.scores and, if present, tokenizer.ggml.token_type (control,
/// unknown and unused pieces are never produced by encoding). tra's encoder
/// needs LLaMA's layout: BOS 1, EOS 2, the byte pieces <0x00>..<0xFF> at ids
/// 3..258; anything else is refused with what differs.
Result<Tokenizer> readGgufTokenizer(const GgufFile &file);

/// Returns true if `path` is a GGUF file stating a SentencePiece vocabulary
/// (tokenizer.ggml.model "llama"), whether or not that vocabulary is valid.
bool hasGgufVocabulary(const std::string &path);

} // namespace tra::rt

#endif // TRA_RUNTIME_GGUFTOKENIZER_H
