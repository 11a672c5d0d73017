/*===- ABI.h - C ABI between generated code and the exec runtime -*- C -*-===*\
|*                                                                            *|
|* The one place that declares the C interface between an object file that   *|
|* tra compiles and the executable runtime (runtime/exec):                    *|
|*                                                                            *|
|*  - the compiled object defines `tra_exec_program`, a descriptor of the     *|
|*    entry function: its arguments and results (names, element types,       *|
|*    shapes) and a `run` function that calls it;                             *|
|*  - the compiled code calls the runtime functions declared below (BLAS).    *|
|*                                                                            *|
|* The compiler writes the descriptor with LLVM's IRBuilder                   *|
|* (lib/Target/ProgramDescriptor.cpp), so its layout is fixed here: every     *|
|* field is 8 bytes (pointers and int64_t), with no padding. Any change to it *|
|* bumps TRA_EXEC_ABI_VERSION.                                                *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef TRA_EXEC_ABI_H
#define TRA_EXEC_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Version of the descriptor layout below. */
#define TRA_EXEC_ABI_VERSION 8

/** Where a program runs. */
typedef enum TraExecDevice {
  /** On the host's cores; buffers are host memory. */
  TRA_EXEC_HOST = 0,
  /** On an NVIDIA GPU through runtime/cuda; `run` takes device pointers. */
  TRA_EXEC_CUDA = 1
} TraExecDevice;

/** Element types of entry tensors. */
typedef enum TraExecDType {
  TRA_EXEC_F32 = 0,
  TRA_EXEC_F16 = 1,
  TRA_EXEC_BF16 = 2,
  TRA_EXEC_I64 = 3,
  TRA_EXEC_I32 = 4,
  /** i1, one byte per element holding 0 or 1 (NumPy's bool). */
  TRA_EXEC_BOOL = 5,
  /** Signed 8-bit integers (quantised weights). */
  TRA_EXEC_I8 = 6
} TraExecDType;

/** Where the plan keeps an argument (`tra_plan.tier`). */
typedef enum TraExecTier {
  /** In device memory for the whole run (every result, most arguments). */
  TRA_EXEC_TIER_DEVICE = 0,
  /** In the node's host memory: the program copies it to the device before
   * each operation that reads it, so on a GPU its buffer may stay in host
   * memory (`run` takes a host pointer for it). */
  TRA_EXEC_TIER_HOST = 1,
  /** On the node's disk (the checkpoint): likewise, read before each use;
   * the buffer may be a memory-mapped file not brought into memory. */
  TRA_EXEC_TIER_DISK = 2
} TraExecTier;

/** One argument or result of the entry function: a dense row-major tensor. */
typedef struct TraExecTensorInfo {
  /** Its `tra.name` (or "arg<i>" / "result<i>"). */
  const char *name;
  /** A TraExecDType. */
  int64_t dtype;
  int64_t rank;
  /** `rank` extents. */
  const int64_t *shape;
  /** A TraExecTier (always TRA_EXEC_TIER_DEVICE for results). */
  int64_t tier;
} TraExecTensorInfo;

/** One tile of an entry tensor that one rank of a distributed program holds. */
typedef struct TraExecTile {
  /** Index of the tensor in the program's `inputs` (or `outputs`). */
  int64_t tensor;
  /** Where the tile starts in the whole tensor, and its extents (`rank` of
   * the tensor entries each). */
  const int64_t *offsets;
  const int64_t *shape;
  /** Outputs: 1 if this rank reports the tile (the lowest rank holding a
   * copy), 0 otherwise. */
  int64_t owner;
} TraExecTile;

/** The program of one rank of a distributed program. */
typedef struct TraExecRankProgram {
  int64_t numInputs;
  const TraExecTile *inputs;
  int64_t numOutputs;
  const TraExecTile *outputs;
  /** Runs the rank's program: `buffers` holds the input tiles, then the
   * output tiles, dense row-major, in the order above. */
  void (*run)(void *const *buffers);
} TraExecRankProgram;

