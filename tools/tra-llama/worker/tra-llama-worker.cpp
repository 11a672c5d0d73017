//===- tra-llama-worker.cpp - One MPI rank of a distributed tra-llama run -===//
//
//   mpirun -np N tra-llama-worker --checkpoint PATH --program LIB.so
//       [--program PREFILL.so] --steps N --prompt-ids 1,2,3 [--max-seq-len N]
//       [--temperature T --top-p P --seed S] [--threads N] [--print-ids]
//       [--tokenizer TOK.bin] [--logits-out FILE.npy] [--bench-json FILE]
//       [--compile-seconds S --compiled-now]
//
// `tra-llama run` starts this program under mpirun, once for the whole
// generation, when its hardware file has several devices. Every --program
// is a shared library holding one step of @forward (decoding: 1 token;
// prefill: the prompt's length) compiled for N ranks, each rank's program
// listed in the descriptor with the tiles it reads and writes
// (TraExecRankProgram). Rank r of the job:
//
//  - loads the libraries (their MPI calls bind to this process's MPI
//    runtime) and checks with every other rank that all run the same plans;
//  - reads only its tiles of the weights from the checkpoint (any format
//    rt::openTensorSource reads; a tra-split checkpoint from this rank's
//    own file) and of the rotary tables;
//  - keeps its tiles of the KV caches in memory across steps: a step reads
//    one set and writes the other, which becomes the next step's input —
//    unchanged when the next program's input tiles are the previous
//    program's output tiles, else moved between ranks with MPI;
//  - runs the steps of tra-llama's generation loop (Generate.h): the logits
//    tiles are gathered on rank 0, which chooses the next token, shares it
//    with every rank, and prints the ids or text and the timings.
//
// Any failure aborts the whole job with a message naming the rank; a rank
// that dies makes mpirun end the job, non-zero, naming the rank.
//
//===----------------------------------------------------------------------===//

#include "../Generate.h"

#include "tra/Exec/Library.h"
#include "tra/Runtime/Llama.h"
#include "tra/Runtime/Mpi.h"
#include "tra/Runtime/TensorSource.h"
#include "tra/Runtime/Tokenizer.h"

#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

using namespace tra;
using tra::exec::ProgramLibrary;

