//===- Interpreter.h - Reference interpreter for model-level tra -*- C++
//-*-===//
//
// Evaluates model-level tra IR on concrete tensors, directly from the op
// semantics, with double-precision accumulation and every stored value
// rounded to its element type. Every later stage of the compiler (planning,
// lowering, distributed execution) is tested against it.
//
//===----------------------------------------------------------------------===//

#ifndef TRA_INTERPRETER_INTERPRETER_H
#define TRA_INTERPRETER_INTERPRETER_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlir {
namespace tra {

/// A dense row-major tensor value of the interpreter. Elements are held as
/// doubles whose values are exactly representable in `elementType`.
struct InterpTensor {
  Type elementType;
  SmallVector<int64_t> shape;
  std::vector<double> data;

  InterpTensor() = default;
  InterpTensor(Type elementType, ArrayRef<int64_t> shape, double fill = 0.0);

  int64_t getNumElements() const;
  RankedTensorType getType() const;
};

/// The name a tool uses for argument `index` of `func`: its `tra.name`
/// attribute if it has one, otherwise "arg<index>".
std::string getArgumentName(func::FuncOp func, unsigned index);
/// The name of result `index`: `tra.name` or "result<index>".
std::string getResultName(func::FuncOp func, unsigned index);

/// Evaluates `func` on `args` (one per argument, of the argument's type).
/// Run-time errors (an index out of range, an unsupported operation) are
/// emitted as diagnostics at the failing operation and return failure.
FailureOr<SmallVector<InterpTensor>> interpret(func::FuncOp func,
                                               ArrayRef<InterpTensor> args);

} // namespace tra
} // namespace mlir

#endif // TRA_INTERPRETER_INTERPRETER_H
