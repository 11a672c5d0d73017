//===- Nccl.cpp - Tile moves between the GPUs of a job, through NCCL ------===//
//
// The tra_cuda_send ... tra_cuda_reduce_scatter calls of ABI.h (the moves of
// a distributed program whose tiles live in GPU memory) on NCCL, loaded at
// run time (libnccl.so.2, or TRA_NCCL for the tests). Every move is a NCCL
// operation on the process's one stream, issued where the program issues
// the move and ordered with its kernels by the stream: nothing waits on the
// host.
//
// Why one stream cannot deadlock: each NCCL operation completes once every
// participant has reached it on its stream. tra-localize places every move
// at one point of a global program order that every rank follows (a send
// and its receive at the same point, a collective at the same point on all
// members; lib/Conversion/PlanToComm/Localize.cpp), so each rank issues its
// operations in that order, and the earliest operation not yet complete has
// all of its participants waiting at it. The non-blocking moves therefore
// need nothing at their wait: a request is only a number.
//
// Communicators: the job's (every rank, NCCL rank = job rank) is created by
// connectRanks before the program runs: rank 0 asks NCCL for a unique id and
// sends it to every rank through the launcher (MPI). A collective over a
// group of ranks gets its own communicator the first time the group meets
// (the group's first rank sends the id to the others; all members reach
// that collective at the same point), kept for later collectives of the
// group. NCCL rank j of a group is its j-th rank, so reduce-scatter slice j
// lands on ranks[j].
//
//===----------------------------------------------------------------------===//

#include "Context.h"

#include "tra/Cuda/ABI.h"

#include <dlfcn.h>
#include <nccl.h>

#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

using namespace tra;
using namespace tra::cuda;

