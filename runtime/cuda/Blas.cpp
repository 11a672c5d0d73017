//===- Blas.cpp - Contractions through cuBLAS -----------------------------===//
//
// tra_cuda_gemm (ABI.h) on cublasGemmStridedBatchedEx, with cuBLAS loaded at
// run time (libcublas.so.13, or TRA_CUBLAS for the tests) and one handle
// bound to the process's stream. A row-major product C = op(A) op(B) is the
// column-major product C^T = op(B)^T op(A)^T, so B is passed first.
//
//===----------------------------------------------------------------------===//

#include "Context.h"

#include "tra/Cuda/ABI.h"

#include <cublas_api.h>
#include <dlfcn.h>

#include <climits>
#include <cstdlib>
#include <mutex>
#include <optional>

using namespace tra;
using namespace tra::cuda;

namespace {
struct CublasApi {
  cublasStatus_t (*create)(cublasHandle_t *);
  cublasStatus_t (*setStream)(cublasHandle_t, cudaStream_t);
  cublasStatus_t (*gemmStridedBatchedEx)(
      cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
      const void *, const void *, cudaDataType, int, long long, const void *,
      cudaDataType, int, long long, const void *, void *, cudaDataType, int,
      long long, int, cublasComputeType_t, cublasGemmAlgo_t);
  const char *(*statusName)(cublasStatus_t);
  cublasHandle_t handle = nullptr;
};

/// Loads cuBLAS and creates the handle once; null (with the error recorded
/// on every call) if that fails.
const CublasApi *cublas(const Active &active) {
  static std::once_flag once;
  static CublasApi api;
  static std::string failure;
  std::call_once(once, [&] {
    // cuBLAS 13, else 12: the entry points used are the same in both.
    const char *override = std::getenv("TRA_CUBLAS");
    std::string library = override && *override ? override : "libcublas.so.13";
    void *handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle && !(override && *override)) {
      handle = dlopen("libcublas.so.12", RTLD_NOW | RTLD_LOCAL);
      if (handle)
        library = "libcublas.so.12";
    }
    if (!handle) {
      const char *why = dlerror();
      failure = "cannot load cuBLAS " + library + " (" +
                (why ? why : "unknown error") +
                "): install the CUDA 13 libraries or add them to "
                "LD_LIBRARY_PATH";
      return;
    }
    api.create = reinterpret_cast<decltype(api.create)>(
        dlsym(handle, "cublasCreate_v2"));
    api.setStream = reinterpret_cast<decltype(api.setStream)>(
        dlsym(handle, "cublasSetStream_v2"));
    api.gemmStridedBatchedEx =
        reinterpret_cast<decltype(api.gemmStridedBatchedEx)>(
            dlsym(handle, "cublasGemmStridedBatchedEx"));
    api.statusName = reinterpret_cast<decltype(api.statusName)>(
        dlsym(handle, "cublasGetStatusName"));
    if (!api.create || !api.setStream || !api.gemmStridedBatchedEx) {
      failure = "cuBLAS " + library + " lacks cublasGemmStridedBatchedEx";
      return;
    }
    if (cublasStatus_t s = api.create(&api.handle);
        s != CUBLAS_STATUS_SUCCESS) {
      failure = std::string("cannot create a cuBLAS handle (") +
                (api.statusName ? api.statusName(s) : "error") + ")";
      api.handle = nullptr;
      return;
    }
    if (cublasStatus_t s = api.setStream(api.handle, active.stream);
        s != CUBLAS_STATUS_SUCCESS) {
      failure = std::string("cannot bind cuBLAS to the stream (") +
                (api.statusName ? api.statusName(s) : "error") + ")";
      api.handle = nullptr;
    }
  });
  if (!api.handle) {
    recordError(failure);
    return nullptr;
  }
  return &api;
}

bool fitsInt(int64_t v) { return v >= 0 && v <= INT_MAX; }
} // namespace

/// The cuBLAS type of a TRA_CUDA_* element type.
static std::optional<cudaDataType> toCudaType(int64_t dtype) {
  switch (dtype) {
  case TRA_CUDA_F32:
    return CUDA_R_32F;
  case TRA_CUDA_F16:
    return CUDA_R_16F;
  case TRA_CUDA_BF16:
    return CUDA_R_16BF;
  default:
    return std::nullopt;
  }
}

extern "C" void tra_cuda_gemm(int64_t inputType, int64_t outputType,
                              int64_t batch, int64_t transA, int64_t transB,
                              int64_t m, int64_t n, int64_t k, float alpha,
                              const void *a, int64_t lda, int64_t strideA,
                              const void *b, int64_t ldb, int64_t strideB,
                              float beta, void *c, int64_t ldc,
                              int64_t strideC) {
  Active active = activate();
  if (!active.api)
    return;
  std::optional<cudaDataType> type = toCudaType(inputType);
  std::optional<cudaDataType> outType = toCudaType(outputType);
  if (!type || !outType ||
      (outputType != inputType && outputType != TRA_CUDA_F32)) {
    recordError("tra_cuda_gemm: unsupported element types " +
                std::to_string(inputType) + " -> " +
                std::to_string(outputType));
    return;
  }
  if (!fitsInt(batch) || !fitsInt(m) || !fitsInt(n) || !fitsInt(k) ||
      !fitsInt(lda) || !fitsInt(ldb) || !fitsInt(ldc) || strideA < 0 ||
      strideB < 0 || strideC < 0) {
    recordError("tra_cuda_gemm: a size or leading dimension does not fit "
                "cuBLAS's 32-bit arguments");
    return;
  }
  if (batch == 0 || m == 0 || n == 0)
    return;
  const CublasApi *api = cublas(active);
  if (!api)
    return;
  cublasOperation_t opA = transA ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasOperation_t opB = transB ? CUBLAS_OP_T : CUBLAS_OP_N;
  // Column-major C^T (n x m) = op(B)^T (n x k) * op(A)^T (k x m).
  cublasStatus_t s = api->gemmStridedBatchedEx(
      api->handle, opB, opA, int(n), int(m), int(k), &alpha, b, *type, int(ldb),
      strideB, a, *type, int(lda), strideA, &beta, c, *outType, int(ldc),
      strideC, int(batch), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  if (s != CUBLAS_STATUS_SUCCESS)
    recordError("cublasGemmStridedBatchedEx (m=" + std::to_string(m) +
                ", n=" + std::to_string(n) + ", k=" + std::to_string(k) +
                ", batch=" + std::to_string(batch) +
                "): " + (api->statusName ? api->statusName(s) : "error"));
}
