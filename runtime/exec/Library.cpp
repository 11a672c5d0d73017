//===- Library.cpp - Loading programs compiled into shared libraries ------===//

#include "tra/Exec/Library.h"

#include <algorithm>
#include <cstdio>
#include <dlfcn.h>
#include <vector>

using namespace tra;
using namespace tra::exec;

/// Succeeds if the `count` tensors at `infos` are well formed.
static rt::Status checkTensors(const TraExecTensorInfo *infos, int64_t count,
                               bool inputs) {
  if (count < 0 || (count && !infos))
    return rt::Error{"malformed tensor table"};
  for (int64_t i = 0; i < count; ++i) {
    if (!infos[i].name || infos[i].rank < 0 ||
        (infos[i].rank && !infos[i].shape))
      return rt::Error{"malformed tensor table"};
    if (infos[i].dtype < TRA_EXEC_F32 || infos[i].dtype > TRA_EXEC_I8)
      return rt::Error{"tensor '" + std::string(infos[i].name) +
                       "' has an unknown element type " +
                       std::to_string(infos[i].dtype)};
    int64_t lastTier = inputs ? TRA_EXEC_TIER_DISK : TRA_EXEC_TIER_DEVICE;
    if (infos[i].tier < TRA_EXEC_TIER_DEVICE || infos[i].tier > lastTier)
      return rt::Error{"tensor '" + std::string(infos[i].name) +
                       "' has an unknown memory tier " +
                       std::to_string(infos[i].tier)};
  }
  return rt::Status::success();
}

/// Succeeds if the `count` tiles at `tiles` lie inside `infos`' tensors.
static rt::Status checkTiles(const TraExecTile *tiles, int64_t count,
                             const TraExecTensorInfo *infos,
                             int64_t numTensors) {
  if (count < 0 || (count && !tiles))
    return rt::Error{"malformed tile table"};
  for (int64_t i = 0; i < count; ++i) {
    const TraExecTile &tile = tiles[i];
    if (tile.tensor < 0 || tile.tensor >= numTensors)
      return rt::Error{"a tile of an unknown tensor"};
    const TraExecTensorInfo &info = infos[tile.tensor];
    if (info.rank && (!tile.offsets || !tile.shape))
      return rt::Error{"malformed tile table"};
    for (int64_t d = 0; d < info.rank; ++d)
      if (tile.offsets[d] < 0 || tile.shape[d] < 0 ||
          tile.offsets[d] + tile.shape[d] > info.shape[d])
        return rt::Error{"a tile outside tensor '" + std::string(info.name) +
                         "'"};
  }
  return rt::Status::success();
}

/// Succeeds if `p.outputAliases` is null, or names for each output -1 or an
/// input of its element type and shape that no other output names; never
/// for a distributed program.
static rt::Status checkOutputAliases(const TraExecProgram &p) {
  if (!p.outputAliases)
    return rt::Status::success();
  if (p.numRanks > 0)
    return rt::Error{"a distributed program with output aliases"};
  std::vector<bool> named(p.numInputs, false);
  for (int64_t i = 0; i < p.numOutputs; ++i) {
    int64_t input = p.outputAliases[i];
    if (input == -1)
      continue;
    const TraExecTensorInfo &out = p.outputs[i];
    if (input < 0 || input >= p.numInputs || named[input])
      return rt::Error{"output '" + std::string(out.name) +
                       "' may share the buffer of input " +
                       std::to_string(input) +
                       ", which is not an input or is named twice"};
    named[input] = true;
    const TraExecTensorInfo &in = p.inputs[input];
    if (in.dtype != out.dtype || in.rank != out.rank ||
        !std::equal(in.shape, in.shape + in.rank, out.shape))
      return rt::Error{"output '" + std::string(out.name) +
                       "' may share the buffer of input '" +
                       std::string(in.name) +
                       "' of another element type or shape"};
  }
  return rt::Status::success();
}

rt::Status tra::exec::checkDescriptor(const TraExecProgram &p) {
  if (p.abiVersion != TRA_EXEC_ABI_VERSION)
    return rt::Error{"descriptor ABI version " + std::to_string(p.abiVersion) +
                     ", this runtime expects " +
                     std::to_string(TRA_EXEC_ABI_VERSION)};
  if (!p.entryName)
    return rt::Error{"malformed program descriptor"};
  if (p.device != TRA_EXEC_HOST && p.device != TRA_EXEC_CUDA)
    return rt::Error{"a program for an unknown device kind " +
                     std::to_string(p.device)};
  if (rt::Status problem = checkTensors(p.inputs, p.numInputs, true);
      !problem.ok())
    return problem;
  if (rt::Status problem = checkTensors(p.outputs, p.numOutputs, false);
      !problem.ok())
    return problem;
  if (p.numRanks < 0 || (p.numRanks == 0 && !p.run) ||
      (p.numRanks > 0 && !p.ranks))
    return rt::Error{"malformed program descriptor"};
  if (rt::Status problem = checkOutputAliases(p); !problem.ok())
    return problem;
  for (int64_t r = 0; r < p.numRanks; ++r) {
    const TraExecRankProgram &rank = p.ranks[r];
    if (!rank.run)
      return rt::Error{"rank " + std::to_string(r) + " has no program"};
    for (const rt::Status &problem :
         {checkTiles(rank.inputs, rank.numInputs, p.inputs, p.numInputs),
          checkTiles(rank.outputs, rank.numOutputs, p.outputs, p.numOutputs)})
      if (!problem.ok())
        return rt::Error{"rank " + std::to_string(r) + ": " +
                         problem.message()};
  }
  return rt::Status::success();
}

