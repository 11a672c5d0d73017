//===- FakeCublas.cpp - cuBLAS's strided batched GEMM on the host ---------===//
//
// A column-major reference of cublasGemmStridedBatchedEx for f32 data on
// host memory (the fake driver's device memory), to check how runtime/cuda
// maps row-major products onto cuBLAS. Other element types are recorded but
// not computed.
//
//===----------------------------------------------------------------------===//

#include <cublas_api.h>

namespace {
int handleTag;
int lastType = -1, lastOutputType = -1, calls = 0;
} // namespace

extern "C" {
int fake_cublas_last_type() { return lastType; }
int fake_cublas_last_output_type() { return lastOutputType; }
int fake_cublas_calls() { return calls; }

cublasStatus_t cublasCreate_v2(cublasHandle_t *h) {
  *h = reinterpret_cast<cublasHandle_t>(&handleTag);
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasSetStream_v2(cublasHandle_t, cudaStream_t) {
  return CUBLAS_STATUS_SUCCESS;
}
const char *cublasGetStatusName(cublasStatus_t s) {
  return s == CUBLAS_STATUS_SUCCESS ? "CUBLAS_STATUS_SUCCESS"
                                    : "CUBLAS_STATUS_INVALID_VALUE";
}
cublasStatus_t cublasGemmStridedBatchedEx(
    cublasHandle_t, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
    int k, const void *alpha, const void *a, cudaDataType at, int lda,
    long long sa, const void *b, cudaDataType bt, int ldb, long long sb,
    const void *beta, void *c, cudaDataType ct, int ldc, long long sc,
    int batch, cublasComputeType_t, cublasGemmAlgo_t) {
  ++calls;
  lastType = int(at);
  lastOutputType = int(ct);
  if (at != bt || (at != ct && ct != CUDA_R_32F))
    return CUBLAS_STATUS_INVALID_VALUE;
  if (at != CUDA_R_32F)
    return CUBLAS_STATUS_SUCCESS;
  float al = *static_cast<const float *>(alpha);
  float be = *static_cast<const float *>(beta);
  // Column-major: element (i, j) of X with leading dimension ld is X[i + j*ld].
  for (int p = 0; p < batch; ++p) {
    const float *A = static_cast<const float *>(a) + p * sa;
    const float *B = static_cast<const float *>(b) + p * sb;
    float *C = static_cast<float *>(c) + p * sc;
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) {
        double sum = 0;
        for (int l = 0; l < k; ++l) {
          float x = ta == CUBLAS_OP_N ? A[i + l * lda] : A[l + i * lda];
          float y = tb == CUBLAS_OP_N ? B[l + j * ldb] : B[j + l * ldb];
          sum += double(x) * y;
        }
        // beta = 0: C is not read (it may hold garbage), as in cuBLAS.
        C[i + j * ldc] =
            float(al * sum + (be == 0 ? 0.0 : be * C[i + j * ldc]));
      }
  }
  return CUBLAS_STATUS_SUCCESS;
}
} // extern "C"
