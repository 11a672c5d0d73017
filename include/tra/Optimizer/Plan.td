//===- Plan.td - tra_plan dialect umbrella -----------------*- tablegen -*-===//
//
// Umbrella file: the dialect, its attributes and its operations.
//
//===----------------------------------------------------------------------===//

#ifndef TRA_OPTIMIZER_PLAN_TD
#define TRA_OPTIMIZER_PLAN_TD

include "tra/Optimizer/PlanDialect.td"
include "tra/Optimizer/PlanAttrs.td"
include "tra/Optimizer/PlanOps.td"

#endif // TRA_OPTIMIZER_PLAN_TD
