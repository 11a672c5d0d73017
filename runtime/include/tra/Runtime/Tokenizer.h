//===- Tokenizer.h - SentencePiece BPE vocabularies -------------*- C++ -*-===//
//
// The LLaMA SentencePiece BPE vocabulary, read from llama2.c's tokenizer.bin
// format (int32 max_token_length, then per token float32 score, int32 length,
// bytes) or from a GGUF file.
// Encoding follows SentencePiece's BPE as LLaMA uses it: a dummy space prefix,
// one piece per UTF-8 character (bytes <0xXX> as fallback), then greedy merges
// of the adjacent pair with the best score.
//
//===----------------------------------------------------------------------===//

#ifndef TRA_RUNTIME_TOKENIZER_H
#define TRA_RUNTIME_TOKENIZER_H

#include "tra/Runtime/Error.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace tra::rt {

class Tokenizer {
public:
  /// Reads a llama2.c tokenizer.bin, or the vocabulary of a GGUF file
  /// (recognised by its magic; see readGgufTokenizer in GgufLlama.h); every
  /// error names the file.
  static Result<Tokenizer> open(const std::string &path);

  /// Builds a vocabulary from its pieces (a space as ' ') and their merge
  /// scores. Pieces marked in `special` (control and unknown pieces; may be
  /// empty: none) are never produced by encoding and decode to "". Needs the
  /// 3 + 256 pieces of LLaMA's layout (<unk>, BOS, EOS, the bytes); messages
  /// name `source`.
  static Result<Tokenizer> fromPieces(std::vector<std::string> pieces,
                                      std::vector<float> scores,
                                      const std::string &source,
                                      std::vector<bool> special = {});

  /// Number of pieces.
  int64_t size() const { return static_cast<int64_t>(pieces.size()); }
  /// The piece of token `id` as stored ("<0x0A>", " Hello", ...).
  const std::string &piece(int64_t id) const { return pieces[id]; }

  /// Token ids of `text`, with BOS (id 1) first when `bos` is set.
  std::vector<int64_t> encode(std::string_view text, bool bos = true) const;

  /// The text of token `id` following token `previous`: byte pieces become
  /// their byte, and the leading space of the first piece after BOS is
  /// dropped, as SentencePiece decoding does.
  std::string decode(int64_t previous, int64_t id) const;

private:
  std::vector<std::string> pieces;
  std::vector<float> scores;
  std::vector<bool> special;
  std::unordered_map<std::string, int64_t> ids;
};

} // namespace tra::rt

#endif // TRA_RUNTIME_TOKENIZER_H
