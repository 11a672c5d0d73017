//===- Comm.h - tra_comm dialect --------------------------------*- C++ -*-===//
//
// Tile moves between the ranks of a distributed program (see Comm.td).
//
//===----------------------------------------------------------------------===//

#ifndef TRA_DIALECT_COMM_IR_COMM_H
#define TRA_DIALECT_COMM_IR_COMM_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir {
class DialectRegistry;
namespace tra {
namespace comm {
/// The network: every tra_comm op reads and writes it, which keeps them in
/// program order.
struct NetworkResource : public SideEffects::Resource::Base<NetworkResource> {
  llvm::StringRef getName() final { return "tra_comm.network"; }
};

/// Registers the bufferization of tra_comm ops (to the mpi dialect and the
/// tra MPI runtime).
void registerBufferizableOpInterfaceExternalModels(DialectRegistry &registry);
} // namespace comm
} // namespace tra
} // namespace mlir

#include "tra/Dialect/Comm/IR/CommDialect.h.inc"
#include "tra/Dialect/Comm/IR/CommEnums.h.inc"

#define GET_TYPEDEF_CLASSES
#include "tra/Dialect/Comm/IR/CommTypes.h.inc"

#define GET_OP_CLASSES
#include "tra/Dialect/Comm/IR/CommOps.h.inc"

#endif // TRA_DIALECT_COMM_IR_COMM_H
