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

#endif // TRA_AUTODIFF_PASSES_TD
