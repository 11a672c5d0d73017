//===- CHeader.h - C header of a compiled program ---------------*- C++ -*-===//
//
// `tra-compile --emit=lib` writes, beside the object, a C header that names
// the entry's buffers in the order `tra_exec_program.run` takes them.
//
//===----------------------------------------------------------------------===//

#ifndef TRA_TARGET_CHEADER_H
#define TRA_TARGET_CHEADER_H

#include "tra/Target/EntrySignature.h"

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace mlir {
namespace tra {

/// Writes a C header for embedding the object: the runtime ABI's program
/// descriptor and the entry's buffers in `run` order.
void writeCHeader(const EntrySignature &signature, llvm::raw_ostream &os);

} // namespace tra
} // namespace mlir

#endif // TRA_TARGET_CHEADER_H
