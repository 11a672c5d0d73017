//===- TRAOps.td - tra dialect operations ------------------*- tablegen -*-===//

#ifndef TRA_DIALECT_TRA_IR_TRAOPS_TD
#define TRA_DIALECT_TRA_IR_TRAOPS_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "tra/Dialect/TRA/IR/TRADialect.td"
include "tra/Dialect/TRA/IR/TRAAttrs.td"

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

/// Element types a model-level tensor may have.
def TRA_ElementType : AnyTypeOf<[F32, F16, BF16, F64, I64, I32, I8, I1]>;
def TRA_Tensor : RankedTensorOf<[F32, F16, BF16, F64, I64, I32, I8, I1]>;
def TRA_IndexTensor : RankedTensorOf<[I64, I32]>;
def TRA_PositionTensor : 0DTensorOf<[I64, I32]>;

//===----------------------------------------------------------------------===//
// tra.einsum
//===----------------------------------------------------------------------===//

def TRA_EinsumOp : TRA_Op<"einsum", [Pure]> {
  let summary = "generalized einsum: join on shared indices, then aggregate";
  let description = [{
    `spec` names one index (a letter `a`-`z` or `A`-`Z`) per dimension of each
    input and of the result: `"bij,bjk->bik"`. For every assignment of the
    indices, the elements of the inputs at those indices are combined with
    the scalar `combiner`; the combined values of all assignments that agree
    on the output indices are aggregated with `aggregation` (default `sum`).

    ```
    result[out] = AGG_{reduced indices} COMBINE(in_0[t_0], ..., in_n[t_n])
    ```

    An index that occurs in several inputs is a join key: its extents must
    agree. An output index absent from an input broadcasts that input. An
    index absent from the output is aggregated. The result has a
    floating-point element type (f32, f16, bf16, or f64 for references and
    gradient checks on the interpreter); every input has the
    result's element type, or, for an f32 result, may be 16-bit (f16 or bf16)
    or i8: mixed precision, where such an input is widened exactly to f32 and
    the einsum combines and aggregates in f32 (a bf16 weight matrix times bf16
    activations, accumulated and returned in f32, is how a GPU's tensor cores
    multiply). An i8 input is a signed integer (-128 .. 127): with an f16
    input of scales it multiplies weights quantised in blocks, as llama.cpp's
    Q8_0 stores them (`"sbj,ebj,eb->se"`: blocks `b` of 32 values `j`, one
    scale per row and block).

    Combiners: `mul`, `add`, `max`, `min` take one or more inputs; `sub` and
    `div` take exactly two; `id`, `neg`, `exp`, `silu`, `rsqrt`, `sqrt`,
    `square`, `tanh`, `abs`, `recip`, `relu`, `sigmoid` take exactly one.

    Example: a batched matmul, a row sum of squares, a transpose.

    ```mlir
    %c = tra.einsum "bij,bjk->bik" mul (%a, %b)
        : (tensor<2x4x8xf32>, tensor<2x8x16xf32>) -> tensor<2x4x16xf32>
    %ss = tra.einsum "sd->s" square (%x) : (tensor<4x64xf32>) -> tensor<4xf32>
    %m = tra.einsum "qk->q" id (%s) reduce max
        : (tensor<4x4xf32>) -> tensor<4xf32>
    %t = tra.einsum "ij->ji" id (%a) : (tensor<4x8xf32>) -> tensor<8x4xf32>
    %y = tra.einsum "sd,ed->se" mul (%x, %w)
        : (tensor<4x64xbf16>, tensor<32x64xbf16>) -> tensor<4x32xf32>
    %z = tra.einsum "sbj,ebj,eb->se" mul (%x3, %q, %scales)
        : (tensor<4x2x32xf32>, tensor<16x2x32xi8>, tensor<16x2xf16>)
        -> tensor<4x16xf32>
    ```
  }];
  let arguments = (ins StrAttr:$spec, TRA_CombinerAttr:$combiner,
      DefaultValuedAttr<TRA_AggregationAttr,
                        "::mlir::tra::AggregationKind::sum">:$aggregation,
      Variadic<TRA_Tensor>:$inputs);
  let results = (outs TRA_Tensor:$result);
  let assemblyFormat = [{
    $spec custom<Combiner>($combiner) ` ` `(` $inputs `)`
    (`reduce` custom<Aggregation>($aggregation)^)? attr-dict `:`
    functional-type($inputs, $result)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
  let extraClassDeclaration = [{
    /// The parsed index spec. Only valid on verified ops.
    ::mlir::tra::EinsumSpec getParsedSpec();
  }];
}

//===----------------------------------------------------------------------===//
// tra.map, tra.index, tra.yield
//===----------------------------------------------------------------------===//

def TRA_MapOp : TRA_Op<"map", [Pure, IsolatedFromAbove]> {
  let summary = "elementwise computation with a scalar body";
  let description = [{
    Computes every element of the result by running `body` on the matching
    elements of the inputs: a 1:1 join of the inputs on their keys. Without a
    `spec`, every input has the result's shape. With a `spec` (like an einsum
    spec without aggregated indices), inputs are broadcast: `"sd,d->sd"`
    pairs each row of a matrix with one vector; an input with the empty term
    is a scalar (0-d tensor).

    The body is isolated from above (it sees only its arguments), has one
    scalar argument per input, uses `arith` and `math`
    operations, may read the current result index of a dimension with
    `tra.index`, and ends with `tra.yield` of one value of the result's
    element type.

    Example: a causal mask that keeps key `k` for query `q` at absolute
    position `pos + q`.

    ```mlir
    %masked = tra.map "qk,->qk" (%scores, %pos)
        : (tensor<4x16xf32>, tensor<i64>) -> tensor<4x16xf32> {
    ^bb0(%s: f32, %p: i64):
      %q = tra.index 0
      %k = tra.index 1
      %qi = arith.index_cast %q : index to i64
      %ki = arith.index_cast %k : index to i64
      %abs = arith.addi %p, %qi : i64
      %keep = arith.cmpi sle, %ki, %abs : i64
      %ninf = arith.constant 0xFF800000 : f32
      %r = arith.select %keep, %s, %ninf : f32
      tra.yield %r : f32
    }
    ```
  }];
  let arguments = (ins OptionalAttr<StrAttr>:$spec,
                       Variadic<TRA_Tensor>:$inputs);
  let results = (outs TRA_Tensor:$result);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    ($spec^)? ` ` `(` $inputs `)` attr-dict `:`
    functional-type($inputs, $result) $body
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let hasCanonicalizer = 1;
  let skipDefaultBuilders = 1;
  let builders = [
    OpBuilder<(ins "::mlir::Type":$resultType, "::mlir::ValueRange":$inputs,
                   "::llvm::StringRef":$spec)>
  ];
  let extraClassDeclaration = [{
    /// The parsed index spec; an identity spec when `spec` is absent. Only
    /// valid on verified ops.
    ::mlir::tra::EinsumSpec getParsedSpec();
    /// The value yielded by the body.
    ::mlir::Value getYieldedValue();
  }];
}

def TRA_IndexOp : TRA_Op<"index", [Pure, HasParent<"::mlir::tra::MapOp">]> {
  let summary = "current index of a result dimension inside tra.map";
  let description = [{
    Inside the body of `tra.map`, the index of the element being computed
    along result dimension `dim`.

    ```mlir
    %q = tra.index 0
    ```
  }];
  let arguments = (ins ConfinedAttr<I64Attr, [IntNonNegative]>:$dim);
  let results = (outs Index:$result);
  let assemblyFormat = "$dim attr-dict";
  let hasVerifier = 1;
  let builders = [OpBuilder<(ins "int64_t":$dim), [{
    build($_builder, $_state, $_builder.getIndexType(), dim);
  }]>];
}

def TRA_YieldOp : TRA_Op<"yield", [Pure, Terminator, ReturnLike,
    HasParent<"::mlir::tra::MapOp">]> {
  let summary = "yields the scalar result of a tra.map body";
  let description = [{
    ```mlir
    tra.yield %r : f32
    ```
  }];
  let arguments = (ins AnyType:$value);
  let assemblyFormat = "$value attr-dict `:` type($value)";
}

//===----------------------------------------------------------------------===//
// Data movement on whole tensors
//===----------------------------------------------------------------------===//

def TRA_ConcatOp : TRA_Op<"concat", [Pure]> {
  let summary = "concatenation along one dimension";
  let description = [{
    Concatenates the inputs along `dim`; all other extents must agree.

    ```mlir
    %c = tra.concat dim 1 (%a, %b)
        : (tensor<4x3xf32>, tensor<4x5xf32>) -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins ConfinedAttr<I64Attr, [IntNonNegative]>:$dim,
                       Variadic<TRA_Tensor>:$inputs);
  let results = (outs TRA_Tensor:$result);
  let assemblyFormat = [{
    `dim` $dim ` ` `(` $inputs `)` attr-dict `:`
    functional-type($inputs, $result)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def TRA_SliceOp : TRA_Op<"slice", [Pure]> {
  let summary = "static slice along one dimension";
  let description = [{
    Elements `offset` to `offset + size - 1` of dimension `dim`.

    ```mlir
    %s = tra.slice %x dim 1 offset 2 size 4 : tensor<4x8xf32> -> tensor<4x4xf32>
    ```
  }];
  let arguments = (ins TRA_Tensor:$input,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$dim,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$offset,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$size);
  let results = (outs TRA_Tensor:$result);
  let assemblyFormat = [{
    $input `dim` $dim `offset` $offset `size` $size attr-dict `:`
    type($input) `->` type($result)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def TRA_UpdateSliceOp : TRA_Op<"update_slice", [Pure,
    AllTypesMatch<["dest", "result"]>]> {
  let summary = "write a slice into a tensor at a dynamic position";
  let description = [{
    Returns `dest` with the elements `position` to `position + n - 1` of
    dimension `dim` replaced by `update` (`n` is `update`'s extent along
    `dim`; all other extents agree). `position` is a 0-d integer tensor known
    only at run time, as in a KV-cache update during decoding; evaluating it
    out of bounds is a run-time error.

    ```mlir
    %k2 = tra.update_slice %knew into %kcache dim 0 at %pos
        : tensor<1x4x16xf32> into tensor<512x4x16xf32> at tensor<i64>
    ```
  }];
  let arguments = (ins TRA_Tensor:$update, TRA_Tensor:$dest,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$dim,
                       TRA_PositionTensor:$position);
  let results = (outs TRA_Tensor:$result);
  let assemblyFormat = [{
    $update `into` $dest `dim` $dim `at` $position attr-dict `:`
    type($update) `into` type($dest) `at` type($position)
  }];
  let hasVerifier = 1;
}

def TRA_GatherOp : TRA_Op<"gather", [Pure]> {
  let summary = "gather rows of a table (embedding lookup)";
  let description = [{
    `result[i..., r...] = table[indices[i...], r...]`: the rows of `table`
    (dimension 0) selected by the integer tensor `indices`. The result shape
    is the shape of `indices` followed by the trailing shape of `table`.
    An index out of range is a run-time error.

    ```mlir
    %e = tra.gather %emb[%tokens]
        : tensor<512x64xf32>, tensor<8xi64> -> tensor<8x64xf32>
    ```
  }];
  let arguments = (ins TRA_Tensor:$table, TRA_IndexTensor:$indices);
  let results = (outs TRA_Tensor:$result);
  let assemblyFormat = [{
    $table `[` $indices `]` attr-dict `:` type($table) `,` type($indices)
    `->` type($result)
  }];
  let hasVerifier = 1;
}

def TRA_ReshapeOp : TRA_Op<"reshape", [Pure]> {
  let summary = "group or ungroup dimensions";
  let description = [{
    Reinterprets a tensor with another shape of the same row-major element
    order, where every group of consecutive source dimensions maps to one
    result dimension (grouping) or one source dimension maps to a group of
    consecutive result dimensions (ungrouping). Reshapes that are neither
    (like 2x3 to 3x2) are rejected: they do not preserve tile structure.

    ```mlir
    %h = tra.reshape %q : tensor<4x64xf32> -> tensor<4x8x8xf32>
    %f = tra.reshape %h : tensor<4x8x8xf32> -> tensor<4x64xf32>
    ```
  }];
  let arguments = (ins TRA_Tensor:$input);
  let results = (outs TRA_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
  let extraClassDeclaration = [{
    /// For each group, the source dimensions and the result dimensions it
    /// spans (one side has exactly one dimension, or both do).
    ::llvm::SmallVector<std::pair<::llvm::SmallVector<int64_t>,
                                  ::llvm::SmallVector<int64_t>>>
    getGroups();
  }];
}

def TRA_FillOp : TRA_Op<"fill", [Pure, ConstantLike]> {
  let summary = "a tensor with every element equal to one value";
  let description = [{
    ```mlir
    %z = tra.fill 0.0 : tensor<4x8xf32>
    %eps = tra.fill 1.0e-05 : tensor<f32>
    %p = tra.fill 3 : tensor<i64>
    ```
  }];
  let arguments = (ins TypedAttrInterface:$value);
  let results = (outs TRA_Tensor:$result);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let hasFolder = 1;
}

def TRA_ConvertOp : TRA_Op<"convert", [Pure]> {
  let summary = "element type conversion";
  let description = [{
    Converts every element to another element type (f32, f16, bf16, f64,
    i64, i32, i1); float to float rounds to nearest even, float to integer
    truncates toward zero.

    ```mlir
    %h = tra.convert %x : tensor<4x8xf32> to tensor<4x8xbf16>
    ```
  }];
  let arguments = (ins TRA_Tensor:$input);
  let results = (outs TRA_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `to` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

#endif // TRA_DIALECT_TRA_IR_TRAOPS_TD
