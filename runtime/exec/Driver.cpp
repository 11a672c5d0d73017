//===- Driver.cpp - Command line of compiled tra executables --------------===//

#include "tra/Exec/Driver.h"

#include "tra/Runtime/File.h"
#include "tra/Runtime/Mpi.h"
#include "tra/Runtime/Npy.h"
#include "tra/Runtime/Safetensors.h"
#include "tra/Runtime/Tensor.h"
#include "tra/Runtime/TensorSource.h"
#include "tra/Runtime/TraSplit.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

// The CPU kernels' choice between the program's and the runtime's own
// (GeneratedKernels.cpp, PackedGemm.cpp, Gemv.cpp): GPU programs' runtime
// has none of them, and these are null there.
#pragma weak tra_exec_use_generated_kernels
#pragma weak tra_exec_microkernel
#pragma weak tra_exec_dot_kernels

using namespace tra::rt;

namespace tra::exec {
namespace {

constexpr const char *kUsage =
    "usage: %s --input NAME=FILE.npy ... --output NAME=FILE.npy ...\n"
    "       [--weights FILE.safetensors|FILE.safetensors.index.json|DIR]...\n"
    "       [--threads N] [--profile] [--repeat N] [--list]\n"
    "       [--output-per-rank] [--builtin-kernels]\n"
    "\n"
    "Runs the compiled entry function @%s. NAME is one of its argument or\n"
    "result names (--list prints them). Arguments not given with --input\n"
    "are read by name from the --weights checkpoints. --profile prints the\n"
    "run time on stderr; --repeat N runs the program N times (for timing).\n"
    "Distributed programs: with --output-per-rank, each rank writes the\n"
    "tiles it owns of --output NAME=DIR/STEM.npy as DIR/STEM.rankR.npy, and\n"
    "DIR/STEM.tiles.json lists every tile's file, offsets and shape, instead\n"
    "of gathering the whole tensor to rank 0. --builtin-kernels multiplies\n"
    "with the runtime's own GEMM micro-kernel and dot products instead of\n"
    "the ones compiled into the program (to compare them).\n";

/// What the command line asks for.
struct Options {
  std::vector<std::pair<std::string, std::string>> inputs;
  std::vector<std::pair<std::string, std::string>> outputs;
  std::vector<std::string> weights;
  std::optional<int64_t> threads;
  int64_t repeat = 1;
  bool profile = false;
  bool list = false;
  bool help = false;
  bool outputPerRank = false;
  bool builtinKernels = false;
};

/// Returns the runtime dtype of an ABI element type, if valid.
std::optional<DType> toDType(int64_t dtype) {
  switch (dtype) {
  case TRA_EXEC_F32:
    return DType::F32;
  case TRA_EXEC_F16:
    return DType::F16;
  case TRA_EXEC_BF16:
    return DType::BF16;
  case TRA_EXEC_I64:
    return DType::I64;
  case TRA_EXEC_I32:
    return DType::I32;
  case TRA_EXEC_BOOL:
    return DType::Bool;
  case TRA_EXEC_I8:
    return DType::I8;
  default:
    return std::nullopt;
  }
}

/// Returns the shape of `info`.
std::vector<int64_t> shapeOf(const TraExecTensorInfo &info) {
  return std::vector<int64_t>(info.shape, info.shape + info.rank);
}

/// Returns "f32[4, 64]".
std::string describe(DType dtype, const std::vector<int64_t> &shape) {
  return std::string(dtypeName(dtype)) + formatShape(shape);
}

/// Returns the type of `info` as "f32[4, 64]".
std::string describe(const TraExecTensorInfo &info) {
  return describe(*toDType(info.dtype), shapeOf(info));
}

/// Splits "NAME=FILE" given to `flag`.
Result<std::pair<std::string, std::string>>
splitBinding(const std::string &flag, const std::string &value) {
  size_t eq = value.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == value.size())
    return Error{flag + " " + value + ": expected NAME=FILE"};
  return std::pair{value.substr(0, eq), value.substr(eq + 1)};
}

/// Parses the count given to `flag`: a number from 1 to `max`.
Result<int64_t> parseCount(const std::string &flag, const std::string &text,
                           int64_t max) {
  char *end = nullptr;
  long long value = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || value < 1 || value > max)
    return Error{flag + " " + text + ": expected a number from 1 to " +
                 std::to_string(max)};
  return static_cast<int64_t>(value);
}

/// Parses the command line.
Result<Options> parseOptions(int argc, const char *const *argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    std::string flag = arg, value;
    bool hasValue = false;
    if (size_t eq = arg.find('=');
        arg.rfind("--", 0) == 0 && eq != std::string::npos) {
      flag = arg.substr(0, eq);
      value = arg.substr(eq + 1);
      hasValue = true;
    }
    auto takeValue = [&]() -> Result<std::string> {
      if (hasValue)
        return value;
      if (i + 1 >= argc)
        return Error{flag + " needs a value"};
      return std::string(argv[++i]);
    };
    if (flag == "--input" || flag == "--output" || flag == "--weights" ||
        flag == "--threads" || flag == "--repeat") {
      Result<std::string> v = takeValue();
      if (!v)
        return v.error();
      if (flag == "--weights") {
        options.weights.push_back(*v);
        continue;
      }
      if (flag == "--threads" || flag == "--repeat") {
        Result<int64_t> count =
            parseCount(flag, *v, flag == "--threads" ? 4096 : 1000000);
        if (!count)
          return count.error();
        if (flag == "--threads")
          options.threads = *count;
        else
          options.repeat = *count;
        continue;
      }
      auto binding = splitBinding(flag, *v);
      if (!binding)
        return binding.error();
      (flag == "--input" ? options.inputs : options.outputs)
          .push_back(*binding);
    } else if (arg == "--profile") {
      options.profile = true;
    } else if (arg == "--output-per-rank") {
      options.outputPerRank = true;
    } else if (arg == "--builtin-kernels") {
      options.builtinKernels = true;
    } else if (arg == "--list") {
      options.list = true;
    } else if (arg == "--help" || arg == "-h") {
      options.help = true;
    } else {
      return Error{"unknown option '" + arg + "' (see --help)"};
    }
  }
  return options;
}

/// Returns the names of `count` tensors, comma-separated.
std::string nameList(const TraExecTensorInfo *infos, int64_t count) {
  std::string list;
  for (int64_t i = 0; i < count; ++i)
    list += (i ? ", " : "") + std::string(infos[i].name);
  return list.empty() ? "none" : list;
}

