//===- TRA.td - Tensor relational algebra dialect umbrella -*- tablegen -*-===//
//
// Umbrella file: includes the dialect, its attributes and its operations.
//
//===----------------------------------------------------------------------===//

#ifndef TRA_DIALECT_TRA_IR_TRA_TD
#define TRA_DIALECT_TRA_IR_TRA_TD

include "tra/Dialect/TRA/IR/TRADialect.td"
include "tra/Dialect/TRA/IR/TRAAttrs.td"
include "tra/Dialect/TRA/IR/TRAOps.td"

#endif // TRA_DIALECT_TRA_IR_TRA_TD