namespace {
struct NcclApi {
  ncclResult_t (*getVersion)(int *);
  ncclResult_t (*getUniqueId)(ncclUniqueId *);
  ncclResult_t (*commInitRank)(ncclComm_t *, int, ncclUniqueId, int);
  ncclResult_t (*commDestroy)(ncclComm_t);
  ncclResult_t (*allReduce)(const void *, void *, size_t, ncclDataType_t,
                            ncclRedOp_t, ncclComm_t, cudaStream_t);
  ncclResult_t (*reduceScatter)(const void *, void *, size_t, ncclDataType_t,
                                ncclRedOp_t, ncclComm_t, cudaStream_t);
  ncclResult_t (*reduce)(const void *, void *, size_t, ncclDataType_t,
                         ncclRedOp_t, int, ncclComm_t, cudaStream_t);
  ncclResult_t (*send)(const void *, size_t, ncclDataType_t, int, ncclComm_t,
                       cudaStream_t);
  ncclResult_t (*recv)(void *, size_t, ncclDataType_t, int, ncclComm_t,
                       cudaStream_t);
  ncclResult_t (*groupStart)();
  ncclResult_t (*groupEnd)();
  const char *(*getErrorString)(ncclResult_t);
  std::string library;
  int version = 0;
};

/// The tag of the launcher messages that carry unique ids (the program's
/// own moves do not use the launcher).
constexpr int kBootstrapTag = 29999;

struct Connection {
  Bootstrap bootstrap;
  ncclComm_t world = nullptr;
  std::map<std::vector<int>, ncclComm_t> groups;
  int64_t requests = 0;
  MoveStatistics moves;
};

std::once_flag loadOnce;
NcclApi nccl;
rt::Status loadStatus;
std::optional<Connection> connection;

rt::Status loadOnceImpl() {
  const char *override = std::getenv("TRA_NCCL");
  nccl.library = override && *override ? override : "libnccl.so.2";
  void *handle = dlopen(nccl.library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *why = dlerror();
    return rt::Error{"cannot load NCCL " + nccl.library + " (" +
                     (why ? why : "unknown error") +
                     "), which moves tiles between the GPUs: install NCCL 2 "
                     "or add it to LD_LIBRARY_PATH"};
  }
  auto bind = [&](auto &fn, const char *name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(
        dlsym(handle, name));
    return fn != nullptr;
  };
  // Each entry point by name; the first one missing is reported.
  const char *missing = nullptr;
  auto need = [&](auto &fn, const char *name) {
    if (!missing && !bind(fn, name))
      missing = name;
  };
  need(nccl.getVersion, "ncclGetVersion");
  need(nccl.getUniqueId, "ncclGetUniqueId");
  need(nccl.commInitRank, "ncclCommInitRank");
  need(nccl.commDestroy, "ncclCommDestroy");
  need(nccl.allReduce, "ncclAllReduce");
  need(nccl.reduceScatter, "ncclReduceScatter");
  need(nccl.reduce, "ncclReduce");
  need(nccl.send, "ncclSend");
  need(nccl.recv, "ncclRecv");
  need(nccl.groupStart, "ncclGroupStart");
  need(nccl.groupEnd, "ncclGroupEnd");
  need(nccl.getErrorString, "ncclGetErrorString");
  if (missing)
    return rt::Error{"NCCL " + nccl.library + " lacks " + missing};
  if (nccl.getVersion(&nccl.version) != ncclSuccess)
    nccl.version = 0;
  // Send and receive (the point-to-point moves) came with NCCL 2.7.
  if (nccl.version < 2700)
    return rt::Error{"NCCL " + nccl.library + " is version " +
                     std::to_string(nccl.version) + "; tra needs 2.7 or newer"};
  return rt::Status::success();
}

std::string describe(ncclResult_t result) {
  return nccl.getErrorString ? nccl.getErrorString(result)
                             : "NCCL error " + std::to_string(int(result));
}

/// Checks the result of NCCL call `what`; records and returns false on
/// failure.
bool checkNccl(ncclResult_t result, const std::string &what) {
  if (result == ncclSuccess)
    return true;
  recordError(what + ": " + describe(result));
  return false;
}

/// A communicator over `ranks` in this order, created on first use: its
/// first rank makes the unique id and sends it to the others.
ncclComm_t communicator(const int32_t *ranks, int32_t count) {
  Connection &c = *connection;
  std::vector<int> members(ranks, ranks + count);
  bool everyRank = count == c.bootstrap.size;
  for (int32_t j = 0; everyRank && j < count; ++j)
    everyRank = ranks[j] == j;
  if (everyRank)
    return c.world;
  if (auto it = c.groups.find(members); it != c.groups.end())
    return it->second;
  int index = -1;
  for (int32_t j = 0; j < count; ++j)
    if (ranks[j] == c.bootstrap.rank)
      index = j;
  if (index < 0) {
    recordError("a collective over ranks that do not include rank " +
                std::to_string(c.bootstrap.rank));
    return nullptr;
  }
  ncclUniqueId id;
  if (index == 0) {
    if (!checkNccl(nccl.getUniqueId(&id), "ncclGetUniqueId"))
      return nullptr;
    for (int32_t j = 1; j < count; ++j)
      c.bootstrap.send(&id, sizeof(id), ranks[j], kBootstrapTag);
  } else {
    c.bootstrap.recv(&id, sizeof(id), ranks[0], kBootstrapTag);
  }
  ncclComm_t comm = nullptr;
  if (!checkNccl(nccl.commInitRank(&comm, count, id, index),
                 "ncclCommInitRank (a group of " + std::to_string(count) +
                     " ranks)"))
    return nullptr;
  c.groups.emplace(std::move(members), comm);
  return comm;
}

/// The NCCL type of a TRA_CUDA_* element type of a collective (the values
/// of TRA_MPI_F32 ... TRA_MPI_I64).
std::optional<ncclDataType_t> toNcclType(int32_t dtype, size_t *bytes) {
  switch (dtype) {
  case TRA_CUDA_F32:
    *bytes = 4;
    return ncclFloat32;
  case TRA_CUDA_F16:
    *bytes = 2;
    return ncclFloat16;
  case TRA_CUDA_BF16:
    *bytes = 2;
    return ncclBfloat16;
  case TRA_CUDA_I64:
    *bytes = 8;
    return ncclInt64;
  default:
    return std::nullopt;
  }
}

/// The NCCL reduction of a tra_comm reduction kind (sum, max, min, prod).
std::optional<ncclRedOp_t> toNcclOp(int32_t op) {
  switch (op) {
  case 0:
    return ncclSum;
  case 1:
    return ncclMax;
  case 2:
    return ncclMin;
  case 3:
    return ncclProd;
  default:
    return std::nullopt;
  }
}

/// The stream of a process connected to the other ranks' GPUs, or a null
/// `api` (nothing to do: an error is pending, or is recorded now).
Active activeConnection(const char *call) {
  Active active = activate();
  if (active.api && !connection) {
    recordError(std::string(call) +
                ": the GPUs of the job are not connected (a distributed GPU "
                "program must run under its driver, which connects them)");
    return Active();
  }
  return active;
}

/// A point-to-point move of `bytes` bytes with `peer` on the job's
/// communicator.
void pointToPoint(bool sending, void *data, int64_t bytes, int32_t peer) {
  const char *call = sending ? "ncclSend" : "ncclRecv";
  Active active = activeConnection(call);
  if (!active.api || bytes == 0)
    return;
  Connection &c = *connection;
  if (bytes < 0 || peer < 0 || peer >= c.bootstrap.size ||
      peer == c.bootstrap.rank) {
    recordError(std::string(call) + ": invalid move of " +
                std::to_string(bytes) + " bytes with rank " +
                std::to_string(peer));
    return;
  }
  std::string what = std::string(call) + " (" + std::to_string(bytes) +
                     " bytes " + (sending ? "to" : "from") + " rank " +
                     std::to_string(peer) + ")";
  if (sending) {
    ++c.moves.pointToPointSends;
    c.moves.pointToPointBytes += bytes;
  }
  if (sending)
    checkNccl(
        nccl.send(data, size_t(bytes), ncclInt8, peer, c.world, active.stream),
        what);
  else
    checkNccl(
        nccl.recv(data, size_t(bytes), ncclInt8, peer, c.world, active.stream),
        what);
}
} // namespace

