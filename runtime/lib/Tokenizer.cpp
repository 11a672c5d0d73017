//===- Tokenizer.cpp - SentencePiece BPE vocabularies ---------------------===//

#include "tra/Runtime/Tokenizer.h"
#include "tra/Runtime/File.h"
#include "tra/Runtime/GgufTokenizer.h"

#include <cstring>

using namespace tra::rt;

Result<Tokenizer> Tokenizer::fromPieces(std::vector<std::string> pieces,
                                        std::vector<float> scores,
                                        const std::string &source,
                                        std::vector<bool> special) {
  if (scores.size() != pieces.size())
    return fileError(source, std::to_string(pieces.size()) + " pieces but " +
                                 std::to_string(scores.size()) + " scores");
  if (!special.empty() && special.size() != pieces.size())
    return fileError(source, std::to_string(pieces.size()) + " pieces but " +
                                 std::to_string(special.size()) +
                                 " piece types");
  if (pieces.size() < 3 + 256)
    return fileError(source, "vocabulary of " + std::to_string(pieces.size()) +
                                 " pieces lacks the 256 byte pieces");
  Tokenizer tok;
  special.resize(pieces.size(), false);
  for (size_t id = 0; id < pieces.size(); ++id)
    if (!special[id])
      tok.ids.emplace(pieces[id], int64_t(id));
  tok.pieces = std::move(pieces);
  tok.scores = std::move(scores);
  tok.special = std::move(special);
  return tok;
}

Result<Tokenizer> Tokenizer::open(const std::string &path) {
  if (isGgufFile(path)) {
    Result<GgufFile> gguf = GgufFile::open(path);
    if (!gguf)
      return gguf.error();
    return readGgufTokenizer(*gguf);
  }
  auto file = MappedFile::open(path);
  if (!file)
    return file.error();
  const uint8_t *data = (*file)->data();
  size_t size = (*file)->size(), off = 0;
  auto read = [&](void *out, size_t n) {
    if (off + n > size)
      return false;
    std::memcpy(out, data + off, n);
    off += n;
    return true;
  };
  int32_t maxLength = 0;
  if (!read(&maxLength, 4) || maxLength <= 0)
    return fileError(path, "not a llama2.c tokenizer: bad max_token_length");
  std::vector<std::string> pieces;
  std::vector<float> scores;
  while (off < size) {
    float score;
    int32_t length;
    if (!read(&score, 4) || !read(&length, 4))
      return fileError(path, "truncated entry for token " +
                                 std::to_string(pieces.size()));
    if (length < 0 || length > maxLength || off + size_t(length) > size)
      return fileError(path, "token " + std::to_string(pieces.size()) +
                                 " has invalid length " +
                                 std::to_string(length));
    pieces.emplace_back(reinterpret_cast<const char *>(data + off), length);
    off += length;
    scores.push_back(score);
  }
  return fromPieces(std::move(pieces), std::move(scores), path);
}

std::vector<int64_t> Tokenizer::encode(std::string_view text, bool bos) const {
  std::vector<int64_t> out;
  if (bos)
    out.push_back(1);
  if (text.empty())
    return out;
  // SentencePiece adds a dummy prefix space.
  if (auto it = ids.find(" "); it != ids.end())
    out.push_back(it->second);
  // One piece per UTF-8 character, falling back to byte pieces (id = 3 + b).
  for (size_t i = 0; i < text.size();) {
    size_t n = 1;
    unsigned char c = static_cast<unsigned char>(text[i]);
    if ((c & 0xE0) == 0xC0)
      n = 2;
    else if ((c & 0xF0) == 0xE0)
      n = 3;
    else if ((c & 0xF8) == 0xF0)
      n = 4;
    if (i + n > text.size())
      n = 1;
    std::string ch(text.substr(i, n));
    if (auto it = ids.find(ch); it != ids.end()) {
      out.push_back(it->second);
    } else {
      for (unsigned char b : ch)
        out.push_back(3 + int64_t(b));
    }
    i += n;
  }
  // Merge the best-scoring adjacent pair until no pair is in the vocabulary.
  size_t first = bos ? 1 : 0;
  while (true) {
    float best = -1e30f;
    int64_t bestId = -1;
    size_t bestAt = 0;
    for (size_t i = first; i + 1 < out.size(); ++i) {
      auto it = ids.find(pieces[out[i]] + pieces[out[i + 1]]);
      if (it != ids.end() && scores[it->second] > best) {
        best = scores[it->second];
        bestId = it->second;
        bestAt = i;
      }
    }
    if (bestId < 0)
      break;
    out[bestAt] = bestId;
    out.erase(out.begin() + bestAt + 1);
  }
  return out;
}

std::string Tokenizer::decode(int64_t previous, int64_t id) const {
  // BOS and EOS are control pieces: they have no text.
  if (id < 0 || id >= size() || id == 1 || id == 2 || special[id])
    return "";
  std::string piece = pieces[id];
  if (previous == 1 && !piece.empty() && piece[0] == ' ')
    piece.erase(0, 1);
  // Byte pieces "<0xXX>".
  if (piece.size() == 6 && piece.compare(0, 3, "<0x") == 0 && piece[5] == '>') {
    char *end = nullptr;
    long byte = std::strtol(piece.c_str() + 3, &end, 16);
    if (end == piece.c_str() + 5)
      return std::string(1, static_cast<char>(byte));
  }
  return piece;
}
