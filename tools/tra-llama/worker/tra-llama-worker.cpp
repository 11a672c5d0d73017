//===- tra-llama-worker.cpp - One MPI rank of a distributed tra-llama run -===//
//
//   mpirun -np N tra-llama-worker --checkpoint PATH --program LIB.so
//       [--program PREFILL.so] --steps N --prompt-ids 1,2,3 [--max-seq-len N]
//       [--temperature T --top-p P --seed S] [--threads N] [--print-ids]
//       [--tokenizer TOK.bin] [--logits-out FILE.npy] [--bench-json FILE]
//       [--compile-seconds S --compiled-now] [--step-timeout S] [--warmup]
//
// `tra-llama run` starts this program under mpirun (tra/Engine/MpiJob.h
// writes the command line), once for the whole generation, when its
// hardware file has several devices. Each rank is a tra::engine::RankModel
// (tra/Engine/RankModel.h): it loads the step programs, reads only its
// tiles of the weights and keeps its tiles of the KV caches; the steps run
// in the engine's generation loop (tra/Engine/Generate.h), rank 0 choosing
// each token and sharing it with the others, and printing the ids or text
// and the timings.
//
// GPU plans: each rank opens its GPU (the local rank's, or TRA_CUDA_DEVICE)
// and connects it to the others' (NCCL) before it reads a weight; where that
// fails, the lowest failing rank says why in one line and the job ends.
//
// Any failure aborts the whole job with a message naming the rank; a rank
// that dies makes mpirun end the job, non-zero, naming the rank.
//
//===----------------------------------------------------------------------===//

#include "tra/Engine/Generate.h"
#include "tra/Engine/MpiJob.h"
#include "tra/Engine/RankModel.h"
#include "tra/Engine/Watchdog.h"
#include "tra/Runtime/Mpi.h"
#include "tra/Runtime/MpiCommunicator.h"
#include "tra/Runtime/Tokenizer.h"

#ifdef TRA_LLAMA_WORKER_HAVE_CUDA
#include "tra/Cuda/Accelerator.h"
#endif

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <thread>

using namespace tra;

namespace {

constexpr const char *kTool = "tra-llama-worker";

[[noreturn]] void fatal(const std::string &message) {
  std::string text = std::string(kTool) + ": " + message;
  tra_mpi_fatal(text.c_str());
  std::abort();
}

/// Test hooks: TRA_LLAMA_WORKER_KILL=RANK:POS makes rank RANK kill itself
/// (SIGKILL, no clean-up, as a crash would) when it reaches position POS;
/// TRA_LLAMA_WORKER_HANG=RANK:POS makes it stop making progress there (sleep
/// forever, alive). Returns the RANK:POS of the variable `name`, if set.
std::optional<std::pair<int, int64_t>> testHook(const char *name) {
  const char *spec = std::getenv(name);
  if (!spec)
    return std::nullopt;
  int rank = 0;
  long long pos = 0;
  if (std::sscanf(spec, "%d:%lld", &rank, &pos) != 2)
    return std::nullopt;
  return std::pair{rank, int64_t(pos)};
}

/// The lowest rank whose `ok` is false, or -1 (collective).
int firstFailingRank(int rank, bool ok) {
  int64_t value = ok ? INT64_MAX : rank;
  tra_mpi_allreduce(&value, 1, TRA_MPI_I64, TRA_MPI_MIN, nullptr, 0);
  return value == INT64_MAX ? -1 : int(value);
}

/// GPU plans: opens this rank's GPU and connects it with the others'.
/// Returns the accelerator, or null after the lowest failing rank printed
/// why (every rank returns null then).
const exec::Accelerator *connectGpus(int rank, int64_t ranks) {
  const exec::Accelerator *gpu = nullptr;
  rt::Status status =
      rt::Error{"this tra-llama-worker was built without the CUDA runtime "
                "(runtime/cuda); --emulate-on-cpu runs the plan with CPU code"};
#ifdef TRA_LLAMA_WORKER_HAVE_CUDA
  gpu = &cuda::getAccelerator();
  status = gpu->initialize();
  if (!status)
    status = rt::Error{"running on the GPUs needs an NVIDIA GPU with a CUDA "
                       "13 driver: " +
                       status.message() +
                       "; --emulate-on-cpu runs the plan with CPU code"};
#endif
  auto report = [&](const std::string &what) {
    if (int first = firstFailingRank(rank, bool(status)); first >= 0) {
      if (rank == first)
        std::fprintf(stderr, "%s: error: rank %d: %s%s\n", kTool, rank,
                     what.c_str(), status.message().c_str());
      return false;
    }
    return true;
  };
  if (!report(""))
    return nullptr;
  status = gpu->connect(mpi::getCommunicator(), int(ranks));
  if (!report("connecting the GPUs of " + std::to_string(ranks) + " ranks: "))
    return nullptr;
  return gpu;
}

} // namespace

