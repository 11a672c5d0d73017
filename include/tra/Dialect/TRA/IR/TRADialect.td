//===- TRADialect.td - tra dialect definition --------------*- tablegen -*-===//

#ifndef TRA_DIALECT_TRA_IR_TRADIALECT_TD
#define TRA_DIALECT_TRA_IR_TRADIALECT_TD

include "mlir/IR/OpBase.td"

def TRA_Dialect : Dialect {
  let name = "tra";
  let cppNamespace = "::mlir::tra";
  let summary = "The tensor relational algebra: tensors as relations of tiles";
  let description = [{
    The `tra` dialect states a model once, on whole tensors, in a small closed
    set of operations that the decomposition optimizer can reason about:

    * `tra.einsum`: a generalized einsum. Every input is joined with the
      others on the indices they share, a named scalar combiner is applied to
      each joined tuple, and indices absent from the output are aggregated
      (sum, max, min or prod). In relational terms this is a join followed by
      a group-by aggregation, which is why it tiles: a tile of the output is
      an aggregation over joins of input tiles.
    * `tra.map`: an elementwise (1:1 join) operation with an arbitrary scalar
      body, optional broadcasting by index spec, and access to the iteration
      index (`tra.index`) for masks and positions.
    * data movement on whole tensors: `tra.concat`, `tra.slice`,
      `tra.update_slice` (dynamic position, for KV caches), `tra.gather`
      (embedding lookup), `tra.reshape` (grouping/ungrouping of dimensions),
      `tra.fill` and `tra.convert` (f32/f16/bf16/integers).

    Weights and activations enter as `func.func` arguments; an argument or
    result may carry a `tra.name` string attribute naming it for tools.
  }];
  let useDefaultAttributePrinterParser = 1;
  let hasConstantMaterializer = 1;
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect"];
}

/// Every tensor operand and result has a static shape whose element count
/// and byte size fit in 64 bits: what the planner, the interpreter and the
/// code generator compute with (tra::verifyPlannableTensors).
def TRA_PlannableTensors : NativeOpTrait<"PlannableTensors"> {
  let cppNamespace = "::mlir::tra::OpTrait";
}

class TRA_Op<string mnemonic, list<Trait> traits = []>
    : Op<TRA_Dialect, mnemonic, !listconcat(traits, [TRA_PlannableTensors])>;

#endif // TRA_DIALECT_TRA_IR_TRADIALECT_TD