/// Returns the index of the tensor called `name`, if any.
std::optional<int64_t> findTensor(const TraExecTensorInfo *infos, int64_t count,
                                  const std::string &name) {
  for (int64_t i = 0; i < count; ++i)
    if (name == infos[i].name)
      return i;
  return std::nullopt;
}

/// Checks that `tensor`, read from `file`, fits argument `info`; converts an
/// f32 tensor for a bf16 argument.
Result<HostTensor> checkArgument(const TraExecTensorInfo &info,
                                 const std::string &file, HostTensor tensor) {
  DType want = *toDType(info.dtype);
  std::vector<int64_t> shape = shapeOf(info);
  bool dtypeOk = tensor.dtype() == want ||
                 (want == DType::BF16 && tensor.dtype() == DType::F32);
  if (!dtypeOk || tensor.shape() != shape)
    return fileError(file, "argument '" + std::string(info.name) +
                               "' expects " + describe(want, shape) +
                               ", the file holds " +
                               describe(tensor.dtype(), tensor.shape()));
  if (tensor.dtype() != want)
    return convert(tensor, want);
  return tensor;
}

/// The --weights checkpoints, searched in order.
class Weights {
public:
  /// Opens `path`: a safetensors file, an index file, a directory holding
  /// an index file or safetensors files, a checkpoint re-split per rank by
  /// `tra-llama reshard` (tra-split.json), a Meta checkpoint directory
  /// (params.json + consolidated.NN.pth) or a llama2.c .bin file.
  Status add(const std::string &path) {
    std::error_code ec;
    bool directory = std::filesystem::is_directory(path, ec);
    bool other =
        directory
            ? std::filesystem::exists(
                  std::filesystem::path(path) / kTraSplitIndexName, ec) ||
                  std::filesystem::exists(
                      std::filesystem::path(path) / "params.json", ec)
            : path.size() > 4 && path.compare(path.size() - 4, 4, ".bin") == 0;
    if (other) {
      Result<std::unique_ptr<TensorSource>> source = openTensorSource(path);
      if (!source)
        return source.error();
      sources.push_back(std::move(*source));
      return Status::success();
    }
    if (!directory)
      return open(path);
    std::vector<std::string> files, indexes;
    for (const auto &entry : std::filesystem::directory_iterator(path, ec)) {
      std::string name = entry.path().filename().string();
      if (name.size() > 23 &&
          name.compare(name.size() - 23, 23, ".safetensors.index.json") == 0)
        indexes.push_back(entry.path().string());
      else if (name.size() > 12 &&
               name.compare(name.size() - 12, 12, ".safetensors") == 0)
        files.push_back(entry.path().string());
    }
    if (ec)
      return fileError(path, ec.message());
    if (indexes.size() > 1)
      return fileError(path, "several *.safetensors.index.json files; pass "
                             "the one to use");
    if (indexes.size() == 1)
      return open(indexes.front());
    if (files.empty())
      return fileError(path, "no .safetensors files in this directory");
    std::sort(files.begin(), files.end());
    for (const std::string &file : files)
      if (Status status = open(file); !status)
        return status;
    return Status::success();
  }

  /// Returns tensor `name` and the checkpoint holding it, if any holds it.
  Result<std::optional<std::pair<HostTensor, std::string>>>
  find(const std::string &name) const {
    if (const TensorSource *source = findSource(name)) {
      Result<HostTensor> tensor = source->read(name);
      if (!tensor)
        return tensor.error();
      return std::optional{std::pair{std::move(*tensor), source->path()}};
    }
    for (const SafetensorsCheckpoint &checkpoint : checkpoints) {
      const auto &names = checkpoint.tensorNames();
      if (std::find(names.begin(), names.end(), name) == names.end())
        continue;
      Result<HostTensor> tensor = checkpoint.get(name);
      if (!tensor)
        return tensor.error();
      return std::optional{std::pair{std::move(*tensor), checkpoint.path()}};
    }
    return std::optional<std::pair<HostTensor, std::string>>{};
  }

  /// Returns the entry of tensor `name` and the checkpoint holding it, if
  /// any holds it.
  std::optional<
      std::pair<const SafetensorsEntry *, const SafetensorsCheckpoint *>>
  findEntry(const std::string &name) const {
    for (const SafetensorsCheckpoint &checkpoint : checkpoints) {
      Result<const SafetensorsEntry *> entry = checkpoint.entry(name);
      if (entry)
        return std::pair{*entry, &checkpoint};
    }
    return std::nullopt;
  }
  /// Returns the TensorSource checkpoint (re-split, Meta, llama2.c) holding
  /// tensor `name`, if any.
  const TensorSource *findSource(const std::string &name) const {
    for (const auto &source : sources)
      if (source->find(name))
        return source.get();
    return nullptr;
  }
  bool empty() const { return checkpoints.empty() && sources.empty(); }

private:
  Status open(const std::string &path) {
    Result<SafetensorsCheckpoint> checkpoint =
        SafetensorsCheckpoint::open(path);
    if (!checkpoint)
      return checkpoint.error();
    checkpoints.push_back(std::move(*checkpoint));
    return Status::success();
  }

  std::vector<SafetensorsCheckpoint> checkpoints;
  std::vector<std::unique_ptr<TensorSource>> sources;
};

/// Reads every argument of `program` from --input files or the weights.
Result<std::vector<HostTensor>> readArguments(const TraExecProgram &program,
                                              const Options &options) {
  std::vector<std::optional<HostTensor>> args(program.numInputs);
  for (const auto &[name, file] : options.inputs) {
    std::optional<int64_t> i =
        findTensor(program.inputs, program.numInputs, name);
    if (!i)
      return Error{"--input " + name + "=" + file + ": @" + program.entryName +
                   " has no argument named '" + name + "' (arguments: " +
                   nameList(program.inputs, program.numInputs) + ")"};
    if (args[*i])
      return Error{"--input " + name + "=" + file + ": argument '" + name +
                   "' is given twice"};
    NpyReadOptions readOptions;
    readOptions.memoryMap = true;
    Result<HostTensor> tensor = readNpy(file, readOptions);
    if (!tensor)
      return Error{"argument '" + name + "': " + tensor.message()};
    Result<HostTensor> checked =
        checkArgument(program.inputs[*i], file, std::move(*tensor));
    if (!checked)
      return checked.error();
    args[*i] = std::move(*checked);
  }

  Weights weights;
  for (const std::string &path : options.weights)
    if (Status status = weights.add(path); !status)
      return status.error();
  std::vector<HostTensor> result;
  for (int64_t i = 0; i < program.numInputs; ++i) {
    const TraExecTensorInfo &info = program.inputs[i];
    if (!args[i]) {
      auto found = weights.find(info.name);
      if (!found)
        return found.error();
      if (!*found)
        return Error{"no value for argument '" + std::string(info.name) +
                     "' (" + describe(info) + "); pass --input " + info.name +
                     "=FILE.npy" +
                     (weights.empty() ? std::string(" or --weights")
                                      : std::string(": no --weights "
                                                    "checkpoint holds it"))};
      Result<HostTensor> checked =
          checkArgument(info, (*found)->second + ": tensor '" + info.name + "'",
                        std::move((*found)->first));
      if (!checked)
        return checked.error();
      args[i] = std::move(*checked);
    }
    result.push_back(std::move(*args[i]));
  }
  return result;
}

