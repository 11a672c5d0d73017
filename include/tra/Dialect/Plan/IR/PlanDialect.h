//===- PlanDialect.h - tra_plan dialect -------------------------*- C++ -*-===//
//
// The dialect that records decomposition plans: distribution and split
// attributes and the tile-movement operations (see PlanDialect.td).
//
//===----------------------------------------------------------------------===//

#ifndef TRA_DIALECT_PLAN_IR_PLANDIALECT_H
#define TRA_DIALECT_PLAN_IR_PLANDIALECT_H

#include "tra/Dialect/TRA/IR/TRAOps.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <optional>

#include "tra/Dialect/Plan/IR/PlanDialect.h.inc"

#define GET_ATTRDEF_CLASSES
#include "tra/Dialect/Plan/IR/PlanAttrs.h.inc"

#define GET_OP_CLASSES
#include "tra/Dialect/Plan/IR/PlanOps.h.inc"

#endif // TRA_DIALECT_PLAN_IR_PLANDIALECT_H