rt::Status tra::cuda::loadCollectives() {
  std::call_once(loadOnce, [] { loadStatus = loadOnceImpl(); });
  return loadStatus;
}

rt::Status tra::cuda::connectRanks(const Bootstrap &bootstrap) {
  if (rt::Status status = initialize(); !status)
    return status;
  if (rt::Status status = loadCollectives(); !status)
    return status;
  if (connection)
    return rt::Error{"the GPUs of the job are connected already"};
  if (bootstrap.size < 1 || bootstrap.rank < 0 ||
      bootstrap.rank >= bootstrap.size || !bootstrap.send || !bootstrap.recv)
    return rt::Error{"invalid job for NCCL: rank " +
                     std::to_string(bootstrap.rank) + " of " +
                     std::to_string(bootstrap.size)};
  // NCCL takes the device that is current on the calling thread.
  Active active = activate();
  if (!active.api)
    return synchronize();
  ncclUniqueId id;
  if (bootstrap.rank == 0) {
    if (ncclResult_t r = nccl.getUniqueId(&id); r != ncclSuccess)
      return rt::Error{"ncclGetUniqueId: " + describe(r)};
    for (int q = 1; q < bootstrap.size; ++q)
      bootstrap.send(&id, sizeof(id), q, kBootstrapTag);
  } else {
    bootstrap.recv(&id, sizeof(id), 0, kBootstrapTag);
  }
  ncclComm_t world = nullptr;
  if (ncclResult_t r =
          nccl.commInitRank(&world, bootstrap.size, id, bootstrap.rank);
      r != ncclSuccess)
    return rt::Error{"ncclCommInitRank (rank " +
                     std::to_string(bootstrap.rank) + " of " +
                     std::to_string(bootstrap.size) + ", " + nccl.library +
                     "): " + describe(r)};
  connection.emplace();
  connection->bootstrap = bootstrap;
  connection->world = world;
  return rt::Status::success();
}

MoveStatistics tra::cuda::getMoveStatistics() {
  return connection ? connection->moves : MoveStatistics();
}

std::string tra::cuda::describeMoves() {
  MoveStatistics m = getMoveStatistics();
  return "handed NCCL " + std::to_string(m.allReduces) + " all_reduce (" +
         std::to_string(m.allReduceBytes) + " bytes), " +
         std::to_string(m.reduceScatters) + " reduce_scatter (" +
         std::to_string(m.reduceScatterBytes) + " bytes), " +
         std::to_string(m.pointToPointSends) + " point-to-point sends (" +
         std::to_string(m.pointToPointBytes) + " bytes)";
}

void tra::cuda::disconnectRanks() {
  if (!connection)
    return;
  // The communicators' work must be done before they go.
  (void)synchronize();
  for (auto &[_, comm] : connection->groups)
    nccl.commDestroy(comm);
  nccl.commDestroy(connection->world);
  connection.reset();
}

