// RUN: tra-opt %s --split-input-file --tra-localize | FileCheck %s
// RUN: tra-opt %s --split-input-file --tra-localize=blocking-moves | FileCheck %s --check-prefix=BLOCK

// A contraction split along its aggregated index: x is re-tiled from rows to
// columns (one local copy and one exchange per rank), then the partial sums
// are all-reduced. x is an argument, so both ranks post the exchange at
// entry (the receive first: move order); the receive is waited on where the
// re-tiled x is first used, the send before the return.

// CHECK: module attributes {dlti.map = #dlti.map<"MPI:Implementation" = "OpenMPI">}
// CHECK-LABEL: func.func @mm.rank0(
// CHECK-SAME: %[[X:.*]]: tensor<3x10xf32> {tra.name = "x", tra_comm.global_shape = array<i64: 6, 10>, tra_comm.offsets = array<i64: 0, 0>}
// CHECK-SAME: %[[W:.*]]: tensor<5x7xf32> {tra.name = "w", tra_comm.global_shape = array<i64: 10, 7>, tra_comm.offsets = array<i64: 0, 0>}
// CHECK-SAME: -> (tensor<6x7xf32> {tra.name = "y", tra_comm.global_shape = array<i64: 6, 7>, tra_comm.offsets = array<i64: 0, 0>, tra_comm.owner = true})
// CHECK-SAME: attributes {tra_comm.num_ranks = 2 : i64, tra_comm.rank = 0 : i64}
// CHECK-NEXT: %[[IN:.*]], %[[RREQ:.*]] = tra_comm.irecv from 1 tag 0 : tensor<3x5xf32>
// CHECK-NEXT: %[[OUT:.*]] = tensor.extract_slice %[[X]][0, 5] [3, 5] [1, 1]
// CHECK-NEXT: %[[SREQ:.*]] = tra_comm.isend %[[OUT]] to 1 tag 1 : tensor<3x5xf32>
// CHECK-NEXT: %[[E:.*]] = tensor.empty() : tensor<6x5xf32>
// CHECK-NEXT: %[[MINE:.*]] = tensor.extract_slice %[[X]][0, 0] [3, 5] [1, 1]
// CHECK-NEXT: %[[A:.*]] = tensor.insert_slice %[[MINE]] into %[[E]][0, 0] [3, 5] [1, 1]
// CHECK-NEXT: %[[THEIRS:.*]] = tra_comm.wait %[[RREQ]], %[[IN]] : tensor<3x5xf32> -> tensor<3x5xf32>
// CHECK-NEXT: %[[B:.*]] = tensor.insert_slice %[[THEIRS]] into %[[A]][3, 0] [3, 5] [1, 1]
// CHECK-NEXT: %[[P:.*]] = tra.einsum "ik,kj->ij" mul (%[[B]], %[[W]]) : (tensor<6x5xf32>, tensor<5x7xf32>) -> tensor<6x7xf32>
// CHECK-NOT: tra_plan
// CHECK-NEXT: %[[R:.*]] = tra_comm.all_reduce sum %[[P]] ranks [0, 1] : tensor<6x7xf32>
// CHECK-NEXT: tra_comm.wait %[[SREQ]], %[[OUT]] : tensor<3x5xf32>
// CHECK-NEXT: return %[[R]]
// CHECK-LABEL: func.func @mm.rank1(
// CHECK-SAME: tra_comm.offsets = array<i64: 3, 0>
// CHECK-SAME: tra_comm.offsets = array<i64: 5, 0>
// CHECK-SAME: tra_comm.owner = false
// CHECK: %[[S1:.*]] = tra_comm.isend %{{.*}} to 0 tag 0 : tensor<3x5xf32>
// CHECK: %[[IN1:.*]], %[[R1:.*]] = tra_comm.irecv from 0 tag 1 : tensor<3x5xf32>
// CHECK: tra_comm.wait %[[R1]], %[[IN1]]
// CHECK: tra_comm.all_reduce sum
// CHECK: tra_comm.wait %[[S1]]
// CHECK-NOT: func.func @mm(

