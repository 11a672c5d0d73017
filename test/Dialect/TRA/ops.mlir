// RUN: tra-opt %s | tra-opt | FileCheck %s
// RUN: tra-opt %s --mlir-print-op-generic | tra-opt | FileCheck %s

// CHECK-LABEL: func.func @einsum_matmul
func.func @einsum_matmul(%a: tensor<2x4x8xf32>, %b: tensor<2x8x16xf32>) -> tensor<2x4x16xf32> {
  // CHECK: tra.einsum "bij,bjk->bik" mul (%{{.*}}, %{{.*}}) : (tensor<2x4x8xf32>, tensor<2x8x16xf32>) -> tensor<2x4x16xf32>
  %c = tra.einsum "bij,bjk->bik" mul (%a, %b) : (tensor<2x4x8xf32>, tensor<2x8x16xf32>) -> tensor<2x4x16xf32>
  return %c : tensor<2x4x16xf32>
}

// Q8_0 weights: i8 values and f16 block scales widened into an f32 result.
// CHECK-LABEL: func.func @einsum_q8
func.func @einsum_q8(%x: tensor<4x2x32xf32>, %q: tensor<16x2x32xi8>, %s: tensor<16x2xf16>) -> tensor<4x16xf32> {
  // CHECK: tra.einsum "sbj,ebj,eb->se" mul (%{{.*}}, %{{.*}}, %{{.*}}) : (tensor<4x2x32xf32>, tensor<16x2x32xi8>, tensor<16x2xf16>) -> tensor<4x16xf32>
  %y = tra.einsum "sbj,ebj,eb->se" mul (%x, %q, %s) : (tensor<4x2x32xf32>, tensor<16x2x32xi8>, tensor<16x2xf16>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// CHECK-LABEL: func.func @einsum_aggregations
func.func @einsum_aggregations(%x: tensor<4x64xf16>) -> (tensor<4xf16>, tensor<4xf16>, tensor<4xf16>, tensor<4xf16>) {
  // CHECK: tra.einsum "sd->s" square (%{{.*}}) : (tensor<4x64xf16>) -> tensor<4xf16>
  %0 = tra.einsum "sd->s" square (%x) : (tensor<4x64xf16>) -> tensor<4xf16>
  // CHECK: tra.einsum "sd->s" id (%{{.*}}) reduce max
  %1 = tra.einsum "sd->s" id (%x) reduce max : (tensor<4x64xf16>) -> tensor<4xf16>
  // CHECK: tra.einsum "sd->s" exp (%{{.*}}) reduce min
  %2 = tra.einsum "sd->s" exp (%x) reduce min : (tensor<4x64xf16>) -> tensor<4xf16>
  // CHECK: tra.einsum "sd->s" abs (%{{.*}}) reduce prod
  %3 = tra.einsum "sd->s" abs (%x) reduce prod : (tensor<4x64xf16>) -> tensor<4xf16>
  return %0, %1, %2, %3 : tensor<4xf16>, tensor<4xf16>, tensor<4xf16>, tensor<4xf16>
}

// CHECK-LABEL: func.func @einsum_broadcast_combiners
func.func @einsum_broadcast_combiners(%x: tensor<4x8xbf16>, %r: tensor<4xbf16>, %s: tensor<bf16>) -> tensor<4x8xbf16> {
  // CHECK: tra.einsum "sd,s->sd" div
  %0 = tra.einsum "sd,s->sd" div (%x, %r) : (tensor<4x8xbf16>, tensor<4xbf16>) -> tensor<4x8xbf16>
  // CHECK: tra.einsum "sd,->sd" sub
  %1 = tra.einsum "sd,->sd" sub (%0, %s) : (tensor<4x8xbf16>, tensor<bf16>) -> tensor<4x8xbf16>
  // CHECK: tra.einsum "sd,sd,sd->sd" add
  %2 = tra.einsum "sd,sd,sd->sd" add (%1, %0, %x) : (tensor<4x8xbf16>, tensor<4x8xbf16>, tensor<4x8xbf16>) -> tensor<4x8xbf16>
  // CHECK: tra.einsum "sd->ds" id
  %3 = tra.einsum "sd->ds" id (%2) : (tensor<4x8xbf16>) -> tensor<8x4xbf16>
  // CHECK: tra.einsum "ds->sd" silu
  %4 = tra.einsum "ds->sd" silu (%3) : (tensor<8x4xbf16>) -> tensor<4x8xbf16>
  return %4 : tensor<4x8xbf16>
}

// CHECK-LABEL: func.func @map_causal_mask
func.func @map_causal_mask(%s: tensor<4x16xf32>, %pos: tensor<i64>) -> tensor<4x16xf32> {
  // CHECK: tra.map "qk,->qk" (%{{.*}}, %{{.*}}) : (tensor<4x16xf32>, tensor<i64>) -> tensor<4x16xf32> {
  // CHECK: ^bb0(%[[S:.*]]: f32, %[[P:.*]]: i64):
  // CHECK: tra.index 0
  // CHECK: tra.index 1
  // CHECK: tra.yield %{{.*}} : f32
  %m = tra.map "qk,->qk" (%s, %pos) : (tensor<4x16xf32>, tensor<i64>) -> tensor<4x16xf32> {
  ^bb0(%x: f32, %p: i64):
    %q = tra.index 0
    %k = tra.index 1
    %qi = arith.index_cast %q : index to i64
    %ki = arith.index_cast %k : index to i64
    %abs = arith.addi %p, %qi : i64
    %keep = arith.cmpi sle, %ki, %abs : i64
    %ninf = arith.constant 0xFF800000 : f32
    %r = arith.select %keep, %x, %ninf : f32
    tra.yield %r : f32
  }
  return %m : tensor<4x16xf32>
}

// CHECK-LABEL: func.func @map_no_spec
func.func @map_no_spec(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x8xf16> {
  // CHECK: tra.map (%{{.*}}, %{{.*}}) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf16>
  %m = tra.map (%a, %b) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf16> {
  ^bb0(%x: f32, %y: f32):
    %s = arith.mulf %x, %y : f32
    %h = arith.truncf %s : f32 to f16
    tra.yield %h : f16
  }
  return %m : tensor<4x8xf16>
}

// CHECK-LABEL: func.func @data_movement
func.func @data_movement(%x: tensor<4x64xf32>, %c: tensor<16x4x8xf32>, %n: tensor<1x4x8xf32>, %pos: tensor<i64>, %ids: tensor<3xi64>, %e: tensor<10x64xf32>) -> tensor<4x12xf32> {
  // CHECK: tra.reshape %{{.*}} : tensor<4x64xf32> -> tensor<4x8x8xf32>
  %h = tra.reshape %x : tensor<4x64xf32> -> tensor<4x8x8xf32>
  // CHECK: tra.slice %{{.*}} dim 1 offset 2 size 4 : tensor<4x64xf32> -> tensor<4x4xf32>
  %s = tra.slice %x dim 1 offset 2 size 4 : tensor<4x64xf32> -> tensor<4x4xf32>
  // CHECK: tra.fill 5.000000e-01 : tensor<4x8xf32>
  %z = tra.fill 0.5 : tensor<4x8xf32>
  // CHECK: tra.concat dim 1 (%{{.*}}, %{{.*}}) : (tensor<4x4xf32>, tensor<4x8xf32>) -> tensor<4x12xf32>
  %cc = tra.concat dim 1 (%s, %z) : (tensor<4x4xf32>, tensor<4x8xf32>) -> tensor<4x12xf32>
  // CHECK: tra.update_slice %{{.*}} into %{{.*}} dim 0 at %{{.*}} : tensor<1x4x8xf32> into tensor<16x4x8xf32> at tensor<i64>
  %u = tra.update_slice %n into %c dim 0 at %pos : tensor<1x4x8xf32> into tensor<16x4x8xf32> at tensor<i64>
  // CHECK: tra.gather %{{.*}}[%{{.*}}] : tensor<10x64xf32>, tensor<3xi64> -> tensor<3x64xf32>
  %g = tra.gather %e[%ids] : tensor<10x64xf32>, tensor<3xi64> -> tensor<3x64xf32>
  return %cc : tensor<4x12xf32>
}

// Mixed precision: 16-bit inputs (also beside an f32 one) widened to an f32
// result.
// CHECK-LABEL: func.func @einsum_mixed_precision
func.func @einsum_mixed_precision(%x: tensor<4x64xbf16>, %w: tensor<32x64xbf16>, %a: tensor<4x64xf32>, %h: tensor<64xf16>) -> (tensor<4x32xf32>, tensor<4x64xf32>) {
  // CHECK: tra.einsum "sd,ed->se" mul (%{{.*}}, %{{.*}}) : (tensor<4x64xbf16>, tensor<32x64xbf16>) -> tensor<4x32xf32>
  %0 = tra.einsum "sd,ed->se" mul (%x, %w) : (tensor<4x64xbf16>, tensor<32x64xbf16>) -> tensor<4x32xf32>
  // CHECK: tra.einsum "sd,d->sd" mul (%{{.*}}, %{{.*}}) : (tensor<4x64xf32>, tensor<64xf16>) -> tensor<4x64xf32>
  %1 = tra.einsum "sd,d->sd" mul (%a, %h) : (tensor<4x64xf32>, tensor<64xf16>) -> tensor<4x64xf32>
  return %0, %1 : tensor<4x32xf32>, tensor<4x64xf32>
}

// CHECK-LABEL: func.func @fills_and_converts
func.func @fills_and_converts(%x: tensor<4xf32>) -> (tensor<4xbf16>, tensor<i64>, tensor<2xi1>, tensor<4xf32>, tensor<4xf16>) {
  // CHECK: tra.convert %{{.*}} : tensor<4xf32> to tensor<4xbf16>
  %b = tra.convert %x : tensor<4xf32> to tensor<4xbf16>
  // CHECK: tra.fill 3 : tensor<i64>
  %p = tra.fill 3 : tensor<i64>
  // CHECK: tra.fill true : tensor<2xi1>
  %t = tra.fill true : tensor<2xi1>
  // CHECK: tra.fill -inf : tensor<4xf32>
  %n = tra.fill -inf : tensor<4xf32>
  // CHECK: tra.fill -2.500000e+00 : tensor<4xf16>
  %h = tra.fill -2.5 : tensor<4xf16>
  return %b, %p, %t, %n, %h : tensor<4xbf16>, tensor<i64>, tensor<2xi1>, tensor<4xf32>, tensor<4xf16>
}