/** The descriptor of a compiled entry function. */
typedef struct TraExecProgram {
  /** TRA_EXEC_ABI_VERSION of the compiler that wrote it. */
  int64_t abiVersion;
  /** The entry function's name in the model. */
  const char *entryName;
  int64_t numInputs;
  const TraExecTensorInfo *inputs;
  int64_t numOutputs;
  const TraExecTensorInfo *outputs;
  /**
   * Runs the entry function (null for a distributed program). `buffers`
   * holds numInputs + numOutputs pointers to dense row-major data: the
   * inputs (only read), then the outputs (fully written). Buffers must not
   * overlap outputs, except as `outputAliases` allows.
   */
  void (*run)(void *const *buffers);
  /** Threads the hardware description gives the device; 0 if unknown. */
  int64_t numThreads;
  /** Number of profiled ops (ids 0 .. numOps - 1 of the profiling calls). */
  int64_t numOps;
  /** What each profiled op is, e.g. "tra.einsum \"ij,jk->ik\" at m.mlir:3:8".
   */
  const char *const *opNames;
  /**
   * 0 for a program one process runs on whole tensors (`run`). N > 0 for a
   * distributed program of N MPI ranks: rank r runs `ranks[r]` on the tiles
   * it holds, and `run` is null.
   */
  int64_t numRanks;
  const TraExecRankProgram *ranks;
  /** Distributed programs: a hash of the plan that every rank compares at
   * start-up. */
  int64_t fingerprint;
  /** A TraExecDevice. */
  int64_t device;
  /** The hardware description the program was compiled for ("" if not
   * known), for messages. */
  const char *hardware;
  /**
   * Null, or numOutputs entries: for output i, the index of the input whose
   * buffer `run` may also be given as output i's, or -1. The output then
   * starts as a copy of that input, which the program skips when both are
   * one buffer (a KV cache updated in place): the results are the same as
   * with two buffers, and the input's contents are the output's afterwards.
   * Only the very same pointer is allowed, and that buffer must not overlap
   * any other input or output. Each input is named at most once, and only
   * with its element type and shape. Always null for a distributed program.
   */
  const int64_t *outputAliases;
  /**
   * When running on threads pays (tra/Exec/ParallelCosts.h): the seconds one
   * parallel region costs beyond its work, and one core's streaming rate
   * (bytes/s) and f32 multiply-adds per second, from the hardware
   * description the program was compiled for; zeros if it gave none. The
   * executable driver and the loader pass them to
   * tra_exec_set_parallel_costs.
   */
  double threadSyncSeconds;
  double coreBytesPerSecond;
  double coreMacsPerSecond;
} TraExecProgram;

/** The descriptor, defined by the compiled object. */
extern const TraExecProgram tra_exec_program;

/**
 * For each of `batch` matrices b, computes
 *   C_b = alpha * op(A_b) * op(B_b) + beta * C_b
 * with row-major C_b (M x N, leading dimension ldc), op(A_b) M x K and op(B_b)
 * K x N, each read as stored (trans = 0) or transposed (trans = 1) with its
 * leading dimension; X_b starts at X + b * strideX. Calls cblas_sgemm, or
 * for M == 1 cblas_sgemv.
 */
void tra_exec_sgemm(int64_t batch, int64_t transA, int64_t transB, int64_t m,
                    int64_t n, int64_t k, float alpha, const float *a,
                    int64_t lda, int64_t strideA, const float *b, int64_t ldb,
                    int64_t strideB, float beta, float *c, int64_t ldc,
                    int64_t strideC);

/**
 * tra_exec_sgemm for 16-bit A and B (`inputType` TRA_EXEC_F16 or
 * TRA_EXEC_BF16, element strides and leading dimensions in elements) and an
 * f32 C (`outputType` TRA_EXEC_F32): the products are exact in f32 and
 * accumulate in f32. B is widened in panels of columns of C small enough to
 * stay in the cache, each multiplied at once, so that B is read from memory
 * once, in its 16-bit form (a decoding step's weights), and no f32 copy of it
 * is kept. The signature is tra_cuda_gemm's.
 */
void tra_exec_gemm_mixed(int64_t inputType, int64_t outputType, int64_t batch,
                         int64_t transA, int64_t transB, int64_t m, int64_t n,
                         int64_t k, float alpha, const void *a, int64_t lda,
                         int64_t strideA, const void *b, int64_t ldb,
                         int64_t strideB, float beta, void *c, int64_t ldc,
                         int64_t strideC);

/**
 * C = A * W^T (+ C when beta == 1) for weights W in llama.cpp's Q8_0, with
 * row-major f32 C (m x n, row i at c + i * ldc) and A (m x 32 * blocks, row
 * i at a + i * lda), and W (n x 32 * blocks) split into two arrays: int8
 * quants `q` and IEEE-half scales (their bits), one per block of 32
 * elements of a row,
 *   W[j][32 * b + t] = q[j * ldq + 32 * b + t] * half(scales[j * lds + b]).
 * beta is 0 (C is overwritten, whatever it held, NaN included) or 1
 * (accumulate); blocks == 0 gives C = beta * C. The element products are
 * exact in f32 and sum in f32. W is read from memory once, in its 34 bytes
 * per 32 weights (a decoding step's projections), and no f32 copy of it is
 * kept. Leading dimensions are in elements.
 */