int main(int argc, char **argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  // Failures before MPI starts (a damaged library) are the same on every
  // rank: rank 0 reports them.
  auto early = [](const std::string &message) {
    return engine::reportEarlyFailure(kTool, message);
  };
  rt::Result<engine::WorkerOptions> options =
      engine::WorkerOptions::parse(argc, argv);
  if (!options)
    return early(options.message());
  rt::Result<std::unique_ptr<engine::RankModel>> loaded =
      engine::RankModel::load(options->programs);
  if (!loaded)
    return early(loaded.message());
  engine::RankModel &model = **loaded;

  tra_mpi_init(&argc, &argv, model.numRanks(), model.fingerprint(), kTool);
  int rank = tra_mpi_rank();
  const exec::Accelerator *gpu = nullptr;
  if (model.onGpu()) {
    gpu = connectGpus(rank, model.numRanks());
    if (!gpu) {
      tra_mpi_finalize(0);
      return 1;
    }
    if (rank == 0)
      std::fprintf(stderr, "tra-llama: %lld ranks, rank 0 on %s\n",
                   static_cast<long long>(model.numRanks()),
                   gpu->describe().c_str());
  }
  if (rt::Status status = model.init(rank, options->checkpoint,
                                     options->maxSeqLen, options->threads, gpu);
      !status)
    fatal(status.message());
  const rt::LlamaParams &p = model.params();

  engine::GenerationConfig config = options->generation;
  config.vocabSize = p.vocabSize;
  // The prompt runs in steps of the longest program (a prefill chunk,
  // padded where the prompt is shorter), unless there is only the decoding
  // program.
  std::vector<int64_t> lengths = model.programLengths();
  int64_t longest = *std::max_element(lengths.begin(), lengths.end());
  config.oneStepPrefill = longest > 1 || config.prompt.size() == 1;
  config.prefillChunk = longest;
  model.allRows = !config.logitsOut.empty();
  config.how = "compiled, " + std::to_string(model.numRanks()) +
               " MPI ranks in one job" + (gpu ? ", one GPU each" : "") +
               (model.sixteenBitWeights() ? ", 16-bit weights" : "");
  config.engine = "distributed";
  for (int64_t id : config.prompt)
    if (id >= p.vocabSize)
      fatal("prompt token " + std::to_string(id) + " is not in [0, " +
            std::to_string(p.vocabSize) + ")");
  if (config.steps > p.maxSeqLen)
    fatal("--steps " + std::to_string(config.steps) +
          " exceeds the KV-cache length " + std::to_string(p.maxSeqLen));
  std::optional<rt::Tokenizer> tokenizer;
  if (rank == 0 && !options->tokenizer.empty()) {
    rt::Result<rt::Tokenizer> tok = rt::Tokenizer::open(options->tokenizer);
    if (!tok)
      fatal(tok.message());
    tokenizer = std::move(*tok);
    config.tokenizer = &*tokenizer;
  }

  std::optional<std::pair<int, int64_t>> kill =
      testHook("TRA_LLAMA_WORKER_KILL");
  std::optional<std::pair<int, int64_t>> hang =
      testHook("TRA_LLAMA_WORKER_HANG");
  engine::Watchdog watchdog(options->stepTimeout, rank, kTool);
  auto step = [&](const std::vector<int64_t> &tokens, int64_t pos, int64_t n,
                  std::vector<double> &logits) {
    watchdog.stepStarts(pos);
    if (kill && kill->first == rank && pos >= kill->second)
      std::raise(SIGKILL);
    while (hang && hang->first == rank && pos >= hang->second)
      std::this_thread::sleep_for(std::chrono::seconds(1));
    return model.step(tokens, pos, n, logits);
  };
  // Every rank learns rank 0's choice: a sum in which the others add 0.
  auto share = [](int64_t &token) {
    if (tra_mpi_rank() != 0)
      token = 0;
    tra_mpi_allreduce(&token, 1, TRA_MPI_I64, TRA_MPI_SUM, nullptr, 0);
  };
  if (rt::Status status = engine::generate(config, step, share, rank == 0);
      !status)
    fatal(status.message());
  watchdog.disarm();
  for (const std::string &line : model.tierFetchReport())
    std::fprintf(stderr, "tra-llama: rank %d: %s\n", rank, line.c_str());
  if (rank == 0 && model.cacheRelayouts > 0)
    std::fprintf(stderr,
                 "tra-llama: %lld KV caches moved to the next step program's "
                 "tiles (%lld bytes between ranks)\n",
                 static_cast<long long>(model.cacheRelayouts),
                 static_cast<long long>(model.cacheBytesMoved));
  if (gpu)
    gpu->disconnect();
  tra_mpi_finalize(0);
  return 0;
}
