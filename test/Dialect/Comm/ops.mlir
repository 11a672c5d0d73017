// RUN: tra-opt %s | tra-opt | FileCheck %s
// RUN: tra-opt %s --mlir-print-op-generic | tra-opt | FileCheck %s

// CHECK-LABEL: func.func @moves
func.func @moves(%t: tensor<4x16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>, tensor<2x16xf32>)
    attributes {tra_comm.rank = 1 : i64, tra_comm.num_ranks = 4 : i64} {
  // CHECK: tra_comm.send %{{.*}} to 3 tag 7 : tensor<4x16xf32>
  tra_comm.send %t to 3 tag 7 : tensor<4x16xf32>
  // CHECK: tra_comm.recv from 0 tag 7 : tensor<4x16xf32>
  %r = tra_comm.recv from 0 tag 7 : tensor<4x16xf32>
  // CHECK: tra_comm.all_reduce sum %{{.*}} ranks [0, 1, 2, 3] : tensor<4x16xf32>
  %a = tra_comm.all_reduce sum %r ranks [0, 1, 2, 3] : tensor<4x16xf32>
  // CHECK: tra_comm.reduce_scatter max %{{.*}} dim 0 ranks [0, 1] sizes [2, 2] : tensor<4x16xf32> -> tensor<2x16xf32>
  %s = tra_comm.reduce_scatter max %a dim 0 ranks [0, 1] sizes [2, 2] : tensor<4x16xf32> -> tensor<2x16xf32>
  return %r, %a, %s : tensor<4x16xf32>, tensor<4x16xf32>, tensor<2x16xf32>
}

// Outside a per-rank function the ranks are not checked against a job.
// CHECK-LABEL: func.func @anywhere
func.func @anywhere(%t: tensor<f32>) -> tensor<f32> {
  // CHECK: tra_comm.all_reduce prod
  %a = tra_comm.all_reduce prod %t ranks [5, 9] : tensor<f32>
  return %a : tensor<f32>
}

// Non-blocking moves: a request per move, completed by one wait.
// CHECK-LABEL: func.func @nonblocking
func.func @nonblocking(%t: tensor<4x16xf32>) -> tensor<2x3xbf16>
    attributes {tra_comm.rank = 1 : i64, tra_comm.num_ranks = 4 : i64} {
  // CHECK: %[[S:.*]] = tra_comm.isend %[[T:.*]] to 3 tag 7 : tensor<4x16xf32>
  %s = tra_comm.isend %t to 3 tag 7 : tensor<4x16xf32>
  // CHECK: %[[B:.*]], %[[R:.*]] = tra_comm.irecv from 0 tag 8 : tensor<2x3xbf16>
  %b, %r = tra_comm.irecv from 0 tag 8 : tensor<2x3xbf16>
  // CHECK: %[[X:.*]] = tra_comm.wait %[[R]], %[[B]] : tensor<2x3xbf16> -> tensor<2x3xbf16>
  %x = tra_comm.wait %r, %b : tensor<2x3xbf16> -> tensor<2x3xbf16>
  // CHECK: tra_comm.wait %[[S]], %[[T]] : tensor<4x16xf32>
  tra_comm.wait %s, %t : tensor<4x16xf32>
  return %x : tensor<2x3xbf16>
}

// A request passed in from elsewhere: only the types are checked.
// CHECK-LABEL: func.func @request_argument
// CHECK-SAME: !tra_comm.request
func.func @request_argument(%req: !tra_comm.request, %t: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: tra_comm.wait %{{.*}}, %{{.*}} : tensor<4xf32> -> tensor<4xf32>
  %x = tra_comm.wait %req, %t : tensor<4xf32> -> tensor<4xf32>
  return %x : tensor<4xf32>
}

// A tile kept in a memory tier, fetched to the device (no rank involved).
// CHECK-LABEL: func.func @fetch
func.func @fetch(%w: tensor<8x8xbf16>) -> (tensor<8x8xbf16>, tensor<8x8xbf16>) {
  // CHECK: tra_comm.fetch %{{.*}} from "host" : tensor<8x8xbf16>
  %h = tra_comm.fetch %w from "host" : tensor<8x8xbf16>
  // CHECK: tra_comm.fetch %{{.*}} from "disk" : tensor<8x8xbf16>
  %d = tra_comm.fetch %w from "disk" : tensor<8x8xbf16>
  return %h, %d : tensor<8x8xbf16>, tensor<8x8xbf16>
}

// The same without blocking: started, then waited for; of an argument or
// of a slice of one.
// CHECK-LABEL: func.func @ifetch
func.func @ifetch(%w: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<2x8xf32>) {
  // CHECK: %[[B:.*]], %[[R:.*]] = tra_comm.ifetch %{{.*}} from "host" : tensor<8x8xf32>
  %b, %r = tra_comm.ifetch %w from "host" : tensor<8x8xf32>
  %s = tensor.extract_slice %w[2, 0] [2, 8] [1, 1] : tensor<8x8xf32> to tensor<2x8xf32>
  // CHECK: tra_comm.ifetch %{{.*}} from "disk" : tensor<2x8xf32>
  %sb, %sr = tra_comm.ifetch %s from "disk" : tensor<2x8xf32>
  // CHECK: tra_comm.wait %[[R]], %[[B]] : tensor<8x8xf32> -> tensor<8x8xf32>
  %f = tra_comm.wait %r, %b : tensor<8x8xf32> -> tensor<8x8xf32>
  %g = tra_comm.wait %sr, %sb : tensor<2x8xf32> -> tensor<2x8xf32>
  return %f, %g : tensor<8x8xf32>, tensor<2x8xf32>
}
