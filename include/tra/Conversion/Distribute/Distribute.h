//===- Distribute.h - Distributed code generation ---------------*- C++ -*-===//
//
// From a planned program (tra_plan) to one program per MPI rank: the
// tra-localize pass (per-rank functions with tra_comm moves) and the
// lowering of the mpi dialect (see Passes.td).
//
//===----------------------------------------------------------------------===//

#ifndef TRA_CONVERSION_DISTRIBUTE_DISTRIBUTE_H
#define TRA_CONVERSION_DISTRIBUTE_DISTRIBUTE_H

#include "mlir/Pass/Pass.h"

#include <memory>
#include <string>

namespace mlir {
class DialectRegistry;
class ModuleOp;
namespace tra {

#define GEN_PASS_DECL
#include "tra/Conversion/Distribute/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tra/Conversion/Distribute/Passes.h.inc"

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

#endif // TRA_CONVERSION_DISTRIBUTE_DISTRIBUTE_H
