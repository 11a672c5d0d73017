//===- Plan.td - tra_plan dialect umbrella -----------------*- tablegen -*-===//
//
// Umbrella file: the dialect, its attributes and its operations.
//
//===----------------------------------------------------------------------===//

#ifndef TRA_DIALECT_PLAN_IR_PLAN_TD
#define TRA_DIALECT_PLAN_IR_PLAN_TD

include "tra/Dialect/Plan/IR/PlanDialect.td"
include "tra/Dialect/Plan/IR/PlanAttrs.td"
include "tra/Dialect/Plan/IR/PlanOps.td"

#endif // TRA_DIALECT_PLAN_IR_PLAN_TD
