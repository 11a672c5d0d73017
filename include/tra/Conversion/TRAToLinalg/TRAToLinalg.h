//===- TRAToLinalg.h - Lowering model-level tra to linalg -------*- C++ -*-===//
//
// Patterns that rewrite model-level tra operations into linalg, tensor,
// arith, math and cf operations on tensors (see `tra-convert-to-linalg` in
// Passes.td for the mapping of every operation).
//
//===----------------------------------------------------------------------===//

#ifndef TRA_CONVERSION_TRATOLINALG_TRATOLINALG_H
#define TRA_CONVERSION_TRATOLINALG_TRATOLINALG_H

#include "tra/Conversion/Passes.h"
#include "tra/Dialect/TRA/IR/EinsumSpec.h"

#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace tra {

/// Adds the conversion patterns of every model-level tra operation to
/// `patterns`, configured by `options`.
void populateTRAToLinalgConversionPatterns(
    RewritePatternSet &patterns, const ConvertTRAToLinalgPassOptions &options);

/// Returns success if the tra operation `op` can be lowered to linalg;
/// otherwise emits an error at `op` saying why and returns failure.
LogicalResult checkLowerableToLinalg(Operation *op);

/// Returns true if the einsum `spec` of a two-input `mul` einsum with a
/// `sum` aggregation is a contraction: some index is aggregated and every
/// index occurs in at least two of the three terms (a matmul, possibly
/// transposed or batched).
bool isContractionSpec(const EinsumSpec &spec);

} // namespace tra
} // namespace mlir

#endif // TRA_CONVERSION_TRATOLINALG_TRATOLINALG_H
