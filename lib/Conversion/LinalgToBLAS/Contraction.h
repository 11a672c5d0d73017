//===- Contraction.h - Shared pieces of the BLAS conversions ----*- C++ -*-===//
//
// Internal to lib/Conversion/LinalgToBLAS: helpers that the float GEMM
// conversion (LinalgToBLAS.cpp) and the conversion of products by Q8_0
// weights (Q8Gemm.cpp) share.
//
//===----------------------------------------------------------------------===//

#ifndef TRA_LIB_CONVERSION_LINALGTOBLAS_CONTRACTION_H
#define TRA_LIB_CONVERSION_LINALGTOBLAS_CONTRACTION_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/BuiltinOps.h"

#include <optional>

namespace mlir {
namespace tra {
namespace blas {

/// A flattened group of loop dimensions within one operand.
struct DimGroup {
  int64_t size = 1;
  int64_t stride = 0;
};

/// Flattens the loop dimensions `group` (in this order) of an operand with
/// map `map`, `shape` and `strides` into one dimension, if they are
/// consecutive in the operand in this order (dimensions of extent 1 in
/// between do not matter) and their strides nest.
std::optional<DimGroup> flattenGroup(ArrayRef<unsigned> group, AffineMap map,
                                     ArrayRef<int64_t> shape,
                                     ArrayRef<int64_t> strides);

/// If the operation right before `op` fills `output` with zero, erases it
/// and returns true (the product then overwrites the output: beta = 0).
bool foldZeroFill(Operation *op, Value output);

/// Returns the declaration of the runtime function `name` of `type` in
/// `module`, adding it if needed; fails with a diagnostic if the name is
/// taken by something else.
FailureOr<func::FuncOp>
getOrInsertRuntimeFunction(ModuleOp module, StringRef name, FunctionType type);

/// A product by weights quantised as llama.cpp's Q8_0, found by
/// matchQ8Gemm: C [M, N] (+)= A [M, K] W^T with W given as i8 values [N, K]
/// and f16 scales [N, K / 32]. Strides in elements.
struct Q8Gemm {
  int64_t m = 1, n = 1, blocks = 1;
  int64_t lda = 0, ldq = 0, lds = 0, ldc = 0;
};

/// Matches the einsum "sBJ,eBJ,eB->se" of tra's Q8_0 projections on
/// buffers (the tra-to-linalg form: a linalg.generic of an f32, an i8 and an
/// f16 input into f32 whose body adds the product of the three, widened, to
/// the output), where the runtime's `tra_exec_gemm_q8` can read the
/// operands: blocks of 32 contiguous values, the rows of each operand
/// (several m or n dimensions flattened) at one stride, C's columns
/// contiguous.
std::optional<Q8Gemm> matchQ8Gemm(linalg::LinalgOp op);

/// Replaces `op` (matched as `gemm`) by a call to `tra_exec_gemm_q8`, which
/// it declares in `module`; fails with a diagnostic if that name is taken.
LogicalResult replaceWithQ8Gemm(ModuleOp module, linalg::LinalgOp op,
                                const Q8Gemm &gemm);

} // namespace blas
} // namespace tra
} // namespace mlir

#endif // TRA_LIB_CONVERSION_LINALGTOBLAS_CONTRACTION_H
