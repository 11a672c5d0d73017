//===- PlanDialect.h - tra_plan dialect -------------------------*- C++ -*-===//
//
// The dialect that records decomposition plans: distribution and split
// attributes and the tile-movement operations (see PlanDialect.td).
//
//===----------------------------------------------------------------------===//

#ifndef TRA_OPTIMIZER_PLANDIALECT_H
#define TRA_OPTIMIZER_PLANDIALECT_H

#include "tra/Dialect/TRA/IR/TRAOps.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <optional>

#include "tra/Optimizer/PlanDialect.h.inc"

#define GET_ATTRDEF_CLASSES
#include "tra/Optimizer/PlanAttrs.h.inc"

#define GET_OP_CLASSES
#include "tra/Optimizer/PlanOps.h.inc"

#endif // TRA_OPTIMIZER_PLANDIALECT_H
