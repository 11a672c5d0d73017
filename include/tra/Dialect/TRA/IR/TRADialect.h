//===- TRADialect.h - tra dialect -------------------------------*- C++ -*-===//

#ifndef TRA_DIALECT_TRA_IR_TRADIALECT_H
#define TRA_DIALECT_TRA_IR_TRADIALECT_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Dialect.h"

#include "tra/Dialect/TRA/IR/TRADialect.h.inc"

#endif // TRA_DIALECT_TRA_IR_TRADIALECT_H
