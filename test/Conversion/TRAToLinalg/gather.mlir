// RUN: tra-opt %s --tra-convert-to-linalg | FileCheck %s

// result[i, j, r] = table[indices[i, j], r]: a generic over the result that
// reads the index through a projection and the table with tensor.extract,
// after a bounds check, at the index clamped into range (a failed check is
// reported and the code goes on: tra-report-failed-checks).
// CHECK-DAG: #[[$IDX:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[$OUT:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @gather
// CHECK-SAME: (%[[T:.*]]: tensor<16x4xf32>, %[[I:.*]]: tensor<2x3xi64>)
// CHECK: linalg.generic {indexing_maps = [#[[$IDX]], #[[$OUT]]], iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK-SAME: ins(%[[I]] : tensor<2x3xi64>)
// CHECK: ^bb0(%[[RAW:.*]]: i64, %{{.*}}: f32):
// CHECK: %[[ROW:.*]] = arith.index_cast %[[RAW]] : i64 to index
// CHECK: arith.constant 15 : index
// CHECK: cf.assert %{{.*}}, "tra.gather at {{.*}}gather.mlir:{{[0-9]+}}:{{[0-9]+}}: index out of range [0, 16)"
// CHECK: %[[LOW:.*]] = arith.maxsi %[[ROW]], %{{.*}} : index
// CHECK: %[[SAFE:.*]] = arith.minsi %[[LOW]], %{{.*}} : index
// CHECK: %[[COL:.*]] = linalg.index 2 : index
// CHECK: %[[V:.*]] = tensor.extract %[[T]][%[[SAFE]], %[[COL]]] : tensor<16x4xf32>
// CHECK: linalg.yield %[[V]] : f32
func.func @gather(%t: tensor<16x4xf32>, %i: tensor<2x3xi64>) -> tensor<2x3x4xf32> {
  %e = tra.gather %t[%i] : tensor<16x4xf32>, tensor<2x3xi64> -> tensor<2x3x4xf32>
  return %e : tensor<2x3x4xf32>
}