namespace {

constexpr const char *kTool = "tra-llama-worker";

/// The command line (written by tra-llama).
struct Options {
  std::string checkpoint;
  std::vector<std::string> programs;
  int64_t steps = 0;
  std::vector<int64_t> prompt;
  int64_t maxSeqLen = 0;
  double temperature = 0.0, topP = 0.9;
  /// End the job when no step starts for this long (seconds; 0: never).
  double stepTimeout = 0.0;
  uint64_t seed = 0;
  int64_t threads = 0;
  bool printIds = false;
  bool warmup = false;
  std::string tokenizer, logitsOut, benchJson;
  double compileSeconds = 0.0;
  bool compiledNow = false;
};

rt::Result<Options> parseOptions(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    if (flag == "--print-ids") {
      o.printIds = true;
      continue;
    }
    if (flag == "--compiled-now") {
      o.compiledNow = true;
      continue;
    }
    if (flag == "--warmup") {
      o.warmup = true;
      continue;
    }
    if (i + 1 >= argc)
      return rt::Error{flag + " needs a value"};
    std::string value = argv[++i];
    char *end = nullptr;
    auto integer = [&]() -> std::optional<long long> {
      long long v = std::strtoll(value.c_str(), &end, 10);
      if (value.empty() || *end)
        return std::nullopt;
      return v;
    };
    auto number = [&]() -> std::optional<double> {
      double v = std::strtod(value.c_str(), &end);
      if (value.empty() || *end)
        return std::nullopt;
      return v;
    };
    std::optional<double> parsed = 0.0;
    if (flag == "--checkpoint") {
      o.checkpoint = value;
    } else if (flag == "--program") {
      o.programs.push_back(value);
    } else if (flag == "--tokenizer") {
      o.tokenizer = value;
    } else if (flag == "--logits-out") {
      o.logitsOut = value;
    } else if (flag == "--bench-json") {
      o.benchJson = value;
    } else if (flag == "--prompt-ids") {
      for (size_t start = 0; start <= value.size();) {
        size_t comma = std::min(value.find(',', start), value.size());
        std::string part = value.substr(start, comma - start);
        long long id = std::strtoll(part.c_str(), &end, 10);
        if (part.empty() || *end || id < 0)
          return rt::Error{"--prompt-ids " + value + ": not token ids"};
        o.prompt.push_back(id);
        start = comma + 1;
      }
    } else if (flag == "--steps" || flag == "--max-seq-len" ||
               flag == "--threads" || flag == "--seed") {
      std::optional<long long> v = integer();
      if (!v || *v < 0)
        return rt::Error{flag + " " + value + ": expected a number >= 0"};
      if (flag == "--steps")
        o.steps = *v;
      else if (flag == "--max-seq-len")
        o.maxSeqLen = *v;
      else if (flag == "--threads")
        o.threads = *v;
      else
        o.seed = uint64_t(std::strtoull(value.c_str(), nullptr, 10));
    } else if (flag == "--temperature" || flag == "--top-p" ||
               flag == "--compile-seconds" || flag == "--step-timeout") {
      parsed = number();
      if (!parsed || (flag == "--step-timeout" && *parsed < 0))
        return rt::Error{flag + " " + value + ": expected a number"};
      (flag == "--temperature"    ? o.temperature
       : flag == "--top-p"        ? o.topP
       : flag == "--step-timeout" ? o.stepTimeout
                                  : o.compileSeconds) = *parsed;
    } else {
      return rt::Error{"unknown option '" + flag + "'"};
    }
  }
  if (o.checkpoint.empty() || o.programs.empty() || o.prompt.empty() ||
      o.steps < int64_t(o.prompt.size()))
    return rt::Error{"needs --checkpoint, --program, --prompt-ids and "
                     "--steps (at least the prompt's length); tra-llama run "
                     "starts this program"};
  return o;
}

/// A tile: where it starts in the whole tensor and its extents.
struct Box {
  std::vector<int64_t> offsets, sizes;
  bool operator==(const Box &other) const {
    return offsets == other.offsets && sizes == other.sizes;
  }
  int64_t volume() const {
    int64_t n = 1;
    for (int64_t s : sizes)
      n *= s;
    return n;
  }
};

/// Where the tiles of one tensor are: at most one per rank; for outputs,
/// `owner` marks the lowest rank holding each distinct tile.
struct Layout {
  std::vector<std::optional<Box>> tiles;
  std::vector<bool> owner;
  bool sameTiles(const Layout &other) const { return tiles == other.tiles; }
};

/// Returns the intersection of `a` and `b`, if not empty.
std::optional<Box> intersect(const Box &a, const Box &b) {
  Box r;
  for (size_t d = 0; d < a.sizes.size(); ++d) {
    int64_t lo = std::max(a.offsets[d], b.offsets[d]);
    int64_t hi = std::min(a.offsets[d] + a.sizes[d], b.offsets[d] + b.sizes[d]);
    if (hi <= lo)
      return std::nullopt;
    r.offsets.push_back(lo);
    r.sizes.push_back(hi - lo);
  }
  return r;
}

/// `box`'s offsets relative to the tile `within`.
std::vector<int64_t> relative(const Box &box, const Box &within) {
  std::vector<int64_t> offsets = box.offsets;
  for (size_t d = 0; d < offsets.size(); ++d)
    offsets[d] -= within.offsets[d];
  return offsets;
}

[[noreturn]] void fatal(const std::string &message) {
  std::string text = std::string(kTool) + ": " + message;
  tra_mpi_fatal(text.c_str());
  std::abort();
}