rt::Result<std::unique_ptr<ProgramLibrary>>
ProgramLibrary::open(const std::string &path) {
  std::unique_ptr<ProgramLibrary> loaded(new ProgramLibrary());
  loaded->file = path;
  loaded->handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!loaded->handle) {
    const char *message = dlerror();
    return rt::fileError(path, std::string("cannot load: ") +
                                   (message ? message : "unknown error"));
  }
  loaded->descriptor = static_cast<const TraExecProgram *>(
      dlsym(loaded->handle, "tra_exec_program"));
  if (!loaded->descriptor)
    return rt::fileError(path,
                         "no tra_exec_program (not a library compiled by tra)");
  loaded->setThreads = reinterpret_cast<void (*)(int64_t)>(
      dlsym(loaded->handle, "tra_exec_set_num_threads"));
  if (!loaded->setThreads)
    return rt::fileError(
        path, "no tra_exec_set_num_threads (not linked with TRAExec)");
  loaded->setCosts = reinterpret_cast<void (*)(double, double, double)>(
      dlsym(loaded->handle, "tra_exec_set_parallel_costs"));
  if (!loaded->setCosts)
    return rt::fileError(
        path, "no tra_exec_set_parallel_costs (not linked with TRAExec)");
  loaded->takeFailure = reinterpret_cast<const char *(*)()>(
      dlsym(loaded->handle, "tra_exec_take_check_failure"));
  if (!loaded->takeFailure)
    return rt::fileError(
        path, "no tra_exec_take_check_failure (not linked with TRAExec)");
  // Optional: libraries compiled before tier fetches existed lack them.
  loaded->tierBytes = reinterpret_cast<int64_t (*)(int32_t)>(
      dlsym(loaded->handle, "tra_exec_tier_bytes"));
  loaded->tierTiles = reinterpret_cast<int64_t (*)(int32_t)>(
      dlsym(loaded->handle, "tra_exec_tier_fetches"));
  loaded->fetchCopyNs = reinterpret_cast<int64_t (*)()>(
      dlsym(loaded->handle, "tra_exec_fetch_copy_ns"));
  loaded->fetchWaitNs = reinterpret_cast<int64_t (*)()>(
      dlsym(loaded->handle, "tra_exec_fetch_wait_ns"));
  if (rt::Status problem = checkDescriptor(*loaded->descriptor); !problem.ok())
    return rt::fileError(path, problem.message());
  return loaded;
}

ProgramLibrary::~ProgramLibrary() {
  if (handle)
    dlclose(handle);
}

int64_t ProgramLibrary::outputAliasedInput(size_t output) const {
  if (!descriptor->outputAliases ||
      output >= static_cast<size_t>(descriptor->numOutputs))
    return -1;
  return descriptor->outputAliases[output];
}

rt::Status ProgramLibrary::takeCheckFailure() const {
  if (const char *failed = takeFailure())
    return rt::Error{"running @" + std::string(descriptor->entryName) + " of " +
                     file + ": " + failed};
  return rt::Status::success();
}

rt::Status ProgramLibrary::run(void *const *buffers) const {
  ++runs;
  descriptor->run(buffers);
  return takeCheckFailure();
}

rt::Status ProgramLibrary::runRank(int64_t rank, void *const *buffers) const {
  ++runs;
  descriptor->ranks[rank].run(buffers);
  return takeCheckFailure();
}

void ProgramLibrary::setNumThreads(int64_t threads) const {
  setThreads(std::max<int64_t>(1, threads));
  // The costs the program was compiled with decide which of its products
  // use those threads (ABI.h).
  setCosts(descriptor->threadSyncSeconds, descriptor->coreBytesPerSecond,
           descriptor->coreMacsPerSecond);
}

TierFetches ProgramLibrary::tierFetches() const {
  TierFetches fetches;
  if (!tierBytes || !tierTiles)
    return fetches;
  for (int32_t tier : {TRA_EXEC_TIER_HOST, TRA_EXEC_TIER_DISK}) {
    fetches.bytes[tier] = tierBytes(tier);
    fetches.tiles[tier] = tierTiles(tier);
  }
  if (fetchCopyNs && fetchWaitNs) {
    fetches.copyNs = fetchCopyNs();
    fetches.waitNs = fetchWaitNs();
  }
  return fetches;
}

std::string ProgramLibrary::describeTierFetches() const {
  TierFetches fetches = tierFetches();
  if (fetches.empty() || runs < 1)
    return "";
  const char *const names[] = {"device memory", "host memory", "disk"};
  std::string text = "fetched";
  const char *separator = " ";
  for (int tier : {TRA_EXEC_TIER_HOST, TRA_EXEC_TIER_DISK}) {
    if (fetches.tiles[tier] == 0)
      continue;
    int64_t tiles = fetches.tiles[tier] / runs;
    text += separator + std::to_string(fetches.bytes[tier] / runs) +
            " bytes in " + std::to_string(tiles) +
            (tiles == 1 ? " tile" : " tiles") + " from " + names[tier];
    separator = ", ";
  }
  text +=
      " per run (" + std::to_string(runs) + (runs == 1 ? " run)" : " runs)");
  // Non-blocking fetches on the host: the copying the runs waited for.
  if (fetches.copyNs > 0) {
    char overlap[128];
    std::snprintf(overlap, sizeof(overlap),
                  "; copies %.3f ms per run, %.3f ms of them not hidden "
                  "behind compute",
                  fetches.copyNs / 1e6 / runs, fetches.waitNs / 1e6 / runs);
    text += overlap;
  }
  return text;
}
