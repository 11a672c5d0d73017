// A result marked `tra.carries = N` is the next call's argument N: a
// training step's updated weight. The planner charges moving it to the
// distribution the argument is read in, so the update is written in the
// weight's own tiles.
//
// RUN: tra-compile %s --hw %tra_src/hw/cpu-8nodes.json --emit=plan --explain -o %t.plan.mlir | FileCheck %s
// RUN: FileCheck %s --check-prefix=IR < %t.plan.mlir
//
// Without the attribute the same function is planned with the weight read
// whole on every node and its update written in shards, which the next step
// would have to gather first.
// RUN: sed -e 's/, tra.carries = 0 : i64//' %s > %t.free.mlir
// RUN: tra-compile %t.free.mlir --hw %tra_src/hw/cpu-8nodes.json --emit=plan --explain -o %t.free.plan.mlir | FileCheck %s --check-prefix=FREE

// CHECK: EXPLAIN @step
// CHECK-NOT: carried to
// CHECK: TOTAL
// CHECK: moves: 0 all_reduce, 0 reduce_scatter, 0 repartition{{$}}

// The update's written distribution is the weight's.
// IR: func.func @step(%arg0: tensor<32x32xf32> {tra.name = "w", tra_plan.dist = #tra_plan.dist<[[DIST:[^>]*]]>}
// IR: tra.einsum "de,de->de" sub {{.*}}tra_plan.results = [#tra_plan.dist<[[DIST]]>]

// FREE: w argument {{.*}} [1, 1] on 0-7 x8
// FREE: tra.einsum "de,de->de" sub {{.*}} [1, 8] on 0-7
func.func @step(%w: tensor<32x32xf32> {tra.name = "w"}, %x: tensor<16x32xf32>)
    -> (tensor<16x32xf32>, tensor<32x32xf32> {tra.name = "w_out", tra.carries = 0 : i64}) {
  %y = tra.einsum "bd,de->be" mul (%x, %w) : (tensor<16x32xf32>, tensor<32x32xf32>) -> tensor<16x32xf32>
  %z = tra.einsum "be,de->bd" mul (%y, %w) : (tensor<16x32xf32>, tensor<32x32xf32>) -> tensor<16x32xf32>
  %g = tra.einsum "bd,be->de" mul (%x, %z) : (tensor<16x32xf32>, tensor<16x32xf32>) -> tensor<32x32xf32>
  %w2 = tra.einsum "de,de->de" sub (%w, %g) : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  return %z, %w2 : tensor<16x32xf32>, tensor<32x32xf32>
}