/// Maps each --output to its result index; checks names.
Result<std::vector<std::pair<int64_t, std::string>>>
resolveOutputs(const TraExecProgram &program, const Options &options) {
  std::vector<std::pair<int64_t, std::string>> writes;
  for (const auto &[name, file] : options.outputs) {
    std::optional<int64_t> i =
        findTensor(program.outputs, program.numOutputs, name);
    if (!i)
      return Error{"--output " + name + "=" + file + ": @" + program.entryName +
                   " has no result named '" + name + "' (results: " +
                   nameList(program.outputs, program.numOutputs) + ")"};
    for (const auto &[other, otherFile] : writes)
      if (samePath(file, otherFile))
        return Error{"--output " + std::string(program.outputs[other].name) +
                     "=" + otherFile + " and --output " + name + "=" + file +
                     " name the same file"};
    writes.push_back({*i, file});
  }
  return writes;
}

/// Prints the entry's arguments and results.
void printSignature(const TraExecProgram &program) {
  std::printf("@%s\n", program.entryName);
  for (int64_t i = 0; i < program.numInputs; ++i) {
    const TraExecTensorInfo &info = program.inputs[i];
    // A weight the plan keeps in a memory tier and fetches before each use.
    const char *tier = info.tier == TRA_EXEC_TIER_HOST   ? " (in host memory)"
                       : info.tier == TRA_EXEC_TIER_DISK ? " (on disk)"
                                                         : "";
    std::printf("  input  %s: %s%s\n", info.name, describe(info).c_str(), tier);
  }
  for (int64_t i = 0; i < program.numOutputs; ++i)
    std::printf("  output %s: %s\n", program.outputs[i].name,
                describe(program.outputs[i]).c_str());
}

/// Checks that the descriptor is one this runtime understands.
Status checkProgram(const TraExecProgram &program) {
  if (program.abiVersion != TRA_EXEC_ABI_VERSION)
    return Error{"the program was compiled for runtime ABI version " +
                 std::to_string(program.abiVersion) + ", this runtime has " +
                 std::to_string(TRA_EXEC_ABI_VERSION)};
  if (program.device != TRA_EXEC_HOST && program.device != TRA_EXEC_CUDA)
    return Error{"the program is for an unknown device kind " +
                 std::to_string(program.device)};
  for (const auto *infos : {program.inputs, program.outputs})
    for (int64_t i = 0, e = infos == program.inputs ? program.numInputs
                                                    : program.numOutputs;
         i < e; ++i)
      if (!toDType(infos[i].dtype))
        return Error{"tensor '" + std::string(infos[i].name) +
                     "' has an unknown element type"};
  return Status::success();
}

/// Prints the run times of `program` on stderr: the first, the fastest and
/// the median of `times` (milliseconds), then the average time of every
/// profiled op that ran, slowest first.
void printProfile(const TraExecProgram &program, std::vector<double> times,
                  int64_t threads) {
  double first = times.front();
  std::sort(times.begin(), times.end());
  std::fprintf(stderr,
               "profile: @%s ran in %.3f ms on %lld threads (runs: %zu, "
               "min %.3f ms, median %.3f ms)\n",
               program.entryName, first, static_cast<long long>(threads),
               times.size(), times.front(), times[times.size() / 2]);
  if (tra_exec_microkernel && tra_exec_dot_kernels)
    std::fprintf(stderr, "profile: GEMM micro-kernel: %s; dot kernels: %s\n",
                 tra_exec_microkernel(), tra_exec_dot_kernels());
  std::vector<std::pair<double, int64_t>> ops;
  double total = 0.0;
  for (int64_t op = 0; op < program.numOps; ++op) {
    if (tra_exec_profile_count(op) == 0)
      continue;
    double ms = 1e3 * tra_exec_profile_seconds(op) / times.size();
    ops.push_back({ms, op});
    total += ms;
  }
  std::sort(ops.begin(), ops.end(),
            [](const auto &x, const auto &y) { return x.first > y.first; });
  for (const auto &[ms, op] : ops)
    std::fprintf(stderr, "profile: %10.3f ms %5.1f%%  %s\n", ms,
                 total > 0 ? 100.0 * ms / total : 0.0, program.opNames[op]);
}

/// Prints on stderr, after `prefix`, what `runs` runs fetched from each
/// memory tier (tra_comm.fetch: weights the plan keeps in the node's host
/// memory or disk), per run; nothing if they fetched nothing.
void printTierFetches(const std::string &prefix, int64_t runs) {
  const char *const names[] = {"host memory", "disk"};
  const int32_t tiers[] = {TRA_EXEC_TIER_HOST, TRA_EXEC_TIER_DISK};
  for (int i = 0; i < 2; ++i) {
    int64_t fetches = tra_exec_tier_fetches(tiers[i]);
    if (fetches == 0)
      continue;
    std::fprintf(stderr,
                 "%sfetched %lld bytes in %lld tile%s from %s per run\n",
                 prefix.c_str(),
                 static_cast<long long>(tra_exec_tier_bytes(tiers[i]) / runs),
                 static_cast<long long>(fetches / runs),
                 fetches == runs ? "" : "s", names[i]);
  }
  // Non-blocking fetches on the host: how much of the copying the program
  // waited for (the rest overlapped its compute). GPU copies run on a copy
  // stream the host does not time.
  int64_t copyNs = tra_exec_fetch_copy_ns();
  if (copyNs > 0) {
    int64_t waitNs = tra_exec_fetch_wait_ns();
    std::fprintf(stderr,
                 "%sfetch copies took %.3f ms per run, %.3f ms of it not "
                 "hidden behind compute (%.0f%% overlapped)\n",
                 prefix.c_str(), copyNs / 1e6 / runs, waitNs / 1e6 / runs,
                 100.0 * std::max<int64_t>(0, copyNs - waitNs) / copyNs);
  }
}

