//===- TRADialect.cpp - tra dialect registration --------------------------===//

#include "tra/Dialect/TRA/IR/TRADialect.h"
#include "tra/Dialect/TRA/IR/TRAOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/Transforms/InliningUtils.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::tra;

#include "tra/Dialect/TRA/IR/TRADialect.cpp.inc"
#include "tra/Dialect/TRA/IR/TRAEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "tra/Dialect/TRA/IR/TRAAttrs.cpp.inc"

namespace {
/// tra operations are pure functions of their operands (tra.map bodies are
/// isolated scalar functions), so calls to functions made of them can always
/// be inlined.
struct TRAInlinerInterface : public DialectInlinerInterface {
  using DialectInlinerInterface::DialectInlinerInterface;
  bool isLegalToInline(Operation *, Operation *, bool) const final {
    return true;
  }
  bool isLegalToInline(Region *, Region *, bool, IRMapping &) const final {
    return true;
  }
  bool isLegalToInline(Operation *, Region *, bool, IRMapping &) const final {
    return true;
  }
};
} // namespace

void TRADialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "tra/Dialect/TRA/IR/TRAAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "tra/Dialect/TRA/IR/TRAOps.cpp.inc"
      >();
  addInterfaces<TRAInlinerInterface>();
}

Operation *TRADialect::materializeConstant(OpBuilder &builder, Attribute value,
                                           Type type, Location loc) {
  auto splat = llvm::dyn_cast<SplatElementsAttr>(value);
  auto tensorType = llvm::dyn_cast<RankedTensorType>(type);
  if (!splat || !tensorType || splat.getType() != tensorType)
    return nullptr;
  return FillOp::create(
      builder, loc, tensorType,
      llvm::cast<TypedAttr>(splat.getSplatValue<Attribute>()));
}
