// RUN: tra-opt %s --split-input-file --tra-autodiff | FileCheck %s
// RUN: tra-opt %s --split-input-file --tra-autodiff --canonicalize --cse | tra-opt --split-input-file | FileCheck %s --check-prefix=ROUNDTRIP

// A matmul's gradients are matmuls; the loss's square has a map body.
// CHECK-LABEL: func.func @matmul_grad(
// CHECK-SAME: %[[X:.*]]: tensor<4x8xf32> {tra.name = "x"}, %[[W:.*]]: tensor<8x2xf32> {tra.name = "w"})
// CHECK-SAME: -> (tensor<f32> {tra.name = "result0"}, tensor<4x8xf32> {tra.name = "grad_x"}, tensor<8x2xf32> {tra.name = "grad_w"})
// CHECK: %[[Y:.*]] = tra.einsum "sd,df->sf" mul (%[[X]], %[[W]])
// CHECK: %[[L:.*]] = tra.einsum "sf->" square (%[[Y]])
// CHECK: %[[ONE:.*]] = tra.fill 1.000000e+00 : tensor<f32>
// CHECK: %[[DY:.*]] = tra.map ",sf->sf" (%[[ONE]], %[[Y]])
// CHECK: arith.mulf
// CHECK: %[[DX:.*]] = tra.einsum "sf,df->sd" mul (%[[DY]], %[[W]])
// CHECK: %[[DW:.*]] = tra.einsum "sf,sd->df" mul (%[[DY]], %[[X]])
// CHECK: return %[[L]], %[[DX]], %[[DW]]
// ROUNDTRIP-LABEL: func.func @matmul_grad(
func.func @matmul(%x: tensor<4x8xf32> {tra.name = "x"},
                  %w: tensor<8x2xf32> {tra.name = "w"}) -> tensor<f32> {
  %y = tra.einsum "sd,df->sf" mul (%x, %w)
      : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
  %l = tra.einsum "sf->" square (%y) : (tensor<4x2xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Only arguments marked tra.wrt; a value used twice sums its gradients; a
// summed-away index unique to one input is broadcast back.
// CHECK-LABEL: func.func @marked_grad(
// CHECK-SAME: -> (tensor<f32> {tra.name = "result0"}, tensor<3x4xf32> {tra.name = "grad_a"})
// CHECK: %[[G:.*]] = tra.map "->ij"
// CHECK: %[[SUM:.*]] = tra.map (%[[G]], %[[G]])
// CHECK: arith.addf
// CHECK: return %{{.*}}, %[[SUM]]
// ROUNDTRIP-LABEL: func.func @marked_grad(
func.func @marked(%a: tensor<3x4xf32> {tra.name = "a", tra.wrt},
                  %b: tensor<3x4xf32> {tra.name = "b"}) -> tensor<f32> {
  %s = tra.einsum "ij,ij->ij" add (%a, %a)
      : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  %l = tra.einsum "ij->" id (%s) : (tensor<3x4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// A max aggregation routes the gradient through a mask of the maxima.
// CHECK-LABEL: func.func @rowmax_grad(
// CHECK: %[[M:.*]] = tra.einsum "ij->i" id (%[[X:.*]]) reduce max
// CHECK: %[[HIT:.*]] = tra.map "ij,i->ij" (%[[X]], %[[M]])
// CHECK: arith.cmpf oeq
// CHECK: %[[CNT:.*]] = tra.einsum "ij->i" id (%[[HIT]])
// CHECK: tra.map "ij,i,i->ij" (%[[HIT]], %{{.*}}, %[[CNT]])
// CHECK: arith.divf
// ROUNDTRIP-LABEL: func.func @rowmax_grad(
func.func @rowmax(%x: tensor<3x5xf32> {tra.name = "x"}) -> tensor<f32> {
  %m = tra.einsum "ij->i" id (%x) reduce max : (tensor<3x5xf32>) -> tensor<3xf32>
  %l = tra.einsum "i->" id (%m) : (tensor<3xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// gather's gradient is a one-hot join over the table's rows; the token ids
// get none.
// CHECK-LABEL: func.func @embed_grad(
// CHECK-SAME: -> (tensor<f32> {tra.name = "result0"}, tensor<6x4xf32> {tra.name = "grad_emb"})
// CHECK: %[[HOT:.*]] = tra.map "a->ab" (%[[IDS:.*]]) : (tensor<3xi64>) -> tensor<3x6xf32>
// CHECK: tra.index 1
// CHECK: arith.cmpi eq
// CHECK: %[[DE:.*]] = tra.einsum "ab,ac->bc" mul (%[[HOT]], %{{.*}}) : (tensor<3x6xf32>, tensor<3x4xf32>) -> tensor<6x4xf32>
// CHECK: return %{{.*}}, %[[DE]]
// ROUNDTRIP-LABEL: func.func @embed_grad(
func.func @embed(%emb: tensor<6x4xf32> {tra.name = "emb"},
                 %ids: tensor<3xi64> {tra.name = "ids"}) -> tensor<f32> {
  %e = tra.gather %emb[%ids] : tensor<6x4xf32>, tensor<3xi64> -> tensor<3x4xf32>
  %l = tra.einsum "sd->" square (%e) : (tensor<3x4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// update_slice: the destination's gradient has the window zeroed; the
// update's is the window of the gradient, gathered by row.
// CHECK-LABEL: func.func @cache_grad(
// CHECK: %[[DD:.*]] = tra.map "ab,->ab" (%{{.*}}, %[[POS:.*]]) : (tensor<8x4xf32>, tensor<i64>)
// CHECK: arith.cmpi slt
// CHECK: arith.cmpi sge
// CHECK: %[[ROWS:.*]] = tra.map "->a" (%[[POS]]) : (tensor<i64>) -> tensor<2xi64>
// CHECK: %[[DU:.*]] = tra.gather %{{.*}}[%[[ROWS]]] : tensor<8x4xf32>, tensor<2xi64> -> tensor<2x4xf32>
// CHECK: return %{{.*}}, %[[DU]], %[[DD]]
// ROUNDTRIP-LABEL: func.func @cache_grad(
func.func @cache(%u: tensor<2x4xf32> {tra.name = "u"},
                 %d: tensor<8x4xf32> {tra.name = "d"},
                 %p: tensor<i64> {tra.name = "p"}) -> tensor<f32> {
  %c = tra.update_slice %u into %d dim 0 at %p
      : tensor<2x4xf32> into tensor<8x4xf32> at tensor<i64>
  %l = tra.einsum "ij->" square (%c) : (tensor<8x4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// A 16-bit weight in a mixed-precision einsum gets an f32 gradient
// converted to its type; a chosen argument the loss ignores gets zeros.
// CHECK-LABEL: func.func @mixed_grad(
// CHECK-SAME: -> (tensor<f32> {tra.name = "result0"}, tensor<2x8xbf16> {tra.name = "grad_w"}, tensor<3xf32> {tra.name = "grad_unused"})
// CHECK: %[[DW:.*]] = tra.einsum "se,sd->ed" mul (%{{.*}}, %{{.*}}) : (tensor<4x2xf32>, tensor<4x8xbf16>) -> tensor<2x8xf32>
// CHECK: %[[DW16:.*]] = tra.convert %[[DW]] : tensor<2x8xf32> to tensor<2x8xbf16>
// CHECK: %[[Z:.*]] = tra.fill 0.000000e+00 : tensor<3xf32>
// CHECK: return %{{.*}}, %[[DW16]], %[[Z]]
// ROUNDTRIP-LABEL: func.func @mixed_grad(
func.func @mixed(%x: tensor<4x8xbf16> {tra.name = "x"},
                 %w: tensor<2x8xbf16> {tra.name = "w", tra.wrt},
                 %unused: tensor<3xf32> {tra.name = "unused", tra.wrt})
    -> tensor<f32> {
  %y = tra.einsum "sd,ed->se" mul (%x, %w)
      : (tensor<4x8xbf16>, tensor<2x8xbf16>) -> tensor<4x2xf32>
  %l = tra.einsum "se->" id (%y) : (tensor<4x2xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