/// Moves a tensor held in the output layout `from` (this rank's tile:
/// `mine`) into the layout `to` and returns this rank's tile of it (empty if
/// it holds none). Collective: every rank calls it with the same layouts.
/// Each region of a destination tile comes from the destination rank itself
/// when it holds a copy, else from the tile's owner. Adds the bytes that
/// change rank (on all ranks together) to `movedBytes`.
rt::HostTensor redistribute(rt::DType dtype, const Layout &from,
                            const rt::HostTensor &mine,
                            const std::vector<std::optional<Box>> &to, int me,
                            int64_t &movedBytes) {
  struct Move {
    int source, dest;
    Box region;
  };
  std::vector<Move> moves;
  int ranks = int(to.size());
  for (int d = 0; d < ranks; ++d) {
    if (!to[d])
      continue;
    int64_t covered = 0;
    for (int s = 0; s < ranks; ++s) {
      if (!from.tiles[s] || !from.owner[s])
        continue;
      std::optional<Box> region = intersect(*from.tiles[s], *to[d]);
      if (!region)
        continue;
      int source = from.tiles[d] && *from.tiles[d] == *from.tiles[s] ? d : s;
      covered += region->volume();
      if (source != d)
        movedBytes += region->volume() * int64_t(rt::dtypeSize(dtype));
      moves.push_back({source, d, *region});
    }
    if (covered != to[d]->volume())
      fatal("internal error: the tiles of a KV cache do not cover rank " +
            std::to_string(d) + "'s tile of the next step");
  }
  rt::HostTensor result;
  if (to[me])
    result = rt::HostTensor::zeros(dtype, to[me]->sizes);
  std::vector<std::pair<size_t, rt::HostTensor>> received;
  std::vector<rt::HostTensor> sent;
  for (size_t k = 0; k < moves.size(); ++k) {
    const Move &m = moves[k];
    int tag = 20000 + int(k % 10000);
    if (m.dest == me && m.source == me) {
      rt::HostTensor part = rt::HostTensor::zeros(dtype, m.region.sizes);
      rt::copyTile(dtype, mine.shape(), mine.data(),
                   relative(m.region, *from.tiles[me]), m.region.sizes,
                   part.mutableData());
      rt::insertTile(dtype, result.shape(), result.mutableData(),
                     relative(m.region, *to[me]), m.region.sizes, part.data());
    } else if (m.dest == me) {
      received.emplace_back(k, rt::HostTensor::zeros(dtype, m.region.sizes));
      rt::HostTensor &part = received.back().second;
      tra_mpi_irecv(part.mutableData(), int64_t(part.byteSize()), m.source,
                    tag);
    } else if (m.source == me) {
      sent.push_back(rt::HostTensor::zeros(dtype, m.region.sizes));
      rt::HostTensor &part = sent.back();
      rt::copyTile(dtype, mine.shape(), mine.data(),
                   relative(m.region, *from.tiles[me]), m.region.sizes,
                   part.mutableData());
      tra_mpi_isend(part.data(), int64_t(part.byteSize()), m.dest, tag);
    }
  }
  tra_mpi_wait_all();
  for (auto &[k, part] : received)
    rt::insertTile(dtype, result.shape(), result.mutableData(),
                   relative(moves[k].region, *to[me]), moves[k].region.sizes,
                   part.data());
  return result;
}