// Blocking moves: each rank's part of each move at the repartition, in the
// same global order on both ranks.
// BLOCK-LABEL: func.func @mm.rank0(
// BLOCK-SAME: %[[X:[^:]*]]: tensor<3x10xf32>
// BLOCK-SAME: %[[W:[^:]*]]: tensor<5x7xf32>
// BLOCK: %[[E:.*]] = tensor.empty() : tensor<6x5xf32>
// BLOCK: %[[MINE:.*]] = tensor.extract_slice %[[X]][0, 0] [3, 5] [1, 1]
// BLOCK: %[[A:.*]] = tensor.insert_slice %[[MINE]] into %[[E]][0, 0] [3, 5] [1, 1]
// BLOCK: %[[THEIRS:.*]] = tra_comm.recv from 1 tag 0 : tensor<3x5xf32>
// BLOCK: %[[B:.*]] = tensor.insert_slice %[[THEIRS]] into %[[A]][3, 0] [3, 5] [1, 1]
// BLOCK: %[[OUT:.*]] = tensor.extract_slice %[[X]][0, 5] [3, 5] [1, 1]
// BLOCK: tra_comm.send %[[OUT]] to 1 tag 1 : tensor<3x5xf32>
// BLOCK: %[[P:.*]] = tra.einsum "ik,kj->ij" mul (%[[B]], %[[W]])
// BLOCK: %[[R:.*]] = tra_comm.all_reduce sum %[[P]] ranks [0, 1] : tensor<6x7xf32>
// BLOCK-NOT: tra_comm.wait
// BLOCK: return %[[R]]
// BLOCK-LABEL: func.func @mm.rank1(
// BLOCK: tra_comm.send %{{.*}} to 0 tag 0 : tensor<3x5xf32>
// BLOCK: tra_comm.recv from 0 tag 1 : tensor<3x5xf32>
// BLOCK: tra_comm.all_reduce sum
func.func @mm(%x: tensor<6x10xf32> {tra.name = "x", tra_plan.dist = #tra_plan.dist<[2, 1] on [0, 1]>},
              %w: tensor<10x7xf32> {tra.name = "w", tra_plan.dist = #tra_plan.dist<[2, 1] on [0, 1]>})
    -> (tensor<6x7xf32> {tra.name = "y"}) attributes {tra_plan.num_devices = 2 : i64} {
  %xk = tra_plan.repartition %x from <[2, 1] on [0, 1]> to <[1, 2] on [0, 1]> : tensor<6x10xf32>
  %p = tra.einsum "ik,kj->ij" mul (%xk, %w) {tra_plan.operands = [#tra_plan.dist<[1, 2] on [0, 1]>, #tra_plan.dist<[2, 1] on [0, 1]>], tra_plan.results = [#tra_plan.dist<[1, 1] partial sum on [[0, 1]]>], tra_plan.split = #tra_plan.split<k = 2>} : (tensor<6x10xf32>, tensor<10x7xf32>) -> tensor<6x7xf32>
  %y = tra_plan.all_reduce %p from <[1, 1] partial sum on [[0, 1]]> to <[1, 1] on [[0, 1]]> : tensor<6x7xf32>
  return %y : tensor<6x7xf32>
}

// -----

// A reduce-scatter leaves each rank its rows; tra.index in a map body is
// shifted by the rank's tile offset; an argument held only by rank 0 is not
// an argument of rank 1.

// CHECK-LABEL: func.func @rs.rank0(
// CHECK-SAME: %[[A:.*]]: tensor<4x3xf32>
// CHECK-SAME: %[[B:.*]]: tensor<3x6xf32>
// CHECK: %[[P:.*]] = tra.einsum
// CHECK: %[[S:.*]] = tra_comm.reduce_scatter sum %[[P]] dim 0 ranks [0, 1] sizes [2, 2] : tensor<4x6xf32> -> tensor<2x6xf32>
// CHECK: tra.map
// CHECK-NOT: arith.addi
// CHECK: tra.yield
// CHECK-LABEL: func.func @rs.rank1(
// CHECK-SAME: %{{.*}}: tensor<4x3xf32>
// CHECK-SAME: %{{.*}}: tensor<3x6xf32>
// CHECK-SAME: ) -> (tensor<2x6xf32>
// CHECK: tra_comm.reduce_scatter sum %{{.*}} dim 0 ranks [0, 1] sizes [2, 2] : tensor<4x6xf32> -> tensor<2x6xf32>
// CHECK: tra.map
// CHECK: %[[I:.*]] = tra.index 0
// CHECK: %[[C:.*]] = arith.constant 2 : index
// CHECK: %[[G:.*]] = arith.addi %[[I]], %[[C]] : index
// CHECK: arith.index_cast %[[G]]
func.func @rs(%a: tensor<4x6xf32> {tra_plan.dist = #tra_plan.dist<[1, 2] on [0, 1]>},
              %b: tensor<6x6xf32> {tra_plan.dist = #tra_plan.dist<[2, 1] on [0, 1]>})
    -> tensor<4x6xf32> attributes {tra_plan.num_devices = 2 : i64} {
  %p = tra.einsum "ik,kj->ij" mul (%a, %b) {tra_plan.operands = [#tra_plan.dist<[1, 2] on [0, 1]>, #tra_plan.dist<[2, 1] on [0, 1]>], tra_plan.results = [#tra_plan.dist<[1, 1] partial sum on [[0, 1]]>], tra_plan.split = #tra_plan.split<k = 2>} : (tensor<4x6xf32>, tensor<6x6xf32>) -> tensor<4x6xf32>
  %s = tra_plan.reduce_scatter %p dim 0 from <[1, 1] partial sum on [[0, 1]]> to <[2, 1] on [0, 1]> : tensor<4x6xf32>
  %m = tra.map (%s) {tra_plan.operands = [#tra_plan.dist<[2, 1] on [0, 1]>], tra_plan.results = [#tra_plan.dist<[2, 1] on [0, 1]>], tra_plan.split = #tra_plan.split<a = 2>} : (tensor<4x6xf32>) -> tensor<4x6xf32> {
  ^bb0(%v: f32):
    %i = tra.index 0
    %ii = arith.index_cast %i : index to i64
    %f = arith.sitofp %ii : i64 to f32
    %r = arith.addf %v, %f : f32
    tra.yield %r : f32
  }
  return %m : tensor<4x6xf32>
}

// -----

// An embedding table split by rows: each rank gathers the rows it holds and
// zeros elsewhere, then the partial sums are combined.

// CHECK-LABEL: func.func @embed.rank1(
// CHECK-SAME: %[[T:.*]]: tensor<4x8xf32>
// CHECK-SAME: %[[IDX:.*]]: tensor<3xi64>
// CHECK: %[[LOCAL:.*]] = tra.map (%[[IDX]])
// CHECK: arith.constant 4 : i64
// CHECK: arith.subi
// CHECK: arith.select
// CHECK: %[[G:.*]] = tra.gather %[[T]][%[[LOCAL]]]
// CHECK: tra.map "ab,a->ab" (%[[G]], %[[IDX]])
// CHECK: arith.cmpi sge
// CHECK: arith.cmpi slt
// CHECK: tra_comm.all_reduce sum
func.func @embed(%t: tensor<8x8xf32> {tra_plan.dist = #tra_plan.dist<[2, 1] on [0, 1]>},
                 %i: tensor<3xi64> {tra_plan.dist = #tra_plan.dist<[1] on [[0, 1]]>})
    -> tensor<3x8xf32> attributes {tra_plan.num_devices = 2 : i64} {
  %g = tra.gather %t[%i] {tra_plan.operands = [#tra_plan.dist<[2, 1] on [0, 1]>, #tra_plan.dist<[1] on [[0, 1]]>], tra_plan.results = [#tra_plan.dist<[1, 1] partial sum on [[0, 1]]>], tra_plan.split = #tra_plan.split<b = 2>} : tensor<8x8xf32>, tensor<3xi64> -> tensor<3x8xf32>
  %r = tra_plan.all_reduce %g from <[1, 1] partial sum on [[0, 1]]> to <[1, 1] on [[0, 1]]> : tensor<3x8xf32>
  return %r : tensor<3x8xf32>
}

// -----

// Communication overlapping computation: y is gathered onto both ranks. Its
// half is sent as soon as it is computed, before the unrelated einsum, and
// the other half is waited for right before y's first use; the send's wait
// comes before the return.

// CHECK-LABEL: func.func @overlap.rank0(
// CHECK-SAME: %[[X:[^:]*]]: tensor<2x8xf32>
// CHECK-SAME: %[[A:[^:]*]]: tensor<4x4xf32>
// CHECK: %[[Y:.*]] = tra.map (%[[X]])
// CHECK: %[[IN:.*]], %[[RREQ:.*]] = tra_comm.irecv from 1 tag 0 : tensor<2x8xf32>
// CHECK-NEXT: %[[SREQ:.*]] = tra_comm.isend %[[Y]] to 1 tag 1 : tensor<2x8xf32>
// CHECK-NEXT: %[[Z:.*]] = tra.einsum "ik,kj->ij" mul (%[[A]], %[[A]])
// CHECK-NEXT: %[[E:.*]] = tensor.empty() : tensor<4x8xf32>
// CHECK-NEXT: %[[L:.*]] = tensor.insert_slice %[[Y]] into %[[E]][0, 0] [2, 8] [1, 1]
// CHECK-NEXT: %[[GOT:.*]] = tra_comm.wait %[[RREQ]], %[[IN]] : tensor<2x8xf32> -> tensor<2x8xf32>
// CHECK-NEXT: %[[YR:.*]] = tensor.insert_slice %[[GOT]] into %[[L]][2, 0] [2, 8] [1, 1]
// CHECK-NEXT: %[[V:.*]] = tra.map (%[[YR]])
// CHECK: tra_comm.wait %[[SREQ]], %[[Y]] : tensor<2x8xf32>
// CHECK-NEXT: return %[[V]], %[[Z]]
// CHECK-LABEL: func.func @overlap.rank1(
// CHECK: %[[Y1:.*]] = tra.map
// CHECK: %[[S1:.*]] = tra_comm.isend %[[Y1]] to 0 tag 0 : tensor<2x8xf32>
// CHECK-NEXT: %[[IN1:.*]], %[[R1:.*]] = tra_comm.irecv from 0 tag 1 : tensor<2x8xf32>
// CHECK-NEXT: tra.einsum
// CHECK: tra_comm.wait %[[R1]], %[[IN1]]
// CHECK: tra_comm.wait %[[S1]], %[[Y1]]

// With blocking moves, the exchange happens at the repartition, after the
// einsum.
// BLOCK-LABEL: func.func @overlap.rank0(
// BLOCK: tra.einsum
// BLOCK: tra_comm.recv from 1 tag 0 : tensor<2x8xf32>
// BLOCK: tra_comm.send %{{.*}} to 1 tag 1 : tensor<2x8xf32>
// BLOCK: tra.map
func.func @overlap(%x: tensor<4x8xf32> {tra_plan.dist = #tra_plan.dist<[2, 1] on [0, 1]>},
                   %a: tensor<4x4xf32> {tra_plan.dist = #tra_plan.dist<[1, 1] on [[0, 1]]>})
    -> (tensor<4x8xf32>, tensor<4x4xf32>) attributes {tra_plan.num_devices = 2 : i64} {
  %y = tra.map (%x) {tra_plan.operands = [#tra_plan.dist<[2, 1] on [0, 1]>], tra_plan.results = [#tra_plan.dist<[2, 1] on [0, 1]>], tra_plan.split = #tra_plan.split<a = 2>} : (tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%v: f32):
    %e = math.exp %v : f32
    tra.yield %e : f32
  }
  %z = tra.einsum "ik,kj->ij" mul (%a, %a) {tra_plan.operands = [#tra_plan.dist<[1, 1] on [[0, 1]]>, #tra_plan.dist<[1, 1] on [[0, 1]]>], tra_plan.results = [#tra_plan.dist<[1, 1] on [[0, 1]]>], tra_plan.split = #tra_plan.split<>} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %yr = tra_plan.repartition %y from <[2, 1] on [0, 1]> to <[1, 1] on [[0, 1]]> : tensor<4x8xf32>
  %w = tra.map (%yr) {tra_plan.operands = [#tra_plan.dist<[1, 1] on [[0, 1]]>], tra_plan.results = [#tra_plan.dist<[1, 1] on [[0, 1]]>], tra_plan.split = #tra_plan.split<>} : (tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%v: f32):
    %n = arith.negf %v : f32
    tra.yield %n : f32
  }
  return %w, %z : tensor<4x8xf32>, tensor<4x4xf32>
}
