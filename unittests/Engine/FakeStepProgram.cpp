//===- FakeStepProgram.cpp - A hand-written LLaMA step library
//-------------===//
//
// A shared library with the descriptor a compiled LLaMA step program has
// (tra/Exec/ABI.h), for a tiny model (dim 4, 2 heads, 1 KV head, 1 layer,
// vocab 5, 8 positions), built once per step length (FAKE_SEQ tokens). Its
// `run` does arithmetic the test can predict, so the engine's binding and
// KV-cache handling are checked without the compiler:
//
//   k_cache_out = k_cache, then [pos + i, 0, 0] = tokens[i]
//   v_cache_out = v_cache, then [pos + i, 0, 1] = pos + i
//   logits[i][j] = tok_embeddings.weight[j][0]
//                  + sum over t <= pos + i of k_cache_out[t, 0, 0]
//                  + 100 * freqs_cos[pos + i][0]
//
// With FAKE_ONE_ROW the program takes `logits_row` (last input) and
// returns that row only (logits [1, vocab]), as buildLlamaModule's
// lastRowLogits programs do.
//
//===----------------------------------------------------------------------===//

#include "tra/Exec/ABI.h"

#include <cstdint>
#include <cstring>

#ifndef FAKE_SEQ
#error "FAKE_SEQ (tokens per step) must be defined"
#endif
// TRA_EXEC_CUDA: a "GPU" program, for the fake CUDA driver of unittests/Cuda
// (whose device memory is host memory).
#ifndef FAKE_DEVICE
#define FAKE_DEVICE TRA_EXEC_HOST
#endif
// TRA_EXEC_BF16: the program reads the embedding in bf16 (a checkpoint's
// 16-bit weight kept 16-bit).
#ifndef FAKE_WEIGHT_DTYPE
#define FAKE_WEIGHT_DTYPE TRA_EXEC_F32
#endif

namespace {
constexpr int64_t kSeq = FAKE_SEQ, kVocab = 5, kMaxSeq = 8, kDim = 4;
const int64_t tokensShape[] = {kSeq};
const int64_t tableShape[] = {kMaxSeq, 1};
const int64_t cacheShape[] = {kMaxSeq, 1, 2};
const int64_t embeddingShape[] = {kVocab, kDim};
#ifdef FAKE_ONE_ROW
constexpr int64_t kRows = 1, kInputs = 8;
#else
constexpr int64_t kRows = kSeq, kInputs = 7;
#endif
const int64_t logitsShape[] = {kRows, kVocab};

const TraExecTensorInfo inputs[] = {
    {"tokens", TRA_EXEC_I64, 1, tokensShape},
    {"pos", TRA_EXEC_I64, 0, nullptr},
    {"freqs_cos", TRA_EXEC_F32, 2, tableShape},
    {"freqs_sin", TRA_EXEC_F32, 2, tableShape},
    {"layers.0.k_cache", TRA_EXEC_F32, 3, cacheShape},
    {"layers.0.v_cache", TRA_EXEC_F32, 3, cacheShape},
#ifdef FAKE_WEIGHT_NAME
    {FAKE_WEIGHT_NAME, FAKE_WEIGHT_DTYPE, 2, embeddingShape},
#else
    {"tok_embeddings.weight", FAKE_WEIGHT_DTYPE, 2, embeddingShape},
#endif
#ifdef FAKE_ONE_ROW
    {"logits_row", TRA_EXEC_I64, 0, nullptr},
#endif
};
const TraExecTensorInfo outputs[] = {
    {"logits", TRA_EXEC_F32, 2, logitsShape},
    {"layers.0.k_cache_out", TRA_EXEC_F32, 3, cacheShape},
    {"layers.0.v_cache_out", TRA_EXEC_F32, 3, cacheShape},
};

} // namespace

extern "C" {
/// The weight buffer the last run read (a GPU model passes a device copy).
const void *fakeLastEmbedding = nullptr;
}

namespace {
/// Element `i` of the embedding, read in the program's dtype.
float embeddingAt(const void *embedding, int64_t i) {
  if (FAKE_WEIGHT_DTYPE == TRA_EXEC_BF16) {
    uint32_t bits = uint32_t(static_cast<const uint16_t *>(embedding)[i]) << 16;
    float value;
    std::memcpy(&value, &bits, sizeof value);
    return value;
  }
  return static_cast<const float *>(embedding)[i];
}

void run(void *const *buffers) {
  fakeLastEmbedding = buffers[6];
  const int64_t *tokens = static_cast<const int64_t *>(buffers[0]);
  int64_t pos = *static_cast<const int64_t *>(buffers[1]);
  const float *cosTable = static_cast<const float *>(buffers[2]);
  const float *kIn = static_cast<const float *>(buffers[4]);
  const float *vIn = static_cast<const float *>(buffers[5]);
  const void *embedding = buffers[6];
  float *logits = static_cast<float *>(buffers[kInputs]);
  float *kOut = static_cast<float *>(buffers[kInputs + 1]);
  float *vOut = static_cast<float *>(buffers[kInputs + 2]);
  int64_t firstRow = 0;
  if (kRows == 1 && kSeq > 1)
    firstRow = *static_cast<const int64_t *>(buffers[7]);
  const size_t cacheBytes = sizeof(float) * kMaxSeq * 2;
  std::memcpy(kOut, kIn, cacheBytes);
  std::memcpy(vOut, vIn, cacheBytes);
  for (int64_t i = 0; i < kSeq; ++i) {
    kOut[(pos + i) * 2] = float(tokens[i]);
    vOut[(pos + i) * 2 + 1] = float(pos + i);
  }
  for (int64_t i = firstRow; i < firstRow + kRows; ++i) {
    float sum = 0;
    for (int64_t t = 0; t <= pos + i; ++t)
      sum += kOut[t * 2];
    for (int64_t j = 0; j < kVocab; ++j)
      logits[(i - firstRow) * kVocab + j] =
          embeddingAt(embedding, j * kDim) + sum + 100.0f * cosTable[pos + i];
  }
}
} // namespace

extern "C" {
const TraExecProgram tra_exec_program = {
    TRA_EXEC_ABI_VERSION,   "forward", kInputs, inputs, 3, outputs, run,
    /*numThreads=*/1,
    /*numOps=*/0,           nullptr,
    /*numRanks=*/0,         nullptr,
    /*fingerprint=*/0,
    /*device=*/FAKE_DEVICE,
    /*hardware=*/"fake"};

int64_t fakeThreads = 0;
void tra_exec_set_num_threads(int64_t threads) { fakeThreads = threads; }
#ifndef FAKE_NO_PARALLEL_COSTS
void tra_exec_set_parallel_costs(double, double, double) {}
#endif
const char *tra_exec_take_check_failure(void) { return nullptr; }
}