extern "C" {
void tra_cuda_send(const void *data, int64_t bytes, int32_t dest,
                   int32_t /*tag*/) {
  pointToPoint(/*sending=*/true, const_cast<void *>(data), bytes, dest);
}

void tra_cuda_recv(void *data, int64_t bytes, int32_t source, int32_t /*tag*/) {
  pointToPoint(/*sending=*/false, data, bytes, source);
}

int64_t tra_cuda_isend(const void *data, int64_t bytes, int32_t dest,
                       int32_t tag) {
  tra_cuda_send(data, bytes, dest, tag);
  return connection ? ++connection->requests : 0;
}

int64_t tra_cuda_irecv(void *data, int64_t bytes, int32_t source, int32_t tag) {
  tra_cuda_recv(data, bytes, source, tag);
  return connection ? ++connection->requests : 0;
}

void tra_cuda_wait(int64_t /*request*/) {
  // The move is on the stream, ahead of every later use of its buffer.
}

void tra_cuda_allreduce(void *data, int64_t count, int32_t dtype, int32_t op,
                        const int32_t *ranks, int32_t nranks) {
  Active active = activeConnection("ncclAllReduce");
  if (!active.api || count == 0)
    return;
  size_t bytes = 0;
  std::optional<ncclDataType_t> type = toNcclType(dtype, &bytes);
  std::optional<ncclRedOp_t> reduction = toNcclOp(op);
  if (!type || !reduction || count < 0 || nranks < 1) {
    recordError("ncclAllReduce: invalid element type " + std::to_string(dtype) +
                ", reduction " + std::to_string(op) + " or count " +
                std::to_string(count));
    return;
  }
  ncclComm_t comm = communicator(ranks, nranks);
  if (!comm)
    return;
  ++connection->moves.allReduces;
  connection->moves.allReduceBytes += count * int64_t(bytes);
  checkNccl(nccl.allReduce(data, data, size_t(count), *type, *reduction, comm,
                           active.stream),
            "ncclAllReduce (" + std::to_string(count) + " elements over " +
                std::to_string(nranks) + " ranks)");
}

void tra_cuda_reduce_scatter(const void *send, void *recv,
                             const int64_t *counts, int32_t dtype, int32_t op,
                             const int32_t *ranks, int32_t nranks) {
  Active active = activeConnection("ncclReduceScatter");
  if (!active.api)
    return;
  size_t bytes = 0;
  std::optional<ncclDataType_t> type = toNcclType(dtype, &bytes);
  std::optional<ncclRedOp_t> reduction = toNcclOp(op);
  bool valid = type && reduction && nranks >= 1;
  bool even = true;
  for (int32_t j = 0; valid && j < nranks; ++j) {
    valid = counts[j] >= 0;
    even = even && counts[j] == counts[0];
  }
  if (!valid) {
    recordError("ncclReduceScatter: invalid element type " +
                std::to_string(dtype) + ", reduction " + std::to_string(op) +
                " or counts");
    return;
  }
  ncclComm_t comm = communicator(ranks, nranks);
  if (!comm)
    return;
  ++connection->moves.reduceScatters;
  for (int32_t j = 0; j < nranks; ++j)
    connection->moves.reduceScatterBytes += counts[j] * int64_t(bytes);
  std::string what = "ncclReduceScatter (over " + std::to_string(nranks) +
                     " ranks, " + std::to_string(counts[0]) +
                     (even ? "" : "...") + " elements each)";
  if (even) {
    if (counts[0])
      checkNccl(nccl.reduceScatter(send, recv, size_t(counts[0]), *type,
                                   *reduction, comm, active.stream),
                what);
    return;
  }
  // Slices of different sizes: slice j reduced onto member j, as one group.
  if (!checkNccl(nccl.groupStart(), "ncclGroupStart"))
    return;
  const char *base = static_cast<const char *>(send);
  size_t offset = 0;
  bool ok = true;
  for (int32_t j = 0; ok && j < nranks; ++j) {
    if (counts[j])
      ok = checkNccl(nccl.reduce(base + offset, recv, size_t(counts[j]), *type,
                                 *reduction, j, comm, active.stream),
                     what);
    offset += size_t(counts[j]) * bytes;
  }
  checkNccl(nccl.groupEnd(), "ncclGroupEnd");
}
} // extern "C"