/// The device buffers of a GPU program's run, freed when it goes, and the
/// host memory of its inputs it pinned, unpinned then (before the inputs
/// are freed or unmapped).
class DeviceBuffers {
public:
  explicit DeviceBuffers(const Accelerator &accelerator)
      : accelerator(accelerator) {}
  ~DeviceBuffers() {
    for (void *host : pinned)
      accelerator.unpinHost(host);
    for (void *pointer : pointers)
      accelerator.release(pointer);
  }
  /// Pins the host memory of `tensor`, an input the program fetches from
  /// the host-memory tier, if the accelerator can: its fetches then copy
  /// directly and overlap the kernels. A failure leaves it pageable.
  void pin(const HostTensor &tensor) {
    if (!accelerator.pinHost || !accelerator.unpinHost || !tensor.byteSize())
      return;
    void *host = const_cast<uint8_t *>(tensor.data());
    if (!accelerator.pinHost(host, tensor.byteSize()))
      return;
    pinned.push_back(host);
    pinnedBytes += tensor.byteSize();
  }
  /// The bytes of host memory pin() pinned.
  size_t hostBytesPinned() const { return pinnedBytes; }
  /// A device buffer holding `tensor` (or, with `copy` false, its size).
  Result<void *> add(const HostTensor &tensor, bool copy) {
    Result<void *> pointer = accelerator.allocate(tensor.byteSize());
    if (!pointer)
      return pointer.error();
    pointers.push_back(*pointer);
    if (copy)
      if (Status status = accelerator.copyToDevice(*pointer, tensor.data(),
                                                   tensor.byteSize());
          !status)
        return status.error();
    return *pointer;
  }

private:
  const Accelerator &accelerator;
  std::vector<void *> pointers;
  std::vector<void *> pinned;
  size_t pinnedBytes = 0;
};

/// The buffers a program runs on: the host tensors `args` and `results`
/// themselves or, for a GPU program (`accelerator`), device copies of the
/// arguments and device space for the results, owned by `device`; the
/// arguments whose `tiers` entry is a memory tier (TraExecTier) stay in
/// host memory, where the program fetches them from (pinned there for the
/// run, those of the host-memory tier: the disk tier's mapped checkpoints
/// stay paged in lazily).
Result<std::vector<void *>>
programBuffers(std::vector<HostTensor> &args, std::vector<HostTensor> &results,
               const std::vector<int64_t> &tiers,
               const Accelerator *accelerator,
               std::optional<DeviceBuffers> &device) {
  std::vector<void *> buffers;
  if (!accelerator) {
    for (HostTensor &arg : args)
      buffers.push_back(const_cast<uint8_t *>(arg.data()));
    for (HostTensor &result : results)
      buffers.push_back(result.mutableData());
    return buffers;
  }
  device.emplace(*accelerator);
  for (size_t i = 0; i < args.size(); ++i) {
    HostTensor &arg = args[i];
    if (i < tiers.size() && tiers[i] != TRA_EXEC_TIER_DEVICE) {
      if (tiers[i] == TRA_EXEC_TIER_HOST)
        device->pin(arg);
      buffers.push_back(const_cast<uint8_t *>(arg.data()));
      continue;
    }
    Result<void *> pointer = device->add(arg, /*copy=*/true);
    if (!pointer)
      return Error{"copying the inputs to " + accelerator->describe() + ": " +
                   pointer.message()};
    buffers.push_back(*pointer);
  }
  for (HostTensor &result : results) {
    Result<void *> pointer = device->add(result, /*copy=*/false);
    if (!pointer)
      return Error{"allocating the outputs on " + accelerator->describe() +
                   ": " + pointer.message()};
    buffers.push_back(*pointer);
  }
  return buffers;
}

/// Prints on stderr, after `prefix`, the host memory a GPU program's run
/// pinned for its fetches (`device`); nothing if none.
void printPinned(const std::string &prefix,
                 const std::optional<DeviceBuffers> &device) {
  if (!device || device->hostBytesPinned() == 0)
    return;
  std::fprintf(stderr, "%spinned %llu bytes of host memory for fetches\n",
               prefix.c_str(),
               static_cast<unsigned long long>(device->hostBytesPinned()));
}

/// Copies a GPU program's results (device buffers `buffers[first + i]`)
/// back to `results`; `name(i)` names result i.
template <typename NameFn>
Status copyResultsToHost(std::vector<HostTensor> &results,
                         const std::vector<void *> &buffers, size_t first,
                         const Accelerator &accelerator, NameFn name) {
  for (size_t i = 0; i < results.size(); ++i)
    if (Status status =
            accelerator.copyToHost(results[i].mutableData(), buffers[first + i],
                                   results[i].byteSize());
        !status)
      return Error{"copying result '" + std::string(name(i)) + "' from " +
                   accelerator.describe() + ": " + status.message()};
  return Status::success();
}

/// Runs `run` (`program`'s, or a rank's) on `buffers` `repeats` times and
/// returns each run's milliseconds, until its work is done: a GPU
/// program's work (moves included) is issued, not done, when `run` returns.
Result<std::vector<double>> timedRuns(const TraExecProgram &program,
                                      void (*run)(void *const *),
                                      const std::vector<void *> &buffers,
                                      int64_t repeats,
                                      const Accelerator *accelerator) {
  std::vector<double> times;
  for (int64_t i = 0; i < repeats; ++i) {
    auto start = std::chrono::steady_clock::now();
    run(buffers.data());
    if (accelerator)
      if (Status status = accelerator->synchronize(); !status)
        return Error{"running @" + std::string(program.entryName) + " on " +
                     accelerator->describe() + ": " + status.message()};
    // A failed check: the results are not the model's, and none is written.
    if (const char *failed = tra_exec_take_check_failure())
      return Error{"running @" + std::string(program.entryName) + ": " +
                   failed};
    auto end = std::chrono::steady_clock::now();
    times.push_back(
        std::chrono::duration<double, std::milli>(end - start).count());
  }
  return times;
}

