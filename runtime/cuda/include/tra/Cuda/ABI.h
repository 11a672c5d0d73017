/*===- ABI.h - C ABI of the CUDA runtime for compiled code --------*- C -*-===*\
|*                                                                            *|
|* The functions that programs compiled for NVIDIA GPUs call, implemented by  *|
|* libtra_cuda.so (runtime/cuda), which loads the CUDA driver and cuBLAS at   *|
|* run time (so a program starts, and says what is missing, on a machine      *|
|* without them):                                                             *|
|*  - the mgpu* functions are the calling convention of MLIR's GPU lowering   *|
|*    (gpu-to-llvm and the translation of gpu.binary / gpu.launch_func);      *|
|*  - tra_cuda_* are tra's own (cuBLAS contractions, error state).            *|
|*                                                                            *|
|* Every GPU operation of a process runs on one CUDA stream of one device, so *|
|* operations are ordered as the program issues them; the streams and events *|
|* of the mgpu* calls are handles of that stream. A failing call records the  *|
|* first error (naming the call or kernel) and makes later calls no-ops;      *|
|* tra_cuda_take_error reports it. Nothing here aborts the process.           *|
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

/** Element types of tra_cuda_gemm (the values of TraExecDType). */
enum { TRA_CUDA_F32 = 0, TRA_CUDA_F16 = 1, TRA_CUDA_BF16 = 2 };

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
