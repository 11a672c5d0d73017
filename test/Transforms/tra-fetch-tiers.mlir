// RUN: tra-opt %s --split-input-file --tra-fetch-tiers | FileCheck %s
// RUN: tra-opt %s --split-input-file --tra-fetch-tiers --tra-fetch-tiers | FileCheck %s --check-prefix=TWICE

// Every operation that reads an argument kept in a memory tier reads a
// fetch of it made right before it; arguments without a tier are read as
// they are.
// CHECK-LABEL: func.func @mlp
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[W0:.*]]: tensor<8x8xf32> {tra_plan.tier = "host"}, %[[W1:.*]]: tensor<8x8xf32> {tra_plan.tier = "disk"}, %[[W2:.*]]: tensor<8x8xf32>)
func.func @mlp(%x: tensor<4x8xf32>, %w0: tensor<8x8xf32> {tra_plan.tier = "host"},
               %w1: tensor<8x8xf32> {tra_plan.tier = "disk"}, %w2: tensor<8x8xf32>) -> tensor<4x8xf32> {
  // CHECK: %[[F0:.*]] = tra_comm.fetch %[[W0]] from "host" : tensor<8x8xf32>
  // CHECK-NEXT: %[[H0:.*]] = tra.einsum "bd,de->be" mul (%[[X]], %[[F0]])
  %h0 = tra.einsum "bd,de->be" mul (%x, %w0) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  // CHECK-NEXT: %[[F1:.*]] = tra_comm.fetch %[[W1]] from "disk" : tensor<8x8xf32>
  // CHECK-NEXT: %[[H1:.*]] = tra.einsum "bd,de->be" mul (%[[H0]], %[[F1]])
  %h1 = tra.einsum "bd,de->be" mul (%h0, %w1) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  // CHECK-NEXT: %[[H2:.*]] = tra.einsum "bd,de->be" mul (%[[H1]], %[[W2]])
  %h2 = tra.einsum "bd,de->be" mul (%h1, %w2) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  // A second reader gets its own fetch; one fetch for both of its operands.
  // CHECK-NEXT: %[[F0B:.*]] = tra_comm.fetch %[[W0]] from "host" : tensor<8x8xf32>
  // CHECK-NEXT: tra.einsum "de,de->de" add (%[[F0B]], %[[F0B]])
  %s = tra.einsum "de,de->de" add (%w0, %w0) : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  // CHECK-NEXT: tra.einsum "bd,de->be" mul (%[[H2]], %{{.*}})
  %y = tra.einsum "bd,de->be" mul (%h2, %s) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
// Running the pass again changes nothing: the fetches read the arguments.
// TWICE-LABEL: func.func @mlp
// TWICE-COUNT-3: tra_comm.fetch
// TWICE-NOT: tra_comm.fetch

// -----

// In a rank's function, a slice of a streamed tile (the part a move sends
// or keeps) fetches the slice only.
// CHECK-LABEL: func.func @slices
func.func @slices(%w: tensor<8x4xf32> {tra_plan.tier = "host"}) -> tensor<4x4xf32> {
  // CHECK: %[[S:.*]] = tensor.extract_slice %{{.*}}[4, 0] [4, 4] [1, 1]
  // CHECK-NEXT: %[[F:.*]] = tra_comm.fetch %[[S]] from "host" : tensor<4x4xf32>
  // CHECK-NEXT: tra_comm.isend %[[F]] to 1 tag 0
  %s = tensor.extract_slice %w[4, 0] [4, 4] [1, 1] : tensor<8x4xf32> to tensor<4x4xf32>
  %r = tra_comm.isend %s to 1 tag 0 : tensor<4x4xf32>
  // CHECK: %[[K:.*]] = tensor.extract_slice %{{.*}}[0, 0] [4, 4] [1, 1]
  // CHECK-NEXT: %[[G:.*]] = tra_comm.fetch %[[K]] from "host" : tensor<4x4xf32>
  // CHECK-NEXT: tra.einsum "ab,ab->ab" mul (%[[G]], %[[G]])
  %k = tensor.extract_slice %w[0, 0] [4, 4] [1, 1] : tensor<8x4xf32> to tensor<4x4xf32>
  %y = tra.einsum "ab,ab->ab" mul (%k, %k) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  tra_comm.wait %r, %s : tensor<4x4xf32>
  return %y : tensor<4x4xf32>
}
// TWICE-LABEL: func.func @slices
// TWICE-COUNT-2: tra_comm.fetch
// TWICE-NOT: tra_comm.fetch
