// RUN: tra-opt %s --tra-convert-to-linalg --split-input-file | FileCheck %s
// RUN: tra-opt %s --tra-convert-to-linalg="named-contractions=false" --split-input-file | FileCheck %s --check-prefix=GENERIC

// A matmul with a transposed right operand is a contraction: the output
// indices come first (parallel), the aggregated index last, and the init is
// the sum identity.
// CHECK-DAG: #[[$MK:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[$NK:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[$MN:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @matmul_transposed
// CHECK-SAME: (%[[A:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<16x8xf32>)
// CHECK: %[[EMPTY:.*]] = tensor.empty() : tensor<4x16xf32>
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[INIT:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[EMPTY]] : tensor<4x16xf32>)
// CHECK: %[[C:.*]] = linalg.contract indexing_maps = [#[[$MK]], #[[$NK]], #[[$MN]]]
// CHECK-SAME: ins(%[[A]], %[[B]] : tensor<4x8xf32>, tensor<16x8xf32>) outs(%[[INIT]] : tensor<4x16xf32>)
// CHECK: return %[[C]]
// GENERIC-LABEL: func.func @matmul_transposed
// GENERIC: linalg.generic
// GENERIC-SAME: iterator_types = ["parallel", "parallel", "reduction"]
// GENERIC: ^bb0(%[[X:.*]]: f32, %[[Y:.*]]: f32, %[[ACC:.*]]: f32):
// GENERIC: %[[P:.*]] = arith.mulf %[[X]], %[[Y]] : f32
// GENERIC: %[[S:.*]] = arith.addf %[[ACC]], %[[P]] : f32
// GENERIC: linalg.yield %[[S]] : f32
func.func @matmul_transposed(%a: tensor<4x8xf32>, %b: tensor<16x8xf32>) -> tensor<4x16xf32> {
  %c = tra.einsum "sd,ed->se" mul (%a, %b) : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
  return %c : tensor<4x16xf32>
}

// -----

// CHECK-DAG: #[[$A:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-DAG: #[[$B:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>
// CHECK-DAG: #[[$C:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @batched
// CHECK: linalg.contract indexing_maps = [#[[$A]], #[[$B]], #[[$C]]]
func.func @batched(%a: tensor<2x4x8xf32>, %b: tensor<2x8x16xf32>) -> tensor<2x4x16xf32> {
  %c = tra.einsum "bij,bjk->bik" mul (%a, %b) : (tensor<2x4x8xf32>, tensor<2x8x16xf32>) -> tensor<2x4x16xf32>
  return %c : tensor<2x4x16xf32>
}

// -----

// A max aggregation starts from -inf.
// CHECK-LABEL: func.func @row_max
// CHECK: %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[INIT:.*]] = linalg.fill ins(%[[NINF]] : f32)
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "reduction"]
// CHECK-SAME: outs(%[[INIT]] : tensor<4xf32>)
// CHECK: ^bb0(%[[X:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK: %[[M:.*]] = arith.maximumf %[[ACC]], %[[X]] : f32
// CHECK: linalg.yield %[[M]]
func.func @row_max(%a: tensor<4x8xf32>) -> tensor<4xf32> {
  %m = tra.einsum "sd->s" id (%a) reduce max : (tensor<4x8xf32>) -> tensor<4xf32>
  return %m : tensor<4xf32>
}

// -----

// Without aggregated indices there is no init and no aggregation: the
// einsum is an elementwise op with broadcasting.
// CHECK-DAG: #[[$ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$ROW:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @broadcast_add
// CHECK-NOT: linalg.fill
// CHECK: linalg.generic {indexing_maps = [#[[$ID]], #[[$ROW]], #[[$ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK: arith.addf
func.func @broadcast_add(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %c = tra.einsum "sd,d->sd" add (%a, %b) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %c : tensor<4x8xf32>
}

// -----

// An outer product aggregates nothing: it is not a contraction.
// CHECK-LABEL: func.func @negative_outer_product
// CHECK-NOT: linalg.contract
// CHECK: linalg.generic
func.func @negative_outer_product(%a: tensor<4xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %c = tra.einsum "i,j->ij" mul (%a, %b) : (tensor<4xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %c : tensor<4x8xf32>
}

// -----

// An index aggregated from one input only is not a matmul-shaped contraction.
// CHECK-LABEL: func.func @negative_one_sided_sum
// CHECK-NOT: linalg.contract
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "reduction", "reduction"]
func.func @negative_one_sided_sum(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4xf32> {
  %c = tra.einsum "ij,k->i" mul (%a, %b) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4xf32>
  return %c : tensor<4xf32>
}

// -----

// bf16 einsums accumulate in f32 and round once at the end.
// CHECK-LABEL: func.func @bf16_accumulates_in_f32
// CHECK: %[[ACC:.*]] = linalg.contract
// CHECK-SAME: ins(%{{.*}}, %{{.*}} : tensor<4x8xbf16>, tensor<8x2xbf16>) outs(%{{.*}} : tensor<4x2xf32>)
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[ACC]] : tensor<4x2xf32>) outs(%{{.*}} : tensor<4x2xbf16>)
// CHECK: arith.truncf %{{.*}} : f32 to bf16
func.func @bf16_accumulates_in_f32(%a: tensor<4x8xbf16>, %b: tensor<8x2xbf16>) -> tensor<4x2xbf16> {
  %c = tra.einsum "ij,jk->ik" mul (%a, %b) : (tensor<4x8xbf16>, tensor<8x2xbf16>) -> tensor<4x2xbf16>
  return %c : tensor<4x2xbf16>
}