/// The KV caches of the model: `2 * layers` tensors, "layers.L.k_cache"
/// (index 2L) and "layers.L.v_cache" (2L + 1); results add "_out".
std::optional<int64_t> cacheIndex(std::string name, const std::string &suffix,
                                  int64_t layers) {
  if (name.rfind("layers.", 0) != 0 || name.size() < suffix.size() ||
      name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
    return std::nullopt;
  name = name.substr(7, name.size() - 7 - suffix.size());
  size_t dot = name.find('.');
  if (dot == std::string::npos)
    return std::nullopt;
  std::string layer = name.substr(0, dot), kind = name.substr(dot + 1);
  char *end = nullptr;
  long long l = std::strtoll(layer.c_str(), &end, 10);
  if (layer.empty() || *end || l < 0 || l >= layers ||
      (kind != "k_cache" && kind != "v_cache"))
    return std::nullopt;
  return 2 * l + (kind == "k_cache" ? 0 : 1);
}

/// This rank's part of one step program (a step length).
struct Step {
  std::unique_ptr<ProgramLibrary> library;
  const TraExecRankProgram *mine = nullptr;
  int64_t seq = 0;
  std::vector<void *> buffers;
  /// The tokens tile (slot, its box in the [seq] tokens).
  std::optional<std::pair<size_t, Box>> tokens;
  std::vector<size_t> posSlots;
  /// KV caches: per cache, the layouts of the input and output tiles and
  /// this rank's slots (if it holds a tile).
  std::vector<Layout> cacheIn, cacheOut;
  std::vector<std::optional<size_t>> cacheInSlot, cacheOutSlot;
  /// The logits tiles and this rank's slot.
  Layout logits;
  std::optional<size_t> logitsSlot;
  std::vector<rt::HostTensor> ownBuffers;
};

/// The rank's state of a distributed model.
class RankModel {
public:
  explicit RankModel(const Options &options) : options(options) {}

  /// Loads the step programs (before MPI starts); returns "" or an error.
  std::string load() {
    for (const std::string &path : options.programs) {
      rt::Result<std::unique_ptr<ProgramLibrary>> library =
          ProgramLibrary::open(path);
      if (!library)
        return library.message();
      const TraExecProgram &p = (*library)->program();
      if (p.numRanks <= 0)
        return path + ": not a distributed program";
      if (!steps.empty() && p.numRanks != numRanks)
        return path + ": a program of " + std::to_string(p.numRanks) +
               " ranks, the others have " + std::to_string(numRanks);
      numRanks = p.numRanks;
      fingerprint = fingerprint * 1000003u ^ uint64_t(p.fingerprint);
      Step step;
      step.library = std::move(*library);
      steps.push_back(std::move(step));
    }
    return "";
  }

  /// Reads this rank's tiles; returns "" or an error.
  std::string init(int rank) {
    me = rank;
    rt::Result<std::unique_ptr<rt::TensorSource>> opened =
        rt::openTensorSource(options.checkpoint);
    if (!opened)
      return opened.message();
    source = std::move(*opened);
    if (!source->llamaParams())
      return options.checkpoint + ": does not state the LLaMA model's "
                                  "parameters";
    p = *source->llamaParams();
    if (options.maxSeqLen > 0)
      p.maxSeqLen = std::min(p.maxSeqLen, options.maxSeqLen);
    rt::computeRopeTables(p, cosTable, sinTable);
    for (Step &step : steps)
      if (std::string e = bind(step); !e.empty())
        return e;
    caches.resize(size_t(2 * p.nLayers));
    return "";
  }

  int64_t numRanks = 0;
  uint64_t fingerprint = 0;
  /// KV caches moved from one step program's layout to another's, and the
  /// bytes that changed rank (all ranks together).
  int64_t cacheRelayouts = 0, cacheBytesMoved = 0;
  const rt::LlamaParams &params() const { return p; }
  bool hasStep(int64_t seq) const {
    for (const Step &s : steps)
      if (s.seq == seq)
        return true;
    return false;
  }

  /// Runs one step over tokens[pos, pos + n); rank 0 receives the logits.
  std::string run(const std::vector<int64_t> &tokens, int64_t pos, int64_t n,
                  std::vector<double> &logits) {
    Step *step = nullptr;
    for (Step &s : steps)
      if (s.seq == n)
        step = &s;
    if (!step)
      return "internal error: no program for " + std::to_string(n) +
             " tokens per step";
    if (pos < 0 || pos + n > p.maxSeqLen)
      return "position " + std::to_string(pos) + " out of range";
    if (step->tokens) {
      auto &[slot, box] = *step->tokens;
      int64_t *dst = static_cast<int64_t *>(step->buffers[slot]);
      for (int64_t i = 0; i < box.sizes[0]; ++i)
        dst[i] = tokens[pos + box.offsets[0] + i];
    }
    for (size_t slot : step->posSlots)
      *static_cast<int64_t *>(step->buffers[slot]) = pos;
    // The caches: this step's input tiles from the previous step's output.
    std::vector<rt::HostTensor> inputs(caches.size());
    for (size_t c = 0; c < caches.size(); ++c) {
      Cache &cache = caches[c];
      const std::optional<Box> &myIn = step->cacheIn[c].tiles[me];
      if (!cache.layout)
        inputs[c] = myIn ? rt::HostTensor::zeros(rt::DType::F32, myIn->sizes)
                         : rt::HostTensor();
      else if (cache.layout->sameTiles(step->cacheIn[c]))
        inputs[c] = std::move(cache.tile);
      else {
        inputs[c] = redistribute(rt::DType::F32, *cache.layout, cache.tile,
                                 step->cacheIn[c].tiles, me, cacheBytesMoved);
        ++cacheRelayouts;
      }
      if (step->cacheInSlot[c])
        step->buffers[*step->cacheInSlot[c]] = inputs[c].mutableData();
      const std::optional<Box> &myOut = step->cacheOut[c].tiles[me];
      if (myOut && cache.spare.shape() != myOut->sizes)
        cache.spare = rt::HostTensor::zeros(rt::DType::F32, myOut->sizes);
      if (step->cacheOutSlot[c])
        step->buffers[*step->cacheOutSlot[c]] = cache.spare.mutableData();
    }
    step->mine->run(step->buffers.data());
    for (size_t c = 0; c < caches.size(); ++c) {
      Cache &cache = caches[c];
      cache.tile = std::move(cache.spare);
      cache.spare = std::move(inputs[c]);
      cache.layout = &step->cacheOut[c];
    }
    // Rank 0 gathers the logits.
    std::vector<std::optional<Box>> whole(static_cast<size_t>(numRanks));
    whole[0] = Box{{0, 0}, {n, p.vocabSize}};
    rt::HostTensor mine;
    if (step->logitsSlot)
      mine = rt::HostTensor::view(
          rt::DType::F32, step->logits.tiles[me]->sizes,
          static_cast<const uint8_t *>(step->buffers[*step->logitsSlot]),
          nullptr);
    int64_t gathered = 0;
    rt::HostTensor all =
        redistribute(rt::DType::F32, step->logits, mine, whole, me, gathered);
    if (me == 0) {
      logits.resize(size_t(all.numElements()));
      const float *data = reinterpret_cast<const float *>(all.data());
      for (size_t i = 0; i < logits.size(); ++i)
        logits[i] = data[i];
    }
    return "";
  }

private:
  /// The tiles of tensor `tensor` over the ranks, from the descriptor.
  std::string layoutOf(const TraExecProgram &program, int64_t tensor,
                       bool output, Layout &layout) {
    const TraExecTensorInfo &info =
        (output ? program.outputs : program.inputs)[tensor];
    layout.tiles.assign(size_t(numRanks), std::nullopt);
    layout.owner.assign(size_t(numRanks), false);
    for (int64_t r = 0; r < numRanks; ++r) {
      const TraExecRankProgram &rank = program.ranks[r];
      const TraExecTile *tiles = output ? rank.outputs : rank.inputs;
      int64_t count = output ? rank.numOutputs : rank.numInputs;
      for (int64_t i = 0; i < count; ++i) {
        if (tiles[i].tensor != tensor)
          continue;
        if (layout.tiles[r])
          return std::string("rank ") + std::to_string(r) +
                 " holds several tiles of '" + info.name + "' (not supported)";
        layout.tiles[r] = Box{
            std::vector<int64_t>(tiles[i].offsets,
                                 tiles[i].offsets + info.rank),
            std::vector<int64_t>(tiles[i].shape, tiles[i].shape + info.rank)};
        layout.owner[r] = tiles[i].owner != 0;
      }
    }
    return "";
  }

  /// Prepares `step`'s buffers for this rank: reads the weight tiles, cuts
  /// the rotary tables, allocates the rest.
  std::string bind(Step &step) {
    const TraExecProgram &program = step.library->program();
    const std::string &path = step.library->path();
    step.mine = &program.ranks[me];
    auto global = [&](const TraExecTile &tile, bool output) {
      return (output ? program.outputs : program.inputs)[tile.tensor];
    };
    auto boxOf = [](const TraExecTile &tile, int64_t rank) {
      return Box{std::vector<int64_t>(tile.offsets, tile.offsets + rank),
                 std::vector<int64_t>(tile.shape, tile.shape + rank)};
    };
    auto shapeOf = [](const TraExecTensorInfo &info) {
      return std::vector<int64_t>(info.shape, info.shape + info.rank);
    };
    int64_t numCaches = 2 * p.nLayers;
    step.cacheIn.resize(size_t(numCaches));
    step.cacheOut.resize(size_t(numCaches));
    step.cacheInSlot.assign(size_t(numCaches), std::nullopt);
    step.cacheOutSlot.assign(size_t(numCaches), std::nullopt);
    std::vector<bool> seenIn(static_cast<size_t>(numCaches)),
        seenOut(static_cast<size_t>(numCaches));
    bool seenLogits = false;
    for (int64_t i = 0; i < program.numInputs; ++i) {
      const TraExecTensorInfo &info = program.inputs[i];
      std::string name = info.name;
      if (name == "tokens") {
        if (info.rank != 1 || info.dtype != TRA_EXEC_I64)
          return path + ": input 'tokens' is not i64[seq]";
        step.seq = info.shape[0];
      } else if (std::optional<int64_t> c = cacheIndex(name, "", p.nLayers)) {
        seenIn[size_t(*c)] = true;
        if (std::string e = layoutOf(program, i, false, step.cacheIn[*c]);
            !e.empty())
          return path + ": " + e;
      }
    }
    for (int64_t i = 0; i < program.numOutputs; ++i) {
      std::string name = program.outputs[i].name;
      if (std::optional<int64_t> c = cacheIndex(name, "_out", p.nLayers)) {
        seenOut[size_t(*c)] = true;
        if (std::string e = layoutOf(program, i, true, step.cacheOut[*c]);
            !e.empty())
          return path + ": " + e;
      } else if (name == "logits") {
        seenLogits = true;
        if (std::string e = layoutOf(program, i, true, step.logits); !e.empty())
          return path + ": " + e;
      } else {
        return path + ": unknown @forward result '" + name + "'";
      }
    }
    for (int64_t c = 0; c < numCaches; ++c)
      if (!seenIn[size_t(c)] || !seenOut[size_t(c)])
        return path + ": @forward does not pass every KV cache of the " +
               std::to_string(p.nLayers) + "-layer model";
    if (!seenLogits || step.seq < 1)
      return path + ": @forward has no tokens or logits";

    const TraExecRankProgram &mine = *step.mine;
    step.buffers.assign(size_t(mine.numInputs + mine.numOutputs), nullptr);
    step.ownBuffers.reserve(size_t(mine.numInputs + mine.numOutputs));
    auto own = [&](size_t slot, rt::HostTensor t) {
      step.ownBuffers.push_back(std::move(t));
      step.buffers[slot] = step.ownBuffers.back().mutableData();
    };
    for (int64_t i = 0; i < mine.numInputs; ++i) {
      const TraExecTile &tile = mine.inputs[i];
      const TraExecTensorInfo &info = global(tile, false);
      std::string name = info.name;
      Box box = boxOf(tile, info.rank);
      size_t slot = size_t(i);
      if (info.dtype != TRA_EXEC_F32 && info.dtype != TRA_EXEC_I64)
        return path + ": input '" + name + "' is neither f32 nor i64";
      if (name == "tokens") {
        step.tokens = {slot, box};
        own(slot, rt::HostTensor::zeros(rt::DType::I64, box.sizes));
      } else if (name == "pos") {
        step.posSlots.push_back(slot);
        own(slot, rt::HostTensor::zeros(rt::DType::I64, {}));
      } else if (name == "freqs_cos" || name == "freqs_sin") {
        std::vector<int64_t> shape = {p.maxSeqLen, p.headDim() / 2};
        if (shapeOf(info) != shape)
          return path + ": '" + name + "' has another shape than the " +
                 "model's rotary tables";
        rt::HostTensor part = rt::HostTensor::zeros(rt::DType::F32, box.sizes);
        const std::vector<float> &table =
            name == "freqs_cos" ? cosTable : sinTable;
        rt::copyTile(rt::DType::F32, shape,
                     reinterpret_cast<const uint8_t *>(table.data()),
                     box.offsets, box.sizes, part.mutableData());
        own(slot, std::move(part));
      } else if (std::optional<int64_t> c = cacheIndex(name, "", p.nLayers)) {
        step.cacheInSlot[size_t(*c)] = slot;
      } else {
        // A weight: only this rank's tile is read (from its own file of a
        // re-split checkpoint), shared by the programs that hold the same
        // tile.
        const rt::TensorInfo *stored = source->find(name);
        if (!stored)
          return options.checkpoint + ": no tensor '" + name + "'";
        if (stored->shape != shapeOf(info))
          return options.checkpoint + ": tensor '" + name + "' is " +
                 rt::formatShape(stored->shape) + ", the model expects " +
                 rt::formatShape(shapeOf(info));
        std::string key =
            name + rt::formatShape(box.offsets) + rt::formatShape(box.sizes);
        auto found = weights.find(key);
        if (found == weights.end()) {
          rt::Result<rt::HostTensor> part = source->readTile(
              name, box.offsets, box.sizes, rt::DType::F32, me);
          if (!part)
            return part.message();
          found = weights.emplace(key, std::move(*part)).first;
        }
        step.buffers[slot] = found->second.mutableData();
      }
    }
    for (int64_t i = 0; i < mine.numOutputs; ++i) {
      const TraExecTile &tile = mine.outputs[i];
      const TraExecTensorInfo &info = global(tile, true);
      size_t slot = size_t(mine.numInputs + i);
      std::string name = info.name;
      if (name == "logits") {
        step.logitsSlot = slot;
        own(slot, rt::HostTensor::zeros(rt::DType::F32,
                                        boxOf(tile, info.rank).sizes));
      } else {
        step.cacheOutSlot[size_t(*cacheIndex(name, "_out", p.nLayers))] = slot;
      }
    }
    int64_t threads = options.threads > 0
                          ? options.threads
                          : std::max<int64_t>(1, program.numThreads);
    step.library->setNumThreads(threads);
    return "";
  }

  /// One KV cache: this rank's tile in `layout` (null before the first
  /// step: all zeros) and a spare buffer for the next step's output.
  struct Cache {
    const Layout *layout = nullptr;
    rt::HostTensor tile, spare;
  };

  const Options &options;
  int me = 0;
  std::vector<Step> steps;
  std::unique_ptr<rt::TensorSource> source;
  rt::LlamaParams p;
  std::vector<float> cosTable, sinTable;
  std::map<std::string, rt::HostTensor> weights;
  std::vector<Cache> caches;
};

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

/// Ends the job when a rank stops making progress. A rank that dies makes
/// mpirun end the job, but one that hangs (a deadlock, a stuck device or
/// network) leaves every other rank waiting in MPI forever. While armed, a
/// thread checks that a step starts at least every `timeout` seconds;
/// otherwise it says which position did not finish and exits this rank
/// without finalizing MPI, which makes mpirun end the whole job, the hung
/// rank included.
class Watchdog {
public:
  Watchdog(double timeout, int rank) : timeout(timeout), rank(rank) {
    if (timeout > 0)
      thread = std::thread([this] { watch(); });
  }
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      done = true;
    }
    wake.notify_all();
    if (thread.joinable())
      thread.join();
  }

  /// A step at `pos` starts now.
  void stepStarts(int64_t pos) {
    if (timeout <= 0)
      return;
    std::lock_guard<std::mutex> lock(mutex);
    position = pos;
    deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                  std::chrono::duration<double>(timeout));
    armed = true;
    wake.notify_all();
  }

  /// The generation is over (finalizing is not watched).
  void disarm() {
    std::lock_guard<std::mutex> lock(mutex);
    armed = false;
  }

