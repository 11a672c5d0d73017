//===- TRAAttrs.td - tra dialect attributes ----------------*- tablegen -*-===//

#ifndef TRA_DIALECT_TRA_IR_TRAATTRS_TD
#define TRA_DIALECT_TRA_IR_TRAATTRS_TD

include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"
include "tra/Dialect/TRA/IR/TRADialect.td"

//===----------------------------------------------------------------------===//
// Scalar combiners of tra.einsum
//===----------------------------------------------------------------------===//

def TRA_CombinerKind : I32EnumAttr<"CombinerKind",
    "scalar function applied to each joined tuple of input elements", [
  // N-ary (one or more inputs), associative and commutative.
  I32EnumAttrCase<"mul", 0>,
  I32EnumAttrCase<"add", 1>,
  I32EnumAttrCase<"max", 2>,
  I32EnumAttrCase<"min", 3>,
  // Binary.
  I32EnumAttrCase<"sub", 4>,
  I32EnumAttrCase<"div", 5>,
  // Unary.
  I32EnumAttrCase<"id", 6>,
  I32EnumAttrCase<"neg", 7>,
  I32EnumAttrCase<"exp", 8>,
  I32EnumAttrCase<"silu", 9>,
  I32EnumAttrCase<"rsqrt", 10>,
  I32EnumAttrCase<"sqrt", 11>,
  I32EnumAttrCase<"square", 12>,
  I32EnumAttrCase<"tanh", 13>,
  I32EnumAttrCase<"abs", 14>,
  I32EnumAttrCase<"recip", 15>,
  I32EnumAttrCase<"relu", 16>,
  I32EnumAttrCase<"sigmoid", 17>,
]> {
  let cppNamespace = "::mlir::tra";
  let genSpecializedAttr = 0;
}

def TRA_CombinerAttr : EnumAttr<TRA_Dialect, TRA_CombinerKind, "combiner"> {
  let assemblyFormat = "$value";
}

//===----------------------------------------------------------------------===//
// Aggregations of tra.einsum
//===----------------------------------------------------------------------===//

def TRA_AggregationKind : I32EnumAttr<"AggregationKind",
    "aggregation over the indices absent from the output", [
  I32EnumAttrCase<"sum", 0>,
  I32EnumAttrCase<"max", 1>,
  I32EnumAttrCase<"min", 2>,
  I32EnumAttrCase<"prod", 3>,
]> {
  let cppNamespace = "::mlir::tra";
  let genSpecializedAttr = 0;
}

def TRA_AggregationAttr
    : EnumAttr<TRA_Dialect, TRA_AggregationKind, "aggregation"> {
  let assemblyFormat = "$value";
}

#endif // TRA_DIALECT_TRA_IR_TRAATTRS_TD