// -----

// Combiners: silu is x / (1 + exp(-x)), as in the interpreter.
// CHECK-LABEL: func.func @silu
// CHECK: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK: %[[NEG:.*]] = arith.negf %[[X]] : f32
// CHECK: %[[E:.*]] = math.exp %[[NEG]] : f32
// CHECK: %[[DEN:.*]] = arith.addf %[[ONE]], %[[E]] : f32
// CHECK: %[[R:.*]] = arith.divf %[[X]], %[[DEN]] : f32
// CHECK: linalg.yield %[[R]]
func.func @silu(%a: tensor<4xf32>) -> tensor<4xf32> {
  %c = tra.einsum "i->i" silu (%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %c : tensor<4xf32>
}

// -----

// relu keeps NaN out: x > 0 ? x : 0.
// CHECK-LABEL: func.func @relu
// CHECK: %[[POS:.*]] = arith.cmpf ogt
// CHECK: arith.select %[[POS]]
func.func @relu(%a: tensor<4xf32>) -> tensor<4xf32> {
  %c = tra.einsum "i->i" relu (%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %c : tensor<4xf32>
}

// -----

// A product aggregation of a difference starts from one.
// CHECK-LABEL: func.func @prod_of_sub
// CHECK: arith.constant 1.000000e+00 : f32
// CHECK: linalg.generic
// CHECK: %[[D:.*]] = arith.subf
// CHECK: arith.mulf %{{.*}}, %[[D]] : f32
func.func @prod_of_sub(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4xf32> {
  %c = tra.einsum "ij,ij->i" sub (%a, %b) reduce prod : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4xf32>
  return %c : tensor<4xf32>
}

// -----

// Mixed precision: bf16 x bf16 -> f32 is one contraction of the 16-bit
// operands into an f32 accumulator, which is the result (no rounding after).
// CHECK-LABEL: func.func @mixed_bf16_into_f32
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xbf16>, %[[W:.*]]: tensor<16x8xbf16>)
// CHECK: %[[INIT:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<4x16xf32>)
// CHECK: %[[C:.*]] = linalg.contract
// CHECK-SAME: ins(%[[X]], %[[W]] : tensor<4x8xbf16>, tensor<16x8xbf16>) outs(%[[INIT]] : tensor<4x16xf32>)
// CHECK-NEXT: return %[[C]] : tensor<4x16xf32>
// GENERIC-LABEL: func.func @mixed_bf16_into_f32
// GENERIC: ^bb0(%[[X:.*]]: bf16, %[[Y:.*]]: bf16, %[[ACC:.*]]: f32):
// GENERIC-DAG: %[[XW:.*]] = arith.extf %[[X]] : bf16 to f32
// GENERIC-DAG: %[[YW:.*]] = arith.extf %[[Y]] : bf16 to f32
// GENERIC: %[[P:.*]] = arith.mulf %[[XW]], %[[YW]] : f32
// GENERIC: arith.addf %[[ACC]], %[[P]] : f32
// GENERIC-NOT: arith.truncf
func.func @mixed_bf16_into_f32(%x: tensor<4x8xbf16>, %w: tensor<16x8xbf16>) -> tensor<4x16xf32> {
  %c = tra.einsum "sd,ed->se" mul (%x, %w) : (tensor<4x8xbf16>, tensor<16x8xbf16>) -> tensor<4x16xf32>
  return %c : tensor<4x16xf32>
}

// -----

// An f16 input beside an f32 one is widened inside the loop body.
// CHECK-LABEL: func.func @mixed_f32_f16
// GENERIC-LABEL: func.func @mixed_f32_f16
// GENERIC: ^bb0(%[[X:.*]]: f32, %[[H:.*]]: f16, %{{.*}}: f32):
// GENERIC: %[[HW:.*]] = arith.extf %[[H]] : f16 to f32
// GENERIC: arith.mulf %[[X]], %[[HW]] : f32
func.func @mixed_f32_f16(%x: tensor<4x8xf32>, %h: tensor<8xf16>) -> tensor<4x8xf32> {
  %c = tra.einsum "sd,d->sd" mul (%x, %h) : (tensor<4x8xf32>, tensor<8xf16>) -> tensor<4x8xf32>
  return %c : tensor<4x8xf32>
}