private:
  using Clock = std::chrono::steady_clock;

  void watch() {
    std::unique_lock<std::mutex> lock(mutex);
    while (!done) {
      if (!armed) {
        wake.wait(lock);
        continue;
      }
      if (wake.wait_until(lock, deadline) == std::cv_status::timeout && armed &&
          !done && Clock::now() >= deadline) {
        std::fprintf(stderr,
                     "tra: rank %d: %s: the step at position %lld has not "
                     "finished after %g s (--step-timeout): a rank is hung "
                     "or the step needs more time; ending the job\n",
                     rank, kTool, static_cast<long long>(position), timeout);
        std::fflush(stderr);
        std::_Exit(1);
      }
    }
  }

  double timeout;
  int rank;
  std::mutex mutex;
  std::condition_variable wake;
  bool armed = false, done = false;
  int64_t position = 0;
  Clock::time_point deadline;
  std::thread thread;
};

/// This process's rank as mpirun tells it, before MPI is initialized.
int launcherRank() {
  const char *rank = std::getenv("OMPI_COMM_WORLD_RANK");
  return rank ? std::atoi(rank) : 0;
}

} // namespace

int main(int argc, char **argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  // Failures before MPI starts (a damaged library) are the same on every
  // rank: rank 0 reports them.
  auto early = [](const std::string &message) {
    if (launcherRank() == 0)
      std::fprintf(stderr, "%s: error: %s\n", kTool, message.c_str());
    return 1;
  };
  rt::Result<Options> options = parseOptions(argc, argv);
  if (!options)
    return early(options.message());
  RankModel model(*options);
  if (std::string e = model.load(); !e.empty())
    return early(e);

  tra_mpi_init(&argc, &argv, model.numRanks, model.fingerprint, kTool);
  int rank = tra_mpi_rank();
  if (std::string e = model.init(rank); !e.empty())
    fatal(e);
  const rt::LlamaParams &p = model.params();

  llama::GenerationConfig config;
  config.prompt = options->prompt;
  config.steps = options->steps;
  config.vocabSize = p.vocabSize;
  config.oneStepPrefill = model.hasStep(int64_t(config.prompt.size()));
  config.temperature = options->temperature;
  config.topP = options->topP;
  config.seed = options->seed;
  config.printIds = options->printIds;
  config.warmup = options->warmup;
  config.logitsOut = options->logitsOut;
  config.benchJson = options->benchJson;
  config.how =
      "compiled, " + std::to_string(model.numRanks) + " MPI ranks in one job";
  config.engine = "distributed";
  config.compileSeconds = options->compileSeconds;
  config.compiledNow = options->compiledNow;
  for (int64_t id : config.prompt)
    if (id >= p.vocabSize)
      fatal("prompt token " + std::to_string(id) + " is not in [0, " +
            std::to_string(p.vocabSize) + ")");
  if (config.steps > p.maxSeqLen)
    fatal("--steps " + std::to_string(config.steps) +
          " exceeds the KV-cache "
          "length " +
          std::to_string(p.maxSeqLen));
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
  Watchdog watchdog(options->stepTimeout, rank);
  auto step = [&](const std::vector<int64_t> &tokens, int64_t pos, int64_t n,
                  std::vector<double> &logits) {
    watchdog.stepStarts(pos);
    if (kill && kill->first == rank && pos >= kill->second)
      std::raise(SIGKILL);
    while (hang && hang->first == rank && pos >= hang->second)
      std::this_thread::sleep_for(std::chrono::seconds(1));
    return model.run(tokens, pos, n, logits);
  };
  // Every rank learns rank 0's choice: a sum in which the others add 0.
  auto share = [](int64_t &token) {
    if (tra_mpi_rank() != 0)
      token = 0;
    tra_mpi_allreduce(&token, 1, TRA_MPI_I64, TRA_MPI_SUM, nullptr, 0);
  };
  if (std::string e = llama::generate(config, step, share, rank == 0);
      !e.empty())
    fatal(e);
  watchdog.disarm();
  if (rank == 0 && model.cacheRelayouts > 0)
    std::fprintf(stderr,
                 "tra-llama: %lld KV caches moved to the next step program's "
                 "tiles (%lld bytes between ranks)\n",
                 static_cast<long long>(model.cacheRelayouts),
                 static_cast<long long>(model.cacheBytesMoved));
  tra_mpi_finalize(0);
  return 0;
}
