//===- TrainStep.h - A whole training step as one tra function --*- C++ -*-===//
//
// Forward, loss, backward (tra-autodiff), gradient clipping and the optimizer
// update (SGD with momentum or AdamW) in one tra function, so that the
// decomposition optimizer plans the whole training step for any hardware
// and the compiler lowers it like an inference step.
//
//===----------------------------------------------------------------------===//

#ifndef TRA_AUTODIFF_TRAINSTEP_H
#define TRA_AUTODIFF_TRAINSTEP_H

#include "tra/Autodiff/Autodiff.h"

#include <optional>

namespace mlir {
namespace tra {

enum class OptimizerKind { sgd, adamw };

/// The optimizer's rule and hyper-parameters (PyTorch's definitions of
/// torch.optim.SGD with dampening 0 and torch.optim.AdamW). The learning
/// rate is an argument of the step, so that a schedule needs no recompile.
struct OptimizerOptions {
  OptimizerKind kind = OptimizerKind::adamw;
  /// AdamW.
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
  /// AdamW: decoupled (p -= lr * wd * p); SGD: added to the gradient.
  double weightDecay = 0.0;
  /// SGD.
  double momentum = 0.0;
  bool nesterov = false;
  /// Clip the gradients to this global L2 norm (torch's clip_grad_norm_);
  /// 0: no clipping.
  double clipNorm = 0.0;
};

/// Parses "sgd" or "adamw".
std::optional<OptimizerKind> parseOptimizerKind(llvm::StringRef name);

/// The optimizer state tensors a parameter named `param` has, by name:
/// AdamW `<param>.adam_m`, `<param>.adam_v`; SGD with momentum
/// `<param>.momentum`; plain SGD none. Every state starts at zero.
SmallVector<std::string> optimizerStateNames(const OptimizerOptions &options,
                                             llvm::StringRef param);

/// The name of the result that holds the next value of the argument
/// called `name` (a parameter or an optimizer state): `<name>_out`.
std::string updatedName(llvm::StringRef name);

/// Adds to `loss`'s module the function `name`:
///
///   @name(<loss's arguments>, <optimizer states of each parameter>,
///         lr: tensor<f32>, step: tensor<f32> (AdamW: the step number,
///         1 for the first))
///     -> (loss, grad_norm: tensor<f32> (f64 for f64 parameters; before
///         clipping),
///         <each parameter>_out, <each state>_out)
///
/// The parameters are the arguments `gradient` chooses (Autodiff.h); they
/// must be f32 or f64. Emits a diagnostic and fails otherwise.
FailureOr<func::FuncOp> buildTrainStep(func::FuncOp loss,
                                       const GradientOptions &gradient,
                                       const OptimizerOptions &optimizer,
                                       llvm::StringRef name = "train_step");

} // namespace tra
} // namespace mlir

#endif // TRA_AUTODIFF_TRAINSTEP_H