/// Runs the program on `args` and writes the requested outputs. A GPU
/// program (`accelerator`) runs on device copies of the arguments; its
/// results are copied back once it is done.
Status run(const TraExecProgram &program, const Options &options,
           std::vector<HostTensor> &args,
           const std::vector<std::pair<int64_t, std::string>> &writes,
           const Accelerator *accelerator) {
  std::vector<HostTensor> results;
  for (int64_t i = 0; i < program.numOutputs; ++i)
    results.push_back(HostTensor::zeros(*toDType(program.outputs[i].dtype),
                                        shapeOf(program.outputs[i])));
  std::vector<int64_t> tiers;
  for (int64_t i = 0; i < program.numInputs; ++i)
    tiers.push_back(program.inputs[i].tier);
  std::optional<DeviceBuffers> device;
  Result<std::vector<void *>> placed =
      programBuffers(args, results, tiers, accelerator, device);
  if (!placed)
    return placed.error();
  std::vector<void *> &buffers = *placed;

  int64_t threads = options.threads.value_or(
      program.numThreads > 0
          ? program.numThreads
          : std::max<int64_t>(1, std::thread::hardware_concurrency()));
  tra_exec_set_num_threads(threads);
  tra_exec_set_parallel_costs(program.threadSyncSeconds,
                              program.coreBytesPerSecond,
                              program.coreMacsPerSecond);
  if (tra_exec_use_generated_kernels)
    tra_exec_use_generated_kernels(options.builtinKernels ? 0 : 1);
  if (options.profile)
    tra_exec_profile_enable(program.numOps);
  tra_exec_tier_reset();
  Result<std::vector<double>> timed =
      timedRuns(program, program.run, buffers, options.repeat, accelerator);
  if (!timed)
    return timed.error();
  std::vector<double> &times = *timed;
  if (options.profile) {
    printProfile(program, times, threads);
    printTierFetches("profile: ", options.repeat);
    printPinned("profile: ", device);
  }

  if (accelerator)
    if (Status status = copyResultsToHost(
            results, buffers, size_t(program.numInputs), *accelerator,
            [&](size_t i) { return program.outputs[i].name; });
        !status)
      return status;

  // Every output is complete in its temporary file before any replaces its
  // destination: a failure leaves none of them.
  std::vector<AtomicFileWriter> files;
  for (const auto &[i, file] : writes) {
    Result<AtomicFileWriter> writer = prepareNpy(file, results[i]);
    if (!writer)
      return Error{"result '" + std::string(program.outputs[i].name) +
                   "': " + writer.message()};
    files.push_back(std::move(*writer));
  }
  return commitAll(files);
}

//===----------------------------------------------------------------------===//
// Distributed programs
//===----------------------------------------------------------------------===//

/// Returns the tile's extents (`rank` entries of `tile.shape`).
std::vector<int64_t> tileShape(const TraExecTile &tile, int64_t rank) {
  return std::vector<int64_t>(tile.shape, tile.shape + rank);
}
std::vector<int64_t> tileOffsets(const TraExecTile &tile, int64_t rank) {
  return std::vector<int64_t>(tile.offsets, tile.offsets + rank);
}

/// Reads rank's tile `tile` of input `info`: from its --input .npy file
/// (memory-mapped: only the pages of the tile are read) or by byte range
/// from the --weights checkpoint holding it.
Result<HostTensor> readInputTile(const TraExecProgram &program,
                                 const TraExecTile &tile,
                                 const Options &options, const Weights &weights,
                                 int rank) {
  const TraExecTensorInfo &info = program.inputs[tile.tensor];
  std::vector<int64_t> offsets = tileOffsets(tile, info.rank);
  std::vector<int64_t> sizes = tileShape(tile, info.rank);
  DType want = *toDType(info.dtype);
  for (const auto &[name, file] : options.inputs) {
    if (name != info.name)
      continue;
    NpyReadOptions readOptions;
    readOptions.memoryMap = true;
    Result<HostTensor> tensor = readNpy(file, readOptions);
    if (!tensor)
      return Error{"argument '" + name + "': " + tensor.message()};
    bool dtypeOk = tensor->dtype() == want ||
                   (want == DType::BF16 && tensor->dtype() == DType::F32);
    if (!dtypeOk || tensor->shape() != shapeOf(info))
      return fileError(file, "argument '" + name + "' expects " +
                                 describe(info) + ", the file holds " +
                                 describe(tensor->dtype(), tensor->shape()));
    Result<HostTensor> part = extractTile(*tensor, offsets, sizes);
    if (!part)
      return part.error();
    return part->dtype() == want ? std::move(*part) : convert(*part, want);
  }
  if (const TensorSource *source = weights.findSource(info.name)) {
    // Reads only the tile's bytes, from this rank's own file first when the
    // checkpoint was re-split for this plan.
    const TensorInfo *entry = source->find(info.name);
    if (entry->shape != shapeOf(info))
      return fileError(source->path(),
                       "tensor '" + std::string(info.name) + "': argument '" +
                           info.name + "' expects " + describe(info) +
                           ", the checkpoint holds " +
                           describe(entry->dtype, entry->shape));
    return source->readTile(info.name, offsets, sizes, want, rank);
  }
  auto found = weights.findEntry(info.name);
  if (!found)
    return Error{"no value for argument '" + std::string(info.name) + "' (" +
                 describe(info) + "); pass --input " + info.name + "=FILE.npy" +
                 (weights.empty() ? std::string(" or --weights")
                                  : std::string(": no --weights checkpoint "
                                                "holds it"))};
  const auto &[entry, checkpoint] = *found;
  bool dtypeOk = entry->dtype == want ||
                 (want == DType::BF16 && entry->dtype == DType::F32);
  if (!dtypeOk || entry->shape != shapeOf(info))
    return fileError(checkpoint->path(),
                     "tensor '" + std::string(info.name) + "': argument '" +
                         info.name + "' expects " + describe(info) +
                         ", the checkpoint holds " +
                         describe(entry->dtype, entry->shape));
  Result<HostTensor> part = checkpoint->readTile(info.name, offsets, sizes);
  if (!part)
    return part.error();
  return part->dtype() == want ? std::move(*part) : convert(*part, want);
}

/// The files of `--output NAME=FILE` with --output-per-rank: FILE without
/// its ".npy" suffix is the stem; tiles are "STEM.rankR.npy", the manifest
/// "STEM.tiles.json".
std::string outputStem(const std::string &file) {
  if (file.size() > 4 && file.compare(file.size() - 4, 4, ".npy") == 0)
    return file.substr(0, file.size() - 4);
  return file;
}
std::string rankTileFile(const std::string &file, int64_t rank) {
  return outputStem(file) + ".rank" + std::to_string(rank) + ".npy";
}
std::string manifestFile(const std::string &file) {
  return outputStem(file) + ".tiles.json";
}
/// What is written while the outputs are not committed yet.
std::string partialFile(const std::string &path) { return path + ".partial"; }

