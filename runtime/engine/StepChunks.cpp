//===- StepChunks.cpp - A step of any length with fixed-length programs ---===//

#include "tra/Engine/StepChunks.h"

#include <algorithm>
#include <string>

using namespace tra;
using namespace tra::engine;

namespace {
std::string listLengths(const std::vector<int64_t> &lengths) {
  std::string s;
  for (size_t i = 0; i < lengths.size(); ++i)
    s += (i ? ", " : "") + std::to_string(lengths[i]);
  return s.empty() ? "none" : s;
}
} // namespace

rt::Result<std::vector<StepChunk>>
tra::engine::planStepChunks(const std::vector<int64_t> &programLengths,
                            int64_t maxSeqLen, int64_t pos, int64_t n) {
  std::vector<int64_t> lengths;
  for (int64_t seq : programLengths)
    if (seq >= 1 && seq <= maxSeqLen)
      lengths.push_back(seq);
  std::sort(lengths.begin(), lengths.end());
  lengths.erase(std::unique(lengths.begin(), lengths.end()), lengths.end());
  if (pos < 0 || n < 1 || n > maxSeqLen || pos > maxSeqLen - n)
    return rt::Error{"a step of " + std::to_string(n) + " tokens at position " +
                     std::to_string(pos) + " is outside the KV cache of " +
                     std::to_string(maxSeqLen) + " positions"};
  auto cannot = [&]() -> rt::Error {
    return rt::Error{"no step programs for " + std::to_string(n) +
                     " tokens at position " + std::to_string(pos) +
                     " (programs of " + listLengths(lengths) +
                     " tokens per step, a KV cache of " +
                     std::to_string(maxSeqLen) + " positions)"};
  };
  if (lengths.empty())
    return cannot();
  std::vector<StepChunk> chunks;
  int64_t at = pos, rest = n;
  while (rest > 0) {
    const int64_t longest = lengths.back();
    if (rest >= longest) {
      chunks.push_back({at, longest, longest});
      at += longest;
      rest -= longest;
      continue;
    }
    // Fewer tokens than the longest program: exactly, padded, or a shorter
    // program and then the rest.
    auto holds = std::lower_bound(lengths.begin(), lengths.end(), rest);
    if (*holds != rest && lengths.front() == 1 &&
        rest * kPrefillRowSpeedup < *holds) {
      for (int64_t i = 0; i < rest; ++i)
        chunks.push_back({at + i, 1, 1});
      break;
    }
    if (*holds == rest || at + *holds <= maxSeqLen) {
      chunks.push_back({at, rest, *holds});
      break;
    }
    if (holds == lengths.begin())
      return cannot();
    int64_t shorter = *std::prev(holds);
    chunks.push_back({at, shorter, shorter});
    at += shorter;
    rest -= shorter;
  }
  return chunks;
}

rt::Result<std::vector<StepChunk>>
tra::engine::planStepChunks(const std::vector<int64_t> &programLengths,
                            int64_t maxSeqLen, int64_t numTokens, int64_t pos,
                            int64_t n) {
  rt::Result<std::vector<StepChunk>> chunks =
      planStepChunks(programLengths, maxSeqLen, pos, n);
  if (!chunks)
    return chunks.error();
  // The cache bounds are checked (0 <= pos, 1 <= n, pos + n <= maxSeqLen,
  // without overflow), so pos + n cannot overflow here.
  if (pos + n > numTokens)
    return rt::Error{"a step of " + std::to_string(n) + " tokens at position " +
                     std::to_string(pos) + " has only " +
                     std::to_string(std::max<int64_t>(0, numTokens - pos)) +
                     " tokens"};
  return chunks;
}

int64_t tra::engine::prefillChunkLength(int64_t requested, int64_t maxSeqLen) {
  int64_t chunk = requested > 0 ? requested : kDefaultPrefillChunk;
  return std::max<int64_t>(1, std::min(chunk, maxSeqLen));
}

std::string tra::engine::describeStepProgram(int64_t seq) {
  return "@forward (" + std::to_string(seq) +
         (seq == 1 ? " token" : " tokens") + " per step)";
}
