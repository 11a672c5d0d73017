/*===- ABI.h - C ABI of the CUDA runtime for compiled code --------*- C -*-===*\
|*                                                                            *|
|* The functions that programs compiled for NVIDIA GPUs call, implemented by  *|
|* libtra_cuda.so (runtime/cuda), which loads the CUDA driver and cuBLAS at   *|
|* run time (so a program starts, and says what is missing, on a machine      *|
|* without them):                                                             *|
|*  - the mgpu* functions are the calling convention of MLIR's GPU lowering   *|
|*    (gpu-to-llvm and the translation of gpu.binary / gpu.launch_func);      *|
|*  - tra_cuda_* are tra's own (cuBLAS contractions, moves between the GPUs  *|
|*    of a job through NCCL, error state).                                    *|
|*                                                                            *|
|* Every GPU operation of a process runs on one CUDA stream of one device, so *|
|* operations are ordered as the program issues them; the streams and events  *|
|* of the mgpu* calls are handles of that stream. Only tile fetches           *|
|* (tra_cuda_fetch_start) run on a second, copy stream, ordered with the      *|
|* first by events. A failing call records the first error (naming the call   *|
|* or kernel) and makes later calls no-ops; tra_cuda_take_error reports it.   *|
|* Nothing here aborts the process.                                           *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef TRA_CUDA_ABI_H
#define TRA_CUDA_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Modules: `data` is a cubin or fatbin that stays valid while the module is
 * loaded; it is handed to the driver when a kernel is first looked up. */
void *mgpuModuleLoad(void *data, size_t size);
void mgpuModuleUnload(void *module);
void *mgpuModuleGetFunction(void *module, const char *name);
void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                      intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                      intptr_t blockZ, int32_t sharedMemoryBytes, void *stream,
                      void **params, void **extra, size_t paramsCount);

/* Streams and events (handles of the process's one stream). */
void *mgpuStreamCreate(void);
void mgpuStreamDestroy(void *stream);
void mgpuStreamSynchronize(void *stream);
void mgpuStreamWaitEvent(void *stream, void *event);
void *mgpuEventCreate(void);
void mgpuEventDestroy(void *event);
void mgpuEventSynchronize(void *event);
void mgpuEventRecord(void *event, void *stream);

/* Device memory from the caching pool (host-shared: managed memory). */
void *mgpuMemAlloc(uint64_t sizeBytes, void *stream, int8_t isHostShared);
void mgpuMemFree(void *ptr, void *stream);
void mgpuMemcpy(void *dst, void *src, size_t sizeBytes, void *stream);
void mgpuMemset32(void *dst, uint32_t value, size_t count, void *stream);
void mgpuMemset16(void *dst, uint16_t value, size_t count, void *stream);
void mgpuSetDefaultDevice(int32_t device);

/* Copies that host code issues (tra-map-to-gpu). tra_cuda_memcpy runs on the
 * stream (device to device, or host to device) and returns at once;
 * tra_cuda_read returns once the bytes are on the host (it waits for the
 * stream; after an error it writes zeros); tra_cuda_write copies host bytes
 * to the device, and the host buffer may be reused when it returns. */
void tra_cuda_memcpy(void *dst, const void *src, int64_t bytes);
void tra_cuda_read(void *host, const void *device, int64_t bytes);
void tra_cuda_write(void *device, const void *host, int64_t bytes);

/* Copies a strided region of `rank` (1 to 4) dimensions, sizes size0...,
 * from `src` to `dst` on the stream; strides are in elements of
 * `elementBytes` bytes (unused trailing arguments are ignored). Dimensions
 * that are one run in both buffers are merged; the innermost one left is
 * copied as the rows of cuMemcpy2DAsync (rows of one element where it is
 * not contiguous), the others are looped over on the host. */
void tra_cuda_copy_strided(void *dst, const void *src, int64_t elementBytes,
                           int64_t rank, int64_t size0, int64_t size1,
                           int64_t size2, int64_t size3, int64_t dstStride0,
                           int64_t dstStride1, int64_t dstStride2,
                           int64_t dstStride3, int64_t srcStride0,
                           int64_t srcStride1, int64_t srcStride2,
                           int64_t srcStride3);