/// Returns "[1, 2, 3]".
std::string jsonList(const std::vector<int64_t> &values) {
  std::string text = "[";
  for (size_t i = 0; i < values.size(); ++i)
    text += (i ? ", " : "") + std::to_string(values[i]);
  return text + "]";
}

/// Returns `text` as a JSON string literal.
std::string jsonString(const std::string &text) {
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') {
      quoted += '\\';
      quoted += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char escape[8];
      std::snprintf(escape, sizeof(escape), "\\u%04x", c);
      quoted += escape;
    } else {
      quoted += c;
    }
  }
  return quoted + "\"";
}

/// The manifest of result `index` written to `file` per rank: its name,
/// .npy dtype and shape, and each owned tile's file (relative to the
/// manifest), rank, offsets and shape, in rank order.
std::string tileManifest(const TraExecProgram &program, int64_t index,
                         const std::string &file) {
  const TraExecTensorInfo &info = program.outputs[index];
  DType dtype = *toDType(info.dtype);
  // .npy has no bfloat16: those results are written as f32.
  std::string descr =
      npyDescr(dtype == DType::BF16 ? DType::F32 : dtype).value_or("");
  std::string text = "{\n  \"name\": " + jsonString(info.name) +
                     ",\n  \"dtype\": " + jsonString(descr) +
                     ",\n  \"shape\": " + jsonList(shapeOf(info)) +
                     ",\n  \"tiles\": [";
  bool first = true;
  for (int64_t q = 0; q < program.numRanks; ++q) {
    const TraExecRankProgram &other = program.ranks[q];
    for (int64_t i = 0; i < other.numOutputs; ++i) {
      const TraExecTile &tile = other.outputs[i];
      if (tile.tensor != index || !tile.owner)
        continue;
      std::string name =
          std::filesystem::path(rankTileFile(file, q)).filename().string();
      text += std::string(first ? "" : ",") +
              "\n    {\"file\": " + jsonString(name) +
              ", \"rank\": " + std::to_string(q) +
              ", \"offsets\": " + jsonList(tileOffsets(tile, info.rank)) +
              ", \"shape\": " + jsonList(tileShape(tile, info.rank)) + "}";
      first = false;
    }
  }
  return text + "\n  ]\n}\n";
}

/// Writes `text` to `path` atomically.
Status writeText(const std::string &path, const std::string &text) {
  Result<AtomicFileWriter> writer = AtomicFileWriter::create(path);
  if (!writer)
    return writer.error();
  if (Status status = writer->write(text.data(), text.size()); !status)
    return status;
  return writer->commit();
}

/// Whether every rank passes `ok` (a collective over all ranks).
bool allRanksAgree(const Communicator &comm, bool ok) {
  int64_t value = ok ? 1 : 0;
  comm.allreduce(&value, 1, TRA_MPI_I64, TRA_MPI_MIN, nullptr, 0);
  return value == 1;
}

/// Removes `paths`, ignoring those that do not exist.
void removeFiles(const std::vector<std::string> &paths) {
  for (const std::string &path : paths) {
    std::error_code ec;
    std::filesystem::remove(path, ec);
  }
}

/// The files this rank writes with --output-per-rank: (index in the rank's
/// results, tile file), and on rank 0 (result index, manifest file) with
/// the --output file each manifest is for.
struct RankOutputFiles {
  std::vector<std::pair<int64_t, std::string>> tiles;
  std::vector<std::pair<int64_t, std::string>> manifests;
  std::vector<std::string> manifestOutputs;
  std::vector<std::string> all() const {
    std::vector<std::string> paths;
    for (const auto &files : {tiles, manifests})
      for (const auto &[_, path] : files)
        paths.push_back(path);
    return paths;
  }
};

RankOutputFiles
rankOutputFiles(const TraExecProgram &program,
                const std::vector<std::pair<int64_t, std::string>> &writes,
                int rank) {
  RankOutputFiles files;
  const TraExecRankProgram &mine = program.ranks[rank];
  for (const auto &[index, file] : writes) {
    for (int64_t i = 0; i < mine.numOutputs; ++i)
      if (mine.outputs[i].tensor == index && mine.outputs[i].owner)
        files.tiles.push_back({i, rankTileFile(file, rank)});
    if (rank == 0) {
      files.manifests.push_back({index, manifestFile(file)});
      files.manifestOutputs.push_back(file);
    }
  }
  return files;
}

/// --output-per-rank: every rank writes the tiles it owns, rank 0 the
/// manifests. Nothing is left that looks like a complete output unless
/// every rank succeeded: the files are written as "*.partial", renamed once
/// every rank has written all of its files, and the manifests (what a
/// reader opens first) are renamed last, once every rank has renamed its
/// tiles. On failure every rank removes what it wrote and the job exits 1.
/// Returns the process exit code.
int writeRankOutputs(const TraExecProgram &program,
                     const std::vector<std::pair<int64_t, std::string>> &writes,
                     const Communicator &comm, int rank,
                     const std::vector<HostTensor> &results, const char *self) {
  RankOutputFiles files = rankOutputFiles(program, writes, rank);
  std::vector<std::string> partials;
  for (const std::string &path : files.all())
    partials.push_back(partialFile(path));
  auto failWith = [&](const std::string &message) {
    std::fprintf(stderr, "%s: error: rank %d: %s\n", self, rank,
                 message.c_str());
  };
  // 1. Write every file under its partial name.
  bool ok = true;
  for (const auto &[i, path] : files.tiles) {
    if (Status status = writeNpy(partialFile(path), results[i]); !status) {
      failWith(
          "result '" +
          std::string(
              program.outputs[program.ranks[rank].outputs[i].tensor].name) +
          "': " + status.message());
      ok = false;
      break;
    }
  }
  for (size_t m = 0; ok && m < files.manifests.size(); ++m) {
    const auto &[index, path] = files.manifests[m];
    if (Status status =
            writeText(partialFile(path),
                      tileManifest(program, index, files.manifestOutputs[m]));
        !status) {
      failWith(status.message());
      ok = false;
    }
  }
  // 2. Every rank wrote everything: rename the tiles.
  if (!allRanksAgree(comm, ok)) {
    removeFiles(partials);
    return 1;
  }
  std::vector<std::string> renamed;
  // Renames the partial files of `paths` into place, recording each in
  // `renamed`; stops at the first failure.
  auto publish = [&](const auto &paths) {
    for (const auto &[_, path] : paths) {
      std::error_code ec;
      std::filesystem::rename(partialFile(path), path, ec);
      if (ec) {
        failWith(path + ": " + ec.message());
        ok = false;
        return;
      }
      renamed.push_back(path);
    }
  };
  publish(files.tiles);
  // 3. Every tile is in place: publish the manifests.
  if (!allRanksAgree(comm, ok)) {
    removeFiles(partials);
    removeFiles(renamed);
    return 1;
  }
  publish(files.manifests);
  if (!allRanksAgree(comm, ok)) {
    removeFiles(partials);
    removeFiles(renamed);
    return 1;
  }
  return 0;
}

