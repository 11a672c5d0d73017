//===- PlanToComm.h - Planned programs to per-rank programs -----*- C++ -*-===//
//
// From a planned program (tra_plan) to one program per MPI rank: the
// tra-localize pass (tra/Conversion/Passes.td) writes per-rank functions
// whose tile moves are tra_comm ops; this header names what it produces.
//
//===----------------------------------------------------------------------===//

#ifndef TRA_CONVERSION_PLANTOCOMM_PLANTOCOMM_H
#define TRA_CONVERSION_PLANTOCOMM_PLANTOCOMM_H

#include "tra/Conversion/Passes.h"

#include <string>

namespace mlir {
class DialectRegistry;
class ModuleOp;
namespace tra {

/// Name of rank `rank`'s function for planned function `name`.
std::string getRankFunctionName(llvm::StringRef name, int64_t rank);

/// Argument and result attributes of per-rank functions.
constexpr llvm::StringLiteral kGlobalShapeAttrName = "tra_comm.global_shape";
constexpr llvm::StringLiteral kOffsetsAttrName = "tra_comm.offsets";
constexpr llvm::StringLiteral kOwnerAttrName = "tra_comm.owner";

/// Registers the dialects and interfaces distributed code generation uses.
void registerDistributeDialects(DialectRegistry &registry);

} // namespace tra
} // namespace mlir

#endif // TRA_CONVERSION_PLANTOCOMM_PLANTOCOMM_H
