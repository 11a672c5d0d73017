//===- Passes.td - tra autodiff passes ----------------------*- tablegen -*-===//
//
// Model-level transforms for training: reverse-mode differentiation of tra
// functions (include/tra/Autodiff/Autodiff.h, docs/Autodiff.md).
//
//===----------------------------------------------------------------------===//

#ifndef TRA_AUTODIFF_PASSES_TD
#define TRA_AUTODIFF_PASSES_TD

include "mlir/Pass/PassBase.td"

def AutodiffPass : Pass<"tra-autodiff", "::mlir::ModuleOp"> {
  let summary = "Add the gradient function of a tra loss function";
  let description = [{
    For the function `entry` (or the module's only function with a body),
    which returns a loss (a floating-point tensor of one element), adds the
    function `name` (default `<entry>_grad`) that takes the same arguments
    and returns the loss followed by the gradient of the loss with respect to
    each argument named in `wrt` (by `tra.name` or `argN`; without `wrt`,
    the arguments marked `tra.wrt`, or else every floating-point argument),
    in argument order. Gradient results are named `grad_<argument>`.

    Every model-level op has its adjoint written in tra ops: the gradients of
    an einsum are einsums (and maps for combiners other than `mul`, masks
    for max/min aggregations, exact zero handling for prod), a map's
    gradient is a map whose body is differentiated symbolically, gather's
    is a scatter-add written as a one-hot join, and data movement ops move
    the gradient back. An op with no gradient gets a diagnostic; calls must
    be inlined first (`--inline`).

    ```mlir
    func.func @loss(%x: tensor<4x8xf32> {tra.name = "x"},
                    %w: tensor<8x2xf32> {tra.name = "w"}) -> tensor<f32> {
      %y = tra.einsum "sd,df->sf" mul (%x, %w)
          : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
      %l = tra.einsum "sf->" square (%y) : (tensor<4x2xf32>) -> tensor<f32>
      return %l : tensor<f32>
    }
    ```

    with `--tra-autodiff="entry=loss wrt=w"` gains

    ```mlir
    func.func @loss_grad(%x: ..., %w: ...)
        -> (tensor<f32> {tra.name = "result0"},
            tensor<8x2xf32> {tra.name = "grad_w"}) {
      %y = tra.einsum "sd,df->sf" mul (%x, %w) ...
      %l = tra.einsum "sf->" square (%y) ...
      %one = tra.fill 1.0 : tensor<f32>
      %dy = tra.map ",sf->sf" (%one, %y) { g * 2 y }
      %dw = tra.einsum "sf,sd->df" mul (%dy, %x) ...
      return %l, %dw : tensor<f32>, tensor<8x2xf32>
    }
    ```
  }];
  let options = [
    Option<"entry", "entry", "std::string", /*default=*/"\"\"",
           "The loss function (default: the only function with a body)">,
    ListOption<"wrt", "wrt", "std::string",
               "Arguments to differentiate with respect to, by name">,
    Option<"gradName", "name", "std::string", /*default=*/"\"\"",
           "Name of the gradient function (default: <entry>_grad)">,
  ];
}

def TrainStepPass : Pass<"tra-train-step", "::mlir::ModuleOp"> {
  let summary = "Add a whole training step (forward, backward, update)";
  let description = [{
    For the loss function `entry` (or the module's only function with a
    body), adds the function `name` (default `train_step`): the loss's
    forward pass, its gradient (as `tra-autodiff` builds it) with respect to
    the parameters `wrt` (same defaults as `tra-autodiff`), the global
    gradient norm, clipping to `clip-norm` (0: none) and one step of the
    optimizer (`sgd` with `momentum`, `nesterov` and `weight-decay`, or
    `adamw` with `beta1`, `beta2`, `eps` and decoupled `weight-decay`; the
    rules are PyTorch's). The learning rate, and for AdamW the step number
    (1 for the first step), are 0-d f32 arguments, so a schedule needs no
    recompilation. Optimizer states (`<p>.adam_m`, `<p>.adam_v`, or
    `<p>.momentum`) are arguments after the loss's; the step returns the
    loss, `grad_norm`, then `<p>_out` for every parameter and state, each
    marked `tra.carries = N` with the position of the argument the next
    step reads it as (the planner charges writing it in other tiles than
    that argument is read in).

    ```mlir
    func.func @loss(%x: tensor<4x8xf32> {tra.name = "x"},
                    %w: tensor<8x2xf32> {tra.name = "w", tra.wrt})
        -> tensor<f32>
    ```

    with `--tra-train-step="optimizer=sgd momentum=0.9"` gains

    ```mlir
    func.func @train_step(%x: tensor<4x8xf32> {tra.name = "x"},
                          %w: tensor<8x2xf32> {tra.name = "w"},
                          %buf: tensor<8x2xf32> {tra.name = "w.momentum"},
                          %lr: tensor<f32> {tra.name = "lr"})
        -> (tensor<f32> {tra.name = "result0"},
            tensor<f32> {tra.name = "grad_norm"},
            tensor<8x2xf32> {tra.name = "w_out", tra.carries = 1},
            tensor<8x2xf32> {tra.name = "w.momentum_out", tra.carries = 2})
    ```
  }];
  let options = [
    Option<"entry", "entry", "std::string", /*default=*/"\"\"",
           "The loss function (default: the only function with a body)">,
    ListOption<"wrt", "wrt", "std::string",
               "Parameters to train, by name">,
    Option<"stepName", "name", "std::string", /*default=*/"\"train_step\"",
           "Name of the training step function">,
    Option<"optimizer", "optimizer", "std::string", /*default=*/"\"adamw\"",
           "sgd or adamw">,
    Option<"beta1", "beta1", "double", /*default=*/"0.9", "AdamW beta1">,
    Option<"beta2", "beta2", "double", /*default=*/"0.999", "AdamW beta2">,
    Option<"eps", "eps", "double", /*default=*/"1e-8", "AdamW epsilon">,
    Option<"weightDecay", "weight-decay", "double", /*default=*/"0.0",
           "Weight decay (AdamW: decoupled)">,
    Option<"momentum", "momentum", "double", /*default=*/"0.0",
           "SGD momentum">,
    Option<"nesterov", "nesterov", "bool", /*default=*/"false",
           "SGD: Nesterov momentum">,
    Option<"clipNorm", "clip-norm", "double", /*default=*/"0.0",
           "Clip gradients to this global L2 norm (0: no clipping)">,
  ];
}

#endif // TRA_AUTODIFF_PASSES_TD
