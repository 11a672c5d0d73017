//===- Optimizers.h - Optimizer update rules in tra ops ---------*- C++ -*-===//
//
// Internal to lib/Autodiff: the update of one parameter by SGD (with
// momentum, Nesterov, weight decay) or AdamW, and the clipping coefficient,
// written as tra.maps so that they tile with the parameter.
//
//===----------------------------------------------------------------------===//

#ifndef TRA_LIB_AUTODIFF_OPTIMIZERS_H
#define TRA_LIB_AUTODIFF_OPTIMIZERS_H

#include "AdjointBuilder.h"
#include "tra/Autodiff/TrainStep.h"

namespace mlir {
namespace tra {
namespace autodiff {

/// min(1, clipNorm / (norm + 1e-6)), torch.nn.utils.clip_grad_norm_'s
/// factor, as a 0-d tensor.
Value clipCoefficient(AdjointBuilder &ab, Value norm, double clipNorm);

/// The next value of a parameter and of its optimizer states.
struct ParameterUpdate {
  Value param;
  SmallVector<Value> state;
};

/// One optimizer step of `param` with gradient `grad` (times `coef`, a 0-d
/// f32 tensor, when given) and states `state` (optimizerStateNames order),
/// at learning rate `lr` and, for AdamW, step number `step` (0-d f32).
ParameterUpdate updateParameter(AdjointBuilder &ab,
                                const OptimizerOptions &options, Value param,
                                Value grad, ArrayRef<Value> state, Value coef,
                                Value lr, Value step);

} // namespace autodiff
} // namespace tra
} // namespace mlir

#endif // TRA_LIB_AUTODIFF_OPTIMIZERS_H
