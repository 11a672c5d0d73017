//===- EinsumFlops.cpp - Count the multiply-adds of tra.einsum ------------===//
//
// An analysis written outside the tra tree: it reads tra.einsum ops through
// the installed tra headers (TRAOps.h, EinsumSpec.h) and takes their code
// from tra-opt, which loaded it (see Plugin.cpp and docs/Extending.md).
//
//===----------------------------------------------------------------------===//

#include "Passes.h"

#include "tra/Dialect/TRA/IR/EinsumSpec.h"
#include "tra/Dialect/TRA/IR/TRAOps.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir {
namespace tra_example {
#define GEN_PASS_DEF_TRAEXAMPLEEINSUMFLOPS
#include "Passes.h.inc"
} // namespace tra_example
} // namespace mlir

using namespace mlir;

namespace {

/// What one einsum costs.
struct EinsumCount {
  /// Points of the index space: the product of all index extents.
  uint64_t points = 1;
  /// Whether each point is a multiply-add: a `mul` of two inputs summed
  /// over at least one index.
  bool isContraction = false;
  /// "b=2 i=4 j=8 k=16".
  std::string extents;
};

} // namespace

/// Counts `op`, or returns failure (after a warning) if an extent is not
/// static.
static FailureOr<EinsumCount> countEinsum(tra::EinsumOp op) {
  tra::EinsumSpec spec = op.getParsedSpec();
  SmallVector<ArrayRef<int64_t>> inputShapes;
  for (Value input : op.getInputs())
    inputShapes.push_back(cast<RankedTensorType>(input.getType()).getShape());
  ArrayRef<int64_t> resultShape =
      cast<RankedTensorType>(op.getResult().getType()).getShape();
  llvm::Expected<SmallVector<int64_t>> extents =
      tra::inferIndexExtents(spec, inputShapes, resultShape);
  if (!extents) {
    op.emitWarning() << "einsum not counted: "
                     << llvm::toString(extents.takeError());
    return failure();
  }

  EinsumCount count;
  llvm::raw_string_ostream os(count.extents);
  for (unsigned index = 0; index < spec.getNumIndices(); ++index) {
    int64_t extent = (*extents)[index];
    if (ShapedType::isDynamic(extent)) {
      op.emitWarning() << "einsum not counted: index '" << spec.getName(index)
                       << "' has a dynamic extent";
      return failure();
    }
    count.points = llvm::SaturatingMultiply(count.points, uint64_t(extent));
    os << (index ? " " : "") << spec.getName(index) << "=" << extent;
  }
  count.isContraction = op.getCombiner() == tra::CombinerKind::mul &&
                        op.getAggregation() == tra::AggregationKind::sum &&
                        spec.getNumInputs() == 2 &&
                        !spec.getReducedIndices().empty();
  return count;
}

namespace {

struct EinsumFlopsPass
    : tra_example::impl::TRAExampleEinsumFlopsBase<EinsumFlopsPass> {
  void runOnOperation() override {
    getOperation().walk([](FunctionOpInterface func) {
      uint64_t einsums = 0, multiplyAdds = 0, otherPoints = 0;
      func.walk([&](tra::EinsumOp op) {
        FailureOr<EinsumCount> count = countEinsum(op);
        if (failed(count))
          return;
        ++einsums;
        uint64_t &total = count->isContraction ? multiplyAdds : otherPoints;
        total = llvm::SaturatingAdd(total, count->points);
        op.emitRemark() << "einsum \"" << op.getSpec() << "\" "
                        << tra::stringifyCombinerKind(op.getCombiner()) << ": "
                        << count->points
                        << (count->isContraction ? " multiply-adds" : " points")
                        << " (" << count->extents << ")";
      });
      if (einsums)
        func.emitRemark() << "@" << func.getName() << ": " << einsums
                          << " einsums, " << multiplyAdds << " multiply-adds, "
                          << otherPoints << " other points";
    });
  }
};

} // namespace