/// Runs rank `rank`'s program and gathers the outputs on rank 0 (or, with
/// --output-per-rank, writes each rank's tiles). Returns the exit code;
/// an error aborts the job.
Result<int> runRank(const TraExecProgram &program, const Options &options,
                    const std::vector<std::pair<int64_t, std::string>> &writes,
                    const Communicator &comm, int rank, const char *self,
                    const Accelerator *accelerator) {
  const TraExecRankProgram &mine = program.ranks[rank];
  // Outputs of an earlier run must not pass for this run's if it fails.
  if (options.outputPerRank)
    removeFiles(rankOutputFiles(program, writes, rank).all());
  Weights weights;
  for (const std::string &path : options.weights)
    if (Status status = weights.add(path); !status)
      return status;
  std::vector<HostTensor> args, results;
  int64_t inputBytes = 0;
  for (int64_t i = 0; i < mine.numInputs; ++i) {
    Result<HostTensor> tile =
        readInputTile(program, mine.inputs[i], options, weights, rank);
    if (!tile)
      return tile.error();
    inputBytes += int64_t(tile->byteSize());
    args.push_back(std::move(*tile));
  }
  for (int64_t i = 0; i < mine.numOutputs; ++i) {
    const TraExecTile &tile = mine.outputs[i];
    const TraExecTensorInfo &info = program.outputs[tile.tensor];
    results.push_back(
        HostTensor::zeros(*toDType(info.dtype), tileShape(tile, info.rank)));
  }
  std::vector<int64_t> tiers;
  for (int64_t i = 0; i < mine.numInputs; ++i)
    tiers.push_back(program.inputs[mine.inputs[i].tensor].tier);
  std::optional<DeviceBuffers> device;
  Result<std::vector<void *>> placed =
      programBuffers(args, results, tiers, accelerator, device);
  if (!placed)
    return placed.error();
  std::vector<void *> &buffers = *placed;
  int64_t threads = options.threads.value_or(
      program.numThreads > 0
          ? program.numThreads
          : std::max<int64_t>(1, std::thread::hardware_concurrency()));
  tra_exec_set_num_threads(threads);
  tra_exec_set_parallel_costs(program.threadSyncSeconds,
                              program.coreBytesPerSecond,
                              program.coreMacsPerSecond);
  if (tra_exec_use_generated_kernels)
    tra_exec_use_generated_kernels(options.builtinKernels ? 0 : 1);
  int64_t bytesBefore = comm.bytesSent(), messagesBefore = comm.messagesSent();
  tra_exec_tier_reset();
  Result<std::vector<double>> timed =
      timedRuns(program, mine.run, buffers, options.repeat, accelerator);
  if (!timed)
    return timed.error();
  std::vector<double> &times = *timed;
  if (options.profile) {
    std::sort(times.begin(), times.end());
    std::fprintf(stderr,
                 "profile: rank %d: read %lld bytes of input tiles\n"
                 "profile: rank %d: @%s ran in %.3f ms (median of %zu) on %lld "
                 "threads; sent %lld bytes in %lld messages per run\n",
                 rank, static_cast<long long>(inputBytes), rank,
                 program.entryName, times[times.size() / 2], times.size(),
                 static_cast<long long>(threads),
                 static_cast<long long>((comm.bytesSent() - bytesBefore) /
                                        options.repeat),
                 static_cast<long long>((comm.messagesSent() - messagesBefore) /
                                        options.repeat));
    printTierFetches("profile: rank " + std::to_string(rank) + ": ",
                     options.repeat);
    printPinned("profile: rank " + std::to_string(rank) + ": ", device);
  }

  if (accelerator)
    if (Status status = copyResultsToHost(
            results, buffers, size_t(mine.numInputs), *accelerator,
            [&](size_t i) {
              return program.outputs[mine.outputs[i].tensor].name;
            });
        !status)
      return status;

  if (options.outputPerRank)
    return writeRankOutputs(program, writes, comm, rank, results, self);

  // Gather: in output order, then rank order, every owned tile goes to rank
  // 0 (blocking sends matched by rank 0's receives in the same order).
  // Rank 0 replaces no output file before all are written.
  std::vector<AtomicFileWriter> files;
  for (const auto &[index, file] : writes) {
    const TraExecTensorInfo &info = program.outputs[index];
    DType dtype = *toDType(info.dtype);
    std::optional<HostTensor> whole;
    if (rank == 0)
      whole = HostTensor::zeros(dtype, shapeOf(info));
    for (int64_t q = 0; q < program.numRanks; ++q) {
      const TraExecRankProgram &other = program.ranks[q];
      for (int64_t i = 0; i < other.numOutputs; ++i) {
        const TraExecTile &tile = other.outputs[i];
        if (tile.tensor != index || !tile.owner)
          continue;
        std::vector<int64_t> sizes = tileShape(tile, info.rank);
        int tag = int(index % 1000);
        if (q == rank && rank == 0) {
          insertTile(dtype, shapeOf(info), whole->mutableData(),
                     tileOffsets(tile, info.rank), sizes, results[i].data());
        } else if (q == rank) {
          comm.send(results[i].data(), int64_t(results[i].byteSize()), 0,
                    30000 + tag);
        } else if (rank == 0) {
          HostTensor part = HostTensor::zeros(dtype, sizes);
          comm.recv(part.mutableData(), int64_t(part.byteSize()), int(q),
                    30000 + tag);
          insertTile(dtype, shapeOf(info), whole->mutableData(),
                     tileOffsets(tile, info.rank), sizes, part.data());
        }
      }
    }
    if (rank == 0) {
      Result<AtomicFileWriter> writer = prepareNpy(file, *whole);
      if (!writer)
        return Error{"result '" + std::string(info.name) +
                     "': " + writer.message()};
      files.push_back(std::move(*writer));
    }
  }
  if (Status status = commitAll(files); !status)
    return status.error();
  return 0;
}

int fail(const char *program, const std::string &message);

