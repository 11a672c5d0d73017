//===- TRAOps.h - tra dialect operations ------------------------*- C++ -*-===//

#ifndef TRA_DIALECT_TRA_IR_TRAOPS_H
#define TRA_DIALECT_TRA_IR_TRAOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "tra/Dialect/TRA/IR/EinsumSpec.h"
#include "tra/Dialect/TRA/IR/TRADialect.h"

#include "tra/Dialect/TRA/IR/TRAEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "tra/Dialect/TRA/IR/TRAAttrs.h.inc"

namespace mlir {
namespace tra {

/// Fails with a diagnostic naming the value unless every ranked tensor
/// operand and result of `op` has a static shape whose element count and
/// byte size fit in an int64_t.
LogicalResult verifyPlannableTensors(Operation *op);

/// Fails with a diagnostic on `op` naming `what` unless `type` is a ranked
/// tensor of static shape whose element count and byte size fit in an
/// int64_t (function arguments and results, besides tra ops' values).
LogicalResult verifyPlannableTensorType(Operation *op, Type type,
                                        llvm::StringRef what);

namespace OpTrait {
/// The ODS trait TRA_PlannableTensors.
template <typename ConcreteType>
class PlannableTensors
    : public ::mlir::OpTrait::TraitBase<ConcreteType, PlannableTensors> {
public:
  static LogicalResult verifyTrait(Operation *op) {
    return verifyPlannableTensors(op);
  }
};
} // namespace OpTrait

} // namespace tra
} // namespace mlir

#define GET_OP_CLASSES
#include "tra/Dialect/TRA/IR/TRAOps.h.inc"

namespace mlir {
namespace tra {

/// Creates a tra.map of `inputs` with `spec` ("" for same-shaped inputs)
/// and result `type`, whose body `body` writes from the block arguments
/// (the insertion point is inside the body while it runs; the yield of its
/// result is added).
MapOp createMap(
    OpBuilder &b, Location loc, RankedTensorType type, ValueRange inputs,
    llvm::StringRef spec,
    llvm::function_ref<Value(OpBuilder &, Location, ValueRange)> body);

/// Number of inputs a combiner accepts: {min, max}; max 0 means unbounded.
std::pair<unsigned, unsigned> getCombinerArity(CombinerKind kind);

/// Applies a combiner to scalar operands (in double precision).
double applyCombiner(CombinerKind kind, llvm::ArrayRef<double> operands);

/// The identity element of an aggregation (0 for sum, -inf for max, ...).
double getAggregationIdentity(AggregationKind kind);

/// Folds `value` into the running aggregate `acc`.
double applyAggregation(AggregationKind kind, double acc, double value);

/// Rounds `value` to the precision of the scalar type `type` (f16, bf16, f32
/// round to nearest even; integers truncate toward zero; i1 tests != 0).
double roundToElementType(mlir::Type type, double value);

} // namespace tra
} // namespace mlir

#endif // TRA_DIALECT_TRA_IR_TRAOPS_H
