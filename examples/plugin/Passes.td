//===- Passes.td - Passes of the example plugin ------------*- tablegen -*-===//
//
// The passes of an out-of-tree tra extension, declared like tra's own
// (include/tra/Optimizer/Passes.td): flags with a prefix of their own,
// a summary, a description showing what the pass does.
//
//===----------------------------------------------------------------------===//

#ifndef TRA_EXAMPLE_PASSES_TD
#define TRA_EXAMPLE_PASSES_TD

include "mlir/Pass/PassBase.td"

def TRAExampleEinsumFlops
    : Pass<"tra-example-einsum-flops", "::mlir::ModuleOp"> {
  let summary = "Report the multiply-adds of every tra.einsum";
  let description = [{
    Reports, as a remark on each `tra.einsum`, the size of its index space
    (the product of the extents of all its indices, read from the operand
    shapes and the index spec): one combine and one aggregation step per
    point. For a contraction (`mul` of two inputs, `sum` over at least one
    index) that is its number of multiply-adds; other einsums report
    points. A remark on each function gives the totals. The IR is not
    changed.

    ```mlir
    func.func @matmul(%a: tensor<2x4x8xf32>, %b: tensor<2x8x16xf32>)
        -> tensor<2x4x16xf32> {
      %c = tra.einsum "bij,bjk->bik" mul (%a, %b)
          : (tensor<2x4x8xf32>, tensor<2x8x16xf32>) -> tensor<2x4x16xf32>
      return %c : tensor<2x4x16xf32>
    }
    ```

    reports

    ```
    remark: einsum "bij,bjk->bik" mul: 1024 multiply-adds (b=2 i=4 j=8 k=16)
    remark: @matmul: 1 einsums, 1024 multiply-adds, 0 other points
    ```

    An einsum with a dynamic extent is not counted (a warning says so).
  }];
}

#endif // TRA_EXAMPLE_PASSES_TD
