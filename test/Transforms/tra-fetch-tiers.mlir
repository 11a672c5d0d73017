// RUN: tra-opt %s --split-input-file --tra-fetch-tiers="overlap=false" | FileCheck %s --check-prefix=SYNC
// RUN: tra-opt %s --split-input-file --tra-fetch-tiers | FileCheck %s
// RUN: tra-opt %s --split-input-file --tra-fetch-tiers="overlap=false" --tra-fetch-tiers="overlap=false" | FileCheck %s --check-prefix=TWICE
// RUN: tra-opt %s --split-input-file --tra-fetch-tiers --tra-fetch-tiers | FileCheck %s --check-prefix=TWICE-ASYNC

// Every operation that reads an argument kept in a memory tier reads a
// fetch of it made right before it; arguments without a tier are read as
// they are.
// SYNC-LABEL: func.func @mlp
// SYNC-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[W0:.*]]: tensor<8x8xf32> {tra_plan.tier = "host"}, %[[W1:.*]]: tensor<8x8xf32> {tra_plan.tier = "disk"}, %[[W2:.*]]: tensor<8x8xf32>)
// SYNC: %[[F0:.*]] = tra_comm.fetch %[[W0]] from "host" : tensor<8x8xf32>
// SYNC-NEXT: %[[H0:.*]] = tra.einsum "bd,de->be" mul (%[[X]], %[[F0]])
// SYNC-NEXT: %[[F1:.*]] = tra_comm.fetch %[[W1]] from "disk" : tensor<8x8xf32>
// SYNC-NEXT: %[[H1:.*]] = tra.einsum "bd,de->be" mul (%[[H0]], %[[F1]])
// SYNC-NEXT: %[[H2:.*]] = tra.einsum "bd,de->be" mul (%[[H1]], %[[W2]])
// A second reader gets its own fetch; one fetch for both of its operands.
// SYNC-NEXT: %[[F0B:.*]] = tra_comm.fetch %[[W0]] from "host" : tensor<8x8xf32>
// SYNC-NEXT: tra.einsum "de,de->de" add (%[[F0B]], %[[F0B]])
// SYNC-NEXT: tra.einsum "bd,de->be" mul (%[[H2]], %{{.*}})

