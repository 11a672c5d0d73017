//===- Autodiff.h - Reverse-mode differentiation of tra functions -*- C++
//-*-===//
//
// Builds the gradient function of a model-level tra function. The gradient
// of a join + aggregation is again joins + aggregations, so the result is a
// tra function like any other: the optimizer plans it and the compiler lowers
// it for any hardware. docs/Autodiff.md derives every adjoint.
//
//===----------------------------------------------------------------------===//

#ifndef TRA_AUTODIFF_AUTODIFF_H
#define TRA_AUTODIFF_AUTODIFF_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Support/LLVM.h"

#include <string>

namespace mlir {
namespace tra {

/// How a gradient function is built.
struct GradientOptions {
  /// Arguments of the function (by their `tra.name`, or `argN`) to
  /// differentiate with respect to. Empty: every argument marked with the
  /// unit attribute `tra.wrt`, or, with none marked, every floating-point
  /// argument.
  SmallVector<std::string> wrt;
  /// Name of the new function; empty: `<function>_grad`.
  std::string name;
};

/// The name of the gradient result of the argument called `argName`.
std::string gradientResultName(StringRef argName);

/// The arguments of `func` that `options` chooses, by index, in argument
/// order. Fails with a diagnostic for an unknown or non-float name, a name
/// given twice, or no floating-point argument.
FailureOr<SmallVector<unsigned>>
resolveGradientArguments(func::FuncOp func, const GradientOptions &options);

/// Adds to `func`'s module a function that takes `func`'s arguments and
/// returns its loss (`func`'s single result, a floating-point tensor of one
/// element) followed by the gradient of the loss with respect to each chosen
/// argument, in argument order, each of its argument's type and named
/// `grad_<name>`. `func` must not call other functions (inline first).
/// Emits a diagnostic (naming the operation whose gradient is not defined,
/// or the problem with the function) and fails otherwise.
FailureOr<func::FuncOp> buildGradientFunction(func::FuncOp func,
                                              const GradientOptions &options);

} // namespace tra
} // namespace mlir

#endif // TRA_AUTODIFF_AUTODIFF_H