/// The hardware a GPU program was compiled for, as its errors name it.
std::string hardwareOf(const TraExecProgram &program) {
  return program.hardware && *program.hardware ? program.hardware : "a GPU";
}

/// The one line a GPU program prints where its GPU cannot be used: what the
/// program was built for, what it needs, and how to run the model here.
std::string gpuNeeded(const TraExecProgram &program, const std::string &why) {
  return "this program was compiled for " + hardwareOf(program) +
         " and needs an NVIDIA GPU with a CUDA 13 driver: " + why +
         "; compile the model with --emulate-on-cpu to run it on this "
         "machine's CPU";
}

std::string linkedWithoutCuda(const TraExecProgram &program) {
  return "this program was compiled for " + hardwareOf(program) +
         " (NVIDIA GPUs) but linked without the CUDA runtime (runtime/cuda)";
}

/// The lowest rank whose `ok` is false, or -1 (a collective over all ranks).
int firstFailingRank(const Communicator &comm, int rank, bool ok) {
  int64_t value = ok ? INT64_MAX : rank;
  comm.allreduce(&value, 1, TRA_MPI_I64, TRA_MPI_MIN, nullptr, 0);
  return value == INT64_MAX ? -1 : int(value);
}

/// Opens every rank's GPU and connects them; on failure the lowest failing
/// rank prints why (one line) and every rank returns false.
bool connectGpus(const TraExecProgram &program, const Communicator &comm,
                 int rank, const Accelerator *accelerator, const char *self) {
  Status status = accelerator ? accelerator->initialize()
                              : Status(Error{linkedWithoutCuda(program)});
  if (int first = firstFailingRank(comm, rank, bool(status)); first >= 0) {
    if (rank == first)
      fail(self, "rank " + std::to_string(rank) + ": " +
                     (accelerator ? gpuNeeded(program, status.message())
                                  : status.message()));
    return false;
  }
  status = accelerator->connect(comm, int(program.numRanks));
  if (int first = firstFailingRank(comm, rank, bool(status)); first >= 0) {
    if (rank == first)
      fail(self, "rank " + std::to_string(rank) + ": connecting the GPUs of " +
                     std::to_string(program.numRanks) + " ranks (" +
                     hardwareOf(program) + "): " + status.message());
    return false;
  }
  return true;
}

/// Runs a distributed program on this rank; returns the exit code.
int runDistributed(const TraExecProgram &program, const Options &options,
                   int argc, char **argv, const Communicator &comm,
                   const Accelerator *accelerator) {
  const char *self = argc > 0 ? argv[0] : "tra-program";
  comm.init(&argc, &argv, program.numRanks, uint64_t(program.fingerprint),
            self);
  int rank = comm.rank();
  // Errors every rank sees alike (names, missing values) are printed once;
  // a rank-specific failure (a file it cannot read) aborts the whole job.
  auto writes = resolveOutputs(program, options);
  for (const auto &[name, file] : options.inputs)
    if (writes && !findTensor(program.inputs, program.numInputs, name))
      writes =
          Error{"--input " + name + "=" + file + ": @" + program.entryName +
                " has no argument named '" + name + "' (arguments: " +
                nameList(program.inputs, program.numInputs) + ")"};
  if (!writes) {
    if (rank == 0)
      fail(self, writes.message());
    comm.finalize(0);
    return 1;
  }
  // A GPU program: every rank's GPU, connected to the others', before any
  // file is read or written.
  const Accelerator *gpu = nullptr;
  if (program.device == TRA_EXEC_CUDA) {
    if (!connectGpus(program, comm, rank, accelerator, self)) {
      comm.finalize(0);
      return 1;
    }
    gpu = accelerator;
  }
  Result<int> code = runRank(program, options, *writes, comm, rank, self, gpu);
  if (!code) {
    std::string message = std::string(self) + ": " + code.message();
    comm.fatal(message.c_str());
    return 1;
  }
  if (gpu) {
    // The moves between GPUs are not MPI's: the driver reports them.
    if (options.profile)
      std::fprintf(stderr, "tra: rank %d: %s\n", rank,
                   gpu->describeMoves().c_str());
    gpu->disconnect();
  }
  // With --profile the runtime adds what it handed MPI over the whole job.
  comm.finalize(options.profile ? 1 : 0);
  return *code;
}

/// Prints "PROGRAM: error: MESSAGE" and returns exit code 1.
int fail(const char *program, const std::string &message) {
  std::fprintf(stderr, "%s: error: %s\n", program, message.c_str());
  return 1;
}

} // namespace

int runProgram(const TraExecProgram &program, int argc, char **argv,
               const Communicator *communicator,
               const Accelerator *accelerator) {
  // Line-buffered stdout: its lines and stderr's stay in order when both go
  // to one pipe (--list, --profile).
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  const char *self = argc > 0 ? argv[0] : "tra-program";
  if (Status status = checkProgram(program); !status)
    return fail(self, status.message());
  Result<Options> options = parseOptions(argc, argv);
  if (!options)
    return fail(self, options.message());
  if (options->help) {
    std::printf(kUsage, self, program.entryName);
    return 0;
  }
  if (options->list) {
    printSignature(program);
    if (program.numRanks > 0)
      std::fprintf(stderr, "(distributed: run with mpirun -np %lld)\n",
                   static_cast<long long>(program.numRanks));
    return 0;
  }
  if (program.numRanks > 0) {
    if (!communicator)
      return fail(self, "this program runs on " +
                            std::to_string(program.numRanks) +
                            " MPI ranks but the executable was linked "
                            "without the MPI runtime");
    return runDistributed(program, *options, argc, argv, *communicator,
                          accelerator);
  }
  if (options->outputPerRank)
    return fail(self, "--output-per-rank is for distributed programs; @" +
                          std::string(program.entryName) +
                          " runs on one device");
  const Accelerator *gpu = nullptr;
  if (program.device == TRA_EXEC_CUDA) {
    if (!accelerator)
      return fail(self, linkedWithoutCuda(program));
    // One line: what the program was built for, what it needs, and how to
    // run the same model here.
    if (Status status = accelerator->initialize(); !status)
      return fail(self, gpuNeeded(program, status.message()));
    gpu = accelerator;
  }
  auto writes = resolveOutputs(program, *options);
  if (!writes)
    return fail(self, writes.message());
  Result<std::vector<HostTensor>> args = readArguments(program, *options);
  if (!args)
    return fail(self, args.message());
  if (Status status = run(program, *options, *args, *writes, gpu); !status)
    return fail(self, status.message());
  return 0;
}

} // namespace tra::exec