void tra_exec_gemm_q8(int64_t m, int64_t n, int64_t blocks, const float *a,
                      int64_t lda, const int8_t *q, int64_t ldq,
                      const uint16_t *scales, int64_t lds, float beta, float *c,
                      int64_t ldc);

/** A one-dimensional memref of f32 as compiled code passes it (MLIR's
 * descriptor: allocated and aligned pointers, offset, size, stride). */
typedef struct TraExecMemRefF32 {
  float *allocated;
  float *aligned;
  int64_t offset;
  int64_t size;
  int64_t stride;
} TraExecMemRefF32;
/** The same for 16-bit elements (f16 or bf16 bits). */
typedef struct TraExecMemRefU16 {
  uint16_t *allocated;
  uint16_t *aligned;
  int64_t offset;
  int64_t size;
  int64_t stride;
} TraExecMemRefU16;
/** The same for int8 elements (Q8_0 quants). */
typedef struct TraExecMemRefI8 {
  int8_t *allocated;
  int8_t *aligned;
  int64_t offset;
  int64_t size;
  int64_t stride;
} TraExecMemRefI8;

/**
 * The micro-kernel of the runtime's packed GEMM, which a compiled program
 * that calls the products above defines (tra-emit-cpu-microkernels: the
 * vector dialect, compiled for the program's target CPU). For the packed
 * slivers pa (kc x 8, pa[p * 8 + r]) and pb (kc x 32, pb[p * 32 + j]), sets
 *   C[r * ldc + j] = alpha * sum_p pa[p * 8 + r] * pb[p * 32 + j]
 *                    + beta * C[r * ldc + j]
 * for r < rows (at most 8) and j < cols (at most 32); C is read only when
 * beta is not 0. The runtime references it weakly: in a program without it
 * (or after tra_exec_use_generated_kernels(0)) its own AVX-512 kernel runs.
 * (ciface: MLIR's C interface of the generated function.)
 */
void _mlir_ciface_tra_exec_microkernel_f32_8x32(
    int64_t kc, TraExecMemRefF32 *pa, TraExecMemRefF32 *pb, TraExecMemRefF32 *c,
    int64_t ldc, int64_t rows, int64_t cols, float alpha, float beta);

/**
 * The dot products of one-row products (a decoding step's projections),
 * which a compiled program that calls the products above defines too:
 *   out[j] = sum over i < k of a[i] * b[j * ldb + i]   for j < rows,
 * b in f32, f16 or bf16 (widened in registers), each sum in f32 in any
 * order. Referenced weakly like the micro-kernel.
 */
void _mlir_ciface_tra_exec_dots_f32_f32(int64_t rows, int64_t k,
                                        TraExecMemRefF32 *a,
                                        TraExecMemRefF32 *b, int64_t ldb,
                                        TraExecMemRefF32 *out);
void _mlir_ciface_tra_exec_dots_f32_f16(int64_t rows, int64_t k,
                                        TraExecMemRefF32 *a,
                                        TraExecMemRefU16 *b, int64_t ldb,
                                        TraExecMemRefF32 *out);
void _mlir_ciface_tra_exec_dots_f32_bf16(int64_t rows, int64_t k,
                                         TraExecMemRefF32 *a,
                                         TraExecMemRefU16 *b, int64_t ldb,
                                         TraExecMemRefF32 *out);
/**
 * The same for Q8_0 rows (tra_exec_gemm_q8's layout, `blocks` blocks of 32
 * quants per row, one f16 scale per block):
 *   out[j] = sum over t < blocks of half(scales[j * lds + t])
 *            * sum over i < 32 of a[32 t + i] * q[j * ldq + 32 t + i]
 * for j < rows, each sum in f32 in any order. Referenced weakly too.
 */
void _mlir_ciface_tra_exec_dots_f32_q8(int64_t rows, int64_t blocks,
                                       TraExecMemRefF32 *a, TraExecMemRefI8 *q,
                                       int64_t ldq, TraExecMemRefU16 *scales,
                                       int64_t lds, TraExecMemRefF32 *out);

/** Whether the runtime calls the compiled kernels above where the program
 * has them (1, the default) or its own (0). */
void tra_exec_use_generated_kernels(int64_t use);
/** Which micro-kernel the packed GEMM runs: "generated" (the program's),
 * "builtin" (the runtime's AVX-512 one) or "none" (no packed GEMM on this
 * CPU: OpenBLAS and the generated loops take the products). */
const char *tra_exec_microkernel(void);
/** Which dot products one-row products run: "generated" (the program's),
 * "builtin" (the runtime's AVX-512 or AVX2 ones) or "none" (a scalar
 * loop, or OpenBLAS: the CPU has neither). */
const char *tra_exec_dot_kernels(void);

/** Sets the number of threads BLAS calls and the OpenMP loops of compiled
 * code use (at least 1). */
