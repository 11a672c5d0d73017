//===- AdjointBuilder.h - Building adjoints in tra ops ----------*- C++ -*-===//
//
// Internal to lib/Autodiff: the helpers every adjoint rule writes its tra ops
// with, and the rules themselves, one file per family (EinsumAdjoint.cpp,
// MapAdjoint.cpp, DataMovementAdjoints.cpp). Index specs are handled as
// strings of index letters ("terms").
//
//===----------------------------------------------------------------------===//

#ifndef TRA_LIB_AUTODIFF_ADJOINTBUILDER_H
#define TRA_LIB_AUTODIFF_ADJOINTBUILDER_H

#include "tra/Dialect/TRA/IR/TRAOps.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"

#include <functional>
#include <string>

namespace mlir {
namespace tra {
namespace autodiff {

/// Builds scalar code inside a tra.map body from its block arguments.
using ScalarBodyFn =
    std::function<Value(OpBuilder &, Location, ValueRange args)>;

/// Extents of index letters, gathered from the terms and shapes of an op.
using IndexExtents = llvm::DenseMap<char, int64_t>;

/// Writes the tra ops of adjoints at one insertion point.
class AdjointBuilder {
public:
  AdjointBuilder(OpBuilder &b, Location loc) : b(b), loc(loc) {}

  OpBuilder &builder() { return b; }
  Location location() const { return loc; }
  void setLocation(Location l) { loc = l; }

  /// A tensor of `type` with every element `value`.
  Value fill(RankedTensorType type, double value);
  /// `einsum spec combiner (inputs) reduce agg` with result `type`.
  Value einsum(StringRef spec, CombinerKind combiner, ValueRange inputs,
               RankedTensorType type,
               AggregationKind agg = AggregationKind::sum);
  /// A tra.map with `spec` ("" for same-shaped inputs) whose body `body`
  /// builds from the block arguments.
  Value map(StringRef spec, ValueRange inputs, RankedTensorType type,
            const ScalarBodyFn &body);
  /// a + b (same type).
  Value add(Value a, Value b);
  /// `v` converted to element type `elt` (itself if it has it).
  Value convert(Value v, Type elt);
  /// `v` (indexed by `from`) summed over the letters of `from` absent from
  /// `to` and broadcast over the letters of `to` absent from `from`, as a
  /// tensor indexed by `to` whose extents `extents` gives.
  Value reduceAndBroadcast(Value v, StringRef from, StringRef to,
                           const IndexExtents &extents);

  /// The tensor type indexed by `term` with element type `elt`.
  static RankedTensorType termType(StringRef term, const IndexExtents &extents,
                                   Type elt);

private:
  OpBuilder &b;
  Location loc;
};

/// A scalar float constant of type `type` in a map body.
Value scalarConstant(OpBuilder &b, Location loc, Type type, double value);

/// dC/dx_k of combiner `kind` at the scalars `xs` (all of one float type).
Value buildCombinerPartial(OpBuilder &b, Location loc, CombinerKind kind,
                           ValueRange xs, unsigned k);

/// Clones the operations of the map body `body` (its arguments mapped by
/// `mapping`) at `b`'s insertion point, and builds the derivative of the
/// yielded value with respect to argument `argIndex` alongside (forward
/// mode). Returns a null Value when the derivative is zero, and fails with a
/// diagnostic naming an operation whose derivative is not defined.
FailureOr<Value> buildBodyTangent(OpBuilder &b, Block &body, IRMapping &mapping,
                                  unsigned argIndex);

/// The gradient contributions of one operation: one entry per operand, a
/// null Value where the operand gets none (inactive, integer, or zero).
using OperandGradients = SmallVector<Value>;

/// Adjoint rules. `g` is the gradient of the op's (single) result; `needed`
/// says, per operand, whether its gradient is wanted.
FailureOr<OperandGradients> einsumAdjoint(AdjointBuilder &ab, EinsumOp op,
                                          Value g, ArrayRef<bool> needed);
FailureOr<OperandGradients> mapAdjoint(AdjointBuilder &ab, MapOp op, Value g,
                                       ArrayRef<bool> needed);
FailureOr<OperandGradients> dataMovementAdjoint(AdjointBuilder &ab,
                                                Operation *op, Value g,
                                                ArrayRef<bool> needed);

} // namespace autodiff
} // namespace tra
} // namespace mlir

#endif // TRA_LIB_AUTODIFF_ADJOINTBUILDER_H