// With overlap, each fetch starts right after the waits of the previous
// reader of fetched tiles (the first at the start of the function) and is
// waited for where the blocking fetch was: while a reader runs, the next
// reader's tile arrives.
// CHECK-LABEL: func.func @mlp
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[W0:.*]]: tensor<8x8xf32> {tra_plan.tier = "host"}, %[[W1:.*]]: tensor<8x8xf32> {tra_plan.tier = "disk"}, %[[W2:.*]]: tensor<8x8xf32>)
// CHECK-NEXT: %[[B0:.*]], %[[R0:.*]] = tra_comm.ifetch %[[W0]] from "host" : tensor<8x8xf32>
// CHECK-NEXT: %[[F0:.*]] = tra_comm.wait %[[R0]], %[[B0]] : tensor<8x8xf32> -> tensor<8x8xf32>
// CHECK-NEXT: %[[B1:.*]], %[[R1:.*]] = tra_comm.ifetch %[[W1]] from "disk" : tensor<8x8xf32>
// CHECK-NEXT: %[[H0:.*]] = tra.einsum "bd,de->be" mul (%[[X]], %[[F0]])
// CHECK-NEXT: %[[F1:.*]] = tra_comm.wait %[[R1]], %[[B1]] : tensor<8x8xf32> -> tensor<8x8xf32>
// CHECK-NEXT: %[[B2:.*]], %[[R2:.*]] = tra_comm.ifetch %[[W0]] from "host" : tensor<8x8xf32>
// CHECK-NEXT: %[[H1:.*]] = tra.einsum "bd,de->be" mul (%[[H0]], %[[F1]])
// CHECK-NEXT: %[[H2:.*]] = tra.einsum "bd,de->be" mul (%[[H1]], %[[W2]])
// CHECK-NEXT: %[[F2:.*]] = tra_comm.wait %[[R2]], %[[B2]] : tensor<8x8xf32> -> tensor<8x8xf32>
// CHECK-NEXT: tra.einsum "de,de->de" add (%[[F2]], %[[F2]])
func.func @mlp(%x: tensor<4x8xf32>, %w0: tensor<8x8xf32> {tra_plan.tier = "host"},
               %w1: tensor<8x8xf32> {tra_plan.tier = "disk"}, %w2: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %h0 = tra.einsum "bd,de->be" mul (%x, %w0) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %h1 = tra.einsum "bd,de->be" mul (%h0, %w1) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %h2 = tra.einsum "bd,de->be" mul (%h1, %w2) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %s = tra.einsum "de,de->de" add (%w0, %w0) : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %y = tra.einsum "bd,de->be" mul (%h2, %s) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
// Running the pass again changes nothing: the fetches read the arguments.
// TWICE-LABEL: func.func @mlp
// TWICE-COUNT-3: tra_comm.fetch
// TWICE-NOT: tra_comm.fetch
// TWICE-ASYNC-LABEL: func.func @mlp
// TWICE-ASYNC-COUNT-3: tra_comm.ifetch
// TWICE-ASYNC-NOT: tra_comm.ifetch
// TWICE-ASYNC-NOT: tra_comm.fetch
// TWICE-ASYNC-LABEL: func.func @slices

// -----

// In a rank's function, a slice of a streamed tile (the part a move sends
// or keeps) fetches the slice only.
// SYNC-LABEL: func.func @slices
// SYNC: %[[S:.*]] = tensor.extract_slice %{{.*}}[4, 0] [4, 4] [1, 1]
// SYNC-NEXT: %[[F:.*]] = tra_comm.fetch %[[S]] from "host" : tensor<4x4xf32>
// SYNC-NEXT: tra_comm.isend %[[F]] to 1 tag 0
// SYNC: %[[K:.*]] = tensor.extract_slice %{{.*}}[0, 0] [4, 4] [1, 1]
// SYNC-NEXT: %[[G:.*]] = tra_comm.fetch %[[K]] from "host" : tensor<4x4xf32>
// SYNC-NEXT: tra.einsum "ab,ab->ab" mul (%[[G]], %[[G]])

// A slice at static offsets starts with its fetch, one reader early.
// CHECK-LABEL: func.func @slices
// CHECK-NEXT: %[[S:.*]] = tensor.extract_slice %{{.*}}[4, 0] [4, 4] [1, 1]
// CHECK-NEXT: %[[B:.*]], %[[R:.*]] = tra_comm.ifetch %[[S]] from "host" : tensor<4x4xf32>
// CHECK-NEXT: %[[F:.*]] = tra_comm.wait %[[R]], %[[B]]
// CHECK-NEXT: %[[K:.*]] = tensor.extract_slice %{{.*}}[0, 0] [4, 4] [1, 1]
// CHECK-NEXT: %[[C:.*]], %[[Q:.*]] = tra_comm.ifetch %[[K]] from "host" : tensor<4x4xf32>
// CHECK-NEXT: tra_comm.isend %[[F]] to 1 tag 0
// CHECK-NEXT: %[[G:.*]] = tra_comm.wait %[[Q]], %[[C]]
// CHECK-NEXT: tra.einsum "ab,ab->ab" mul (%[[G]], %[[G]])
func.func @slices(%w: tensor<8x4xf32> {tra_plan.tier = "host"}) -> tensor<4x4xf32> {
  %s = tensor.extract_slice %w[4, 0] [4, 4] [1, 1] : tensor<8x4xf32> to tensor<4x4xf32>
  %r = tra_comm.isend %s to 1 tag 0 : tensor<4x4xf32>
  %k = tensor.extract_slice %w[0, 0] [4, 4] [1, 1] : tensor<8x4xf32> to tensor<4x4xf32>
  %y = tra.einsum "ab,ab->ab" mul (%k, %k) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  tra_comm.wait %r, %s : tensor<4x4xf32>
  return %y : tensor<4x4xf32>
}
// TWICE-LABEL: func.func @slices
// TWICE-COUNT-2: tra_comm.fetch
// TWICE-NOT: tra_comm.fetch

// -----

// Two streamed operands of one reader start together, in the order their
// blocking fetches had, while the previous reader runs, their slices moved
// along; so does a slice at an offset known there; readers in a loop body
// fetch within the body.
// CHECK-LABEL: func.func @groups
// CHECK-SAME: %[[P:[^:]*]]: index
// CHECK-NEXT: %[[B0:.*]], %[[R0:.*]] = tra_comm.ifetch %[[A:[^ ]*]] from "host"
// CHECK-NEXT: %[[F0:.*]] = tra_comm.wait %[[R0]], %[[B0]]
// CHECK-NEXT: %[[CS:.*]] = tensor.extract_slice %[[C:arg[0-9]+]][0, 0] [8, 8] [1, 1]
// CHECK-NEXT: %[[B1:.*]], %[[R1:.*]] = tra_comm.ifetch %[[CS]] from "host"
// CHECK-NEXT: %[[B2:.*]], %[[R2:.*]] = tra_comm.ifetch %[[A]] from "host"
// CHECK-NEXT: %[[Y0:.*]] = tra.einsum "ab,bc->ac" mul (%{{.*}}, %[[F0]])
// CHECK-NEXT: %[[F1:.*]] = tra_comm.wait %[[R1]], %[[B1]]
// CHECK-NEXT: %[[F2:.*]] = tra_comm.wait %[[R2]], %[[B2]]
// CHECK-NEXT: %[[D:.*]] = tensor.extract_slice %[[C]][%[[P]], 0] [4, 8] [1, 1]
// CHECK-NEXT: %[[B3:.*]], %[[R3:.*]] = tra_comm.ifetch %[[D]] from "host" : tensor<4x8xf32>
// CHECK-NEXT: tra.einsum "ab,ab->ab" add (%[[F2]], %[[F1]])
// CHECK-NEXT: tra_comm.wait %[[R3]], %[[B3]]
// CHECK: scf.for
// CHECK-NEXT: %[[B4:.*]], %[[R4:.*]] = tra_comm.ifetch %[[A]] from "host"
// CHECK-NEXT: %[[F4:.*]] = tra_comm.wait %[[R4]], %[[B4]]
// CHECK-NEXT: tra.einsum "ab,bc->ac" mul (%{{.*}}, %[[F4]])
func.func @groups(%x: tensor<8x8xf32>, %a: tensor<8x8xf32> {tra_plan.tier = "host"},
                  %c: tensor<16x8xf32> {tra_plan.tier = "host"}, %p: index) -> tensor<8x8xf32> {
  %y0 = tra.einsum "ab,bc->ac" mul (%x, %a) : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %cs = tensor.extract_slice %c[0, 0] [8, 8] [1, 1] : tensor<16x8xf32> to tensor<8x8xf32>
  %y1 = tra.einsum "ab,ab->ab" add (%a, %cs) : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %d = tensor.extract_slice %c[%p, 0] [4, 8] [1, 1] : tensor<16x8xf32> to tensor<4x8xf32>
  %z = tra.einsum "ab,ab->ab" add (%d, %d) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %z8 = tensor.insert_slice %z into %y1[0, 0] [4, 8] [1, 1] : tensor<4x8xf32> into tensor<8x8xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %r = scf.for %i = %c0 to %c2 step %c1 iter_args(%acc = %z8) -> (tensor<8x8xf32>) {
    %n = tra.einsum "ab,bc->ac" mul (%acc, %a) : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
    scf.yield %n : tensor<8x8xf32>
  }
  %sum = tra.einsum "ab,ab->ab" add (%r, %y0) : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  return %sum : tensor<8x8xf32>
}
// TWICE-LABEL: func.func @groups