void tra_exec_set_num_threads(int64_t threads);

/**
 * What a parallel region costs and how fast one core works (the fields of
 * TraExecProgram of the same names): the runtime's products run on the
 * thread pool when their one-core time pays for the split
 * (tra/Exec/ParallelCosts.h). Figures that are not all finite and positive
 * restore the defaults.
 */
void tra_exec_set_parallel_costs(double threadSyncSeconds,
                                 double coreBytesPerSecond,
                                 double coreMacsPerSecond);

/**
 * The allocation functions compiled code calls for its buffers (MLIR's
 * generic memref allocation functions, `use-generic-functions` of
 * finalize-memref-to-llvm). Blocks of 64 KiB and more are kept on free and
 * reused by the next request of the same size (runtime/exec/Alloc.cpp), so
 * repeated calls of a compiled function do not fault fresh pages in.
 */
void *_mlir_memref_to_llvm_alloc(size_t size);
void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment, size_t size);
void _mlir_memref_to_llvm_free(void *ptr);
/** Bytes of freed blocks held for reuse. */
int64_t tra_exec_cached_bytes(void);
/** Returns the held blocks to the system. */
void tra_exec_release_cached_memory(void);

/**
 * Called by compiled code when a run-time check fails (a gather index or a
 * cache position out of range): records `message` (a string constant of the
 * compiled code naming the op and the range) if it is the first since the
 * last tra_exec_take_check_failure, and returns. The code goes on with the
 * value clamped into range, touching no memory outside its buffers, but its
 * results are not the model's. Thread-safe.
 */
void tra_exec_check_failed(const char *message);
/**
 * The first check that failed since the last call, or NULL; clears it. Whoever
 * calls a program's `run` calls this afterwards and, on a failure, reports it
 * and discards the results.
 */
const char *tra_exec_take_check_failure(void);

/**
 * Called by compiled code (tra_comm.fetch, tra_comm.ifetch) when it copies
 * `bytes` bytes of a tile kept in memory tier `tier` (a TraExecTier) to a
 * buffer of the device: counts them for the tier (TRA_EXEC_TIER_HOST or
 * _DISK).
 */
void tra_exec_tier_fetched(int64_t bytes, int32_t tier);
/** Bytes fetched from `tier` (and the number of fetches) since the last
 * tra_exec_tier_reset or the start of the process; 0 for an unknown tier. */
int64_t tra_exec_tier_bytes(int32_t tier);
int64_t tra_exec_tier_fetches(int32_t tier);
void tra_exec_tier_reset(void);

/**
 * Called by compiled code (tra_comm.ifetch) to start copying a tile kept in a
 * memory tier to a buffer of the device without waiting: the strided region
 * of `rank` (1 to 4) dimensions, sizes size0..., from `src` to `dst`, strides
 * in elements of `elementBytes` bytes (unused trailing arguments ignored).
 * The runtime's copy thread copies the tiles in the order they were started,
 * while the caller computes; `src` must stay unchanged and `dst` untouched
 * until tra_exec_fetch_wait of the returned handle (>= 0) returns (once per
 * handle; a waiting thread copies what is left of the tile itself). Invalid
 * arguments record a check failure (tra_exec_take_check_failure) and copy
 * nothing.
 */
int64_t tra_exec_fetch_start(void *dst, const void *src, int64_t elementBytes,
                             int64_t rank, int64_t size0, int64_t size1,
                             int64_t size2, int64_t size3, int64_t dstStride0,
                             int64_t dstStride1, int64_t dstStride2,
                             int64_t dstStride3, int64_t srcStride0,
                             int64_t srcStride1, int64_t srcStride2,
                             int64_t srcStride3);
/** Returns once the copy of `handle` is in its buffer. */
void tra_exec_fetch_wait(int64_t handle);
/** Nanoseconds spent copying fetched tiles (by the copy thread or a waiting
 * thread), and that compiled code spent in tra_exec_fetch_wait, since the
 * last tra_exec_tier_reset: the difference is copying hidden behind
 * compute. */
int64_t tra_exec_fetch_copy_ns(void);
int64_t tra_exec_fetch_wait_ns(void);

/** Called by compiled code (when compiled with profiling) around op `op`. */
void tra_exec_profile_begin(int64_t op);
void tra_exec_profile_end(int64_t op);

/**
 * Starts recording the time of ops 0 .. numOps - 1 (and clears earlier
 * records); until then the calls above do nothing.
 */
void tra_exec_profile_enable(int64_t numOps);
/** Returns the seconds spent in op `op` and how often it ran. */
double tra_exec_profile_seconds(int64_t op);
int64_t tra_exec_profile_count(int64_t op);

#ifdef __cplusplus
}
#endif

#endif /* TRA_EXEC_ABI_H */
