//===- Cuda.h - The CUDA runtime for tra programs ---------------*- C++ -*-===//
//
// What drivers and the engine use to run programs compiled for NVIDIA GPUs:
// the device of this process, its memory and the one stream every GPU
// operation runs on. The CUDA driver (libcuda.so.1) and cuBLAS
// (libcublas.so.13) are loaded when first needed, so that a program built
// for GPUs starts on any machine and reports what is missing. The C ABI that
// compiled code calls is ABI.h.
//
//===----------------------------------------------------------------------===//

#ifndef TRA_CUDA_CUDA_H
#define TRA_CUDA_CUDA_H

#include "tra/Runtime/Error.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace tra::cuda {

/// The device this process uses.
struct DeviceInfo {
  /// Its CUDA ordinal (after CUDA_VISIBLE_DEVICES).
  int ordinal = 0;
  /// Number of devices the process sees.
  int count = 0;
  std::string name;
  /// Compute capability.
  int major = 0, minor = 0;
  uint64_t totalMemory = 0;
  /// The driver's CUDA version, e.g. 13000.
  int driverVersion = 0;
};

/// Loads the driver and makes the device of this process current: the
/// ordinal in TRA_CUDA_DEVICE if set, else the MPI local rank
/// (OMPI_COMM_WORLD_LOCAL_RANK) modulo the device count, else 0. Succeeds at
/// once when already done; a failure (no driver, no device, a driver too old)
/// is returned on every call with the same message.
rt::Status initialize();

/// The device initialize() chose.
rt::Result<DeviceInfo> getDevice();

/// "GPU 0 (NVIDIA H200, sm_90)", or "the GPU" if there is none.
std::string describeDevice();

/// Device memory from the caching pool (stream-ordered: a block freed is
/// reused by later work on the stream). Zero bytes give a null pointer.
rt::Result<void *> allocate(size_t bytes);
void release(void *pointer);

/// Copies on the stream. `copyToHost` returns once the bytes are on the
/// host; `copyToDevice` once the source may be reused.
rt::Status copyToDevice(void *device, const void *host, size_t bytes);
rt::Status copyToHost(void *host, const void *device, size_t bytes);
rt::Status copyOnDevice(void *dst, const void *src, size_t bytes);
rt::Status fillZero(void *device, size_t bytes);

/// Page-locks (pins) the `bytes` of host memory at `host` that copies to
/// the device read (a memory tier's weights, which tile fetches copy on the
/// copy stream), so that the driver copies them directly and asynchronously
/// instead of staging them through its own pinned buffers. An optimisation
/// only: where the driver refuses (a range pinned already, a limit on locked
/// memory) the error is returned, the memory stays pageable and nothing is
/// left pending for synchronize(). Memory pinned here must be unpinned
/// before it is freed or unmapped.
rt::Status pinHostMemory(void *host, size_t bytes);
/// Unpins what pinHostMemory(host, ...) pinned, once the copies that may
/// read it are done; nothing for any other pointer (one not pinned, or
/// unpinned already).
void unpinHostMemory(void *host);

/// Waits until the stream is idle and returns the first error of any call
/// since the last check (clearing it), naming the call or kernel.
rt::Status synchronize();

/// How the ranks of a distributed program reach each other before NCCL
/// connects their GPUs: the launcher's blocking point-to-point messages
/// (the MPI runtime's tra_mpi_send / tra_mpi_recv).
struct Bootstrap {
  int rank = 0;
  int size = 1;
  void (*send)(const void *data, int64_t bytes, int dest, int tag) = nullptr;
  void (*recv)(void *data, int64_t bytes, int source, int tag) = nullptr;
};

/// Loads NCCL (libnccl.so.2, or the library TRA_NCCL names) once; the
/// result (and its error) is kept.
rt::Status loadCollectives();

/// Connects this rank's GPU with those of the other ranks of the job (one
/// NCCL communicator over all of them); collective over every rank, after
/// initialize(). Moves of compiled code (ABI.h's tra_cuda_send ...) need it.
rt::Status connectRanks(const Bootstrap &bootstrap);

/// What this process handed NCCL since it was connected (for --profile).
struct MoveStatistics {
  int64_t pointToPointSends = 0, pointToPointBytes = 0;
  int64_t allReduces = 0, allReduceBytes = 0;
  int64_t reduceScatters = 0, reduceScatterBytes = 0;
};
MoveStatistics getMoveStatistics();

/// "handed NCCL 1 all_reduce (168 bytes), 0 reduce_scatter (0 bytes), 1
/// point-to-point sends (60 bytes)".
std::string describeMoves();

/// Waits for the stream and destroys the communicators (before the
/// launcher finalizes); nothing if not connected.
void disconnectRanks();

/// Bytes the pool has handed out and holds for reuse.
struct PoolStatistics {
  uint64_t inUse = 0;
  uint64_t cached = 0;
  uint64_t peak = 0;
};
PoolStatistics getPoolStatistics();

/// Returns the pool's cached blocks to the driver (after synchronizing).
void releaseCachedMemory();

} // namespace tra::cuda

#endif // TRA_CUDA_CUDA_H
