//===- GgufTokenizer.cpp - The vocabulary of a GGUF file ------------------===//

#include "tra/Runtime/GgufTokenizer.h"

#include <cstdio>

using namespace tra::rt;

/// llama.cpp's token types (tokenizer.ggml.token_type).
enum TokenType : int64_t {
  kUnknown = 2,
  kControl = 3,
  kUnused = 5,
};

Result<Tokenizer> tra::rt::readGgufTokenizer(const GgufFile &file) {
  const std::string &path = file.path();
  if (!file.find("tokenizer.ggml.model"))
    return fileError(path, "holds no vocabulary (no metadata key "
                           "'tokenizer.ggml.model')");
  Result<std::string_view> model = file.getString("tokenizer.ggml.model");
  if (!model)
    return model.error();
  if (*model != "llama")
    return fileError(path, "tokenizer.ggml.model " + quoteName(*model) +
                               " is not supported: tra reads SentencePiece "
                               "vocabularies ('llama')");
  Result<std::vector<std::string_view>> tokens =
      file.getStringArray("tokenizer.ggml.tokens");
  if (!tokens)
    return tokens.error();
  Result<std::vector<float>> scores = file.getF32Array("tokenizer.ggml.scores");
  if (!scores)
    return scores.error();
  // Control, unknown and unused pieces (Tokenizer::fromPieces checks the
  // lengths).
  std::vector<bool> special;
  if (file.find("tokenizer.ggml.token_type")) {
    Result<std::vector<int64_t>> types =
        file.getIntArray("tokenizer.ggml.token_type");
    if (!types)
      return types.error();
    for (int64_t type : *types)
      special.push_back(type == kUnknown || type == kControl ||
                        type == kUnused);
  }
  // tra's encoder and decoder assume LLaMA's layout.
  for (auto [key, id] :
       {std::pair<const char *, uint64_t>{"tokenizer.ggml.bos_token_id", 1},
        {"tokenizer.ggml.eos_token_id", 2}}) {
    if (!file.find(key))
      continue;
    Result<uint64_t> value = file.getUnsigned(key);
    if (!value)
      return value.error();
    if (*value != id)
      return fileError(path, std::string(key) + " is " +
                                 std::to_string(*value) +
                                 "; tra's SentencePiece encoder needs BOS 1 "
                                 "and EOS 2 (LLaMA's layout)");
  }
  std::vector<std::string> pieces;
  pieces.reserve(tokens->size());
  for (std::string_view token : *tokens) {
    // SentencePiece writes a space as U+2581 (LOWER ONE EIGHTH BLOCK).
    std::string piece;
    piece.reserve(token.size());
    for (size_t i = 0; i < token.size(); ++i) {
      if (token.compare(i, 3, "\xE2\x96\x81") == 0) {
        piece += ' ';
        i += 2;
      } else {
        piece += token[i];
      }
    }
    pieces.push_back(std::move(piece));
  }
  for (int b = 0; b < 256 && size_t(3 + b) < pieces.size(); ++b) {
    char expected[8];
    std::snprintf(expected, sizeof expected, "<0x%02X>", b);
    if (pieces[3 + b] != expected)
      return fileError(path, "tokenizer.ggml.tokens: token " +
                                 std::to_string(3 + b) + " is " +
                                 quoteName(pieces[3 + b]) +
                                 ", not the byte piece " + expected +
                                 "; tra's SentencePiece encoder needs the 256 "
                                 "byte pieces at ids 3-258 (LLaMA's layout)");
  }
  return Tokenizer::fromPieces(std::move(pieces), std::move(*scores), path,
                               std::move(special));
}

bool tra::rt::hasGgufVocabulary(const std::string &path) {
  if (!isGgufFile(path))
    return false;
  Result<GgufFile> file = GgufFile::open(path);
  if (!file)
    return false;
  Result<std::string_view> model = file->getString("tokenizer.ggml.model");
  return model && *model == "llama";
}