/* Tile fetches: a copy that overlaps the kernels of the stream.
 * tra_cuda_fetch_start starts copying a strided region (the arguments of
 * tra_cuda_copy_strided) from `src` (host memory a weight tier keeps, or
 * device memory) to the device buffer `dst` on the process's copy stream,
 * after everything issued to the stream so far (so `dst` is free to be
 * written), and returns a handle (>= 0; -1 after an error) for
 * tra_cuda_fetch_wait, which makes later work on the stream wait for the
 * copy. The host does not wait. Each handle is waited for once (an unknown
 * handle is an error). Until the wait, `dst` and `src` stay allocated, and
 * work issued to the stream after the start neither touches `dst` nor
 * writes `src`. tra_cuda_take_error also waits for fetches not waited
 * for. */
int64_t tra_cuda_fetch_start(void *dst, const void *src, int64_t elementBytes,
                             int64_t rank, int64_t size0, int64_t size1,
                             int64_t size2, int64_t size3, int64_t dstStride0,
                             int64_t dstStride1, int64_t dstStride2,
                             int64_t dstStride3, int64_t srcStride0,
                             int64_t srcStride1, int64_t srcStride2,
                             int64_t srcStride3);
void tra_cuda_fetch_wait(int64_t handle);

/** Element types of tra_cuda_gemm (the values of TraExecDType) and of the
 * collectives (which also take TRA_CUDA_I64; the values of TRA_MPI_*). */
enum {
  TRA_CUDA_F32 = 0,
  TRA_CUDA_F16 = 1,
  TRA_CUDA_BF16 = 2,
  TRA_CUDA_I64 = 3
};

/**
 * For each of `batch` matrices b, computes
 *   C_b = alpha * op(A_b) * op(B_b) + beta * C_b
 * on the device, with row-major C_b (M x N, leading dimension ldc), op(A_b)
 * M x K and op(B_b) K x N, each read as stored (trans = 0) or transposed
 * (trans = 1) with its leading dimension; X_b starts `strideX` elements after
 * X_{b-1}. A and B have element type `inputType`, C `outputType` (the same,
 * or f32 for f16 and bf16 inputs); products are accumulated in f32 (tensor
 * cores for f16 and bf16). Calls cublasGemmStridedBatchedEx.
 */
void tra_cuda_gemm(int64_t inputType, int64_t outputType, int64_t batch,
                   int64_t transA, int64_t transB, int64_t m, int64_t n,
                   int64_t k, float alpha, const void *a, int64_t lda,
                   int64_t strideA, const void *b, int64_t ldb, int64_t strideB,
                   float beta, void *c, int64_t ldc, int64_t strideC);

/* Moves between the GPUs of a distributed program (the tra_comm ops of a
 * module with tra_comm.device = "cuda"), with the arguments of the MPI
 * runtime's tra_mpi_* calls (tra/Runtime/Mpi.h) but on device memory. Each
 * is a NCCL operation on the stream (Nccl.cpp): send/recv move bytes with a
 * peer rank (the tag is not needed: the stream orders the moves); isend/
 * irecv are the same operations and return a request number that
 * tra_cuda_wait accepts (the stream orders later uses of the buffer after
 * the move); allreduce reduces `count` elements in place over `ranks`;
 * reduce_scatter reduces the slices of `send` (counts[j] elements for member
 * j, one after another) and leaves slice j in member j's `recv`. `op` is the
 * tra_comm reduction (0 sum, 1 max, 2 min, 3 prod). The process must be
 * connected (tra::cuda::connectRanks, which the driver calls). */
void tra_cuda_send(const void *data, int64_t bytes, int32_t dest, int32_t tag);
void tra_cuda_recv(void *data, int64_t bytes, int32_t source, int32_t tag);
int64_t tra_cuda_isend(const void *data, int64_t bytes, int32_t dest,
                       int32_t tag);
int64_t tra_cuda_irecv(void *data, int64_t bytes, int32_t source, int32_t tag);
void tra_cuda_wait(int64_t request);
void tra_cuda_allreduce(void *data, int64_t count, int32_t dtype, int32_t op,
                        const int32_t *ranks, int32_t nranks);
void tra_cuda_reduce_scatter(const void *send, void *recv,
                             const int64_t *counts, int32_t dtype, int32_t op,
                             const int32_t *ranks, int32_t nranks);

/**
 * Waits for the stream and returns 0 if no call has failed since the last
 * tra_cuda_take_error; otherwise copies the first error's message (NUL
 * terminated, truncated to `size`) to `message`, clears it and returns 1.
 */
int tra_cuda_take_error(char *message, size_t size);

#ifdef __cplusplus
}
#endif

#endif /* TRA_CUDA_ABI_H */
