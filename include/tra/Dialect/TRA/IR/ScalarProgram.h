//===- ScalarProgram.h - Evaluating tra.map bodies --------------*- C++ -*-===//
//
// A tra.map body is a straight-line block of arith/math scalar operations.
// ScalarProgram compiles it once into a flat instruction list that can be
// evaluated per element. The reference interpreter and the constant folder
// both use it, so they agree on the semantics of every body operation.
//
//===----------------------------------------------------------------------===//

#ifndef TRA_DIALECT_TRA_IR_SCALARPROGRAM_H
#define TRA_DIALECT_TRA_IR_SCALARPROGRAM_H

#include "mlir/IR/Block.h"
#include "mlir/IR/Types.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <string>

namespace mlir {
namespace tra {

/// A compiled scalar body. Values are held as doubles; every result is rounded
/// to the precision of its MLIR type (f16, bf16, f32, integers).
class ScalarProgram {
public:
  /// Compiles `body` (block arguments are the inputs; the terminator's single
  /// operand is the result). Fails with a diagnostic at the first operation
  /// that is not supported.
  static FailureOr<ScalarProgram> compile(Block &body);

  /// Evaluates the program. `args` has one value per block argument, `index`
  /// the current iteration index per dimension (for tra.index).
  double run(ArrayRef<double> args, ArrayRef<int64_t> index) const;

  /// Whether the body reads tra.index.
  bool usesIndex() const { return readsIndex; }

  /// Opcodes; public so that the implementation's tables can name them.
  enum class Opcode : uint8_t;

private:
  struct Instr {
    Opcode opcode;
    uint8_t predicate = 0;
    unsigned result = 0;
    unsigned lhs = 0, rhs = 0, third = 0;
    double constant = 0.0;
    int64_t dim = 0;
    mlir::Type type;
  };
  llvm::SmallVector<Instr> instrs;
  unsigned numArgs = 0;
  unsigned numSlots = 0;
  unsigned resultSlot = 0;
  bool readsIndex = false;
};

} // namespace tra
} // namespace mlir

#endif // TRA_DIALECT_TRA_IR_SCALARPROGRAM_H
