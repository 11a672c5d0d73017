// RUN: tra-opt %s --split-input-file --one-shot-bufferize="bufferize-function-boundaries" | FileCheck %s
// RUN: tra-opt %s --split-input-file --one-shot-bufferize="bufferize-function-boundaries" --tra-convert-mpi-to-llvm | FileCheck %s --check-prefix=LLVM
// RUN: tra-opt %s --split-input-file --one-shot-bufferize="bufferize-function-boundaries" --canonicalize | FileCheck %s --check-prefix=FOLD

// The tra_comm ops bufferize to the mpi dialect where it can express the
// move (f32 sends and receives, all-reduces over every rank) and to the tra
// MPI runtime otherwise (f16 payloads, groups smaller than the job,
// reduce-scatter).

module attributes {dlti.map = #dlti.map<"MPI:Implementation" = "OpenMPI">} {
  // CHECK-LABEL: func.func @moves
  func.func @moves(%t: tensor<4x8xf32>, %h: tensor<4xf16>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x4xf32>)
      attributes {tra_comm.rank = 0 : i64, tra_comm.num_ranks = 4 : i64} {
    // CHECK: %[[COMM:.*]] = mpi.comm_world : !mpi.comm
    // CHECK: %[[FLAT:.*]] = memref.collapse_shape %{{.*}} {{\[\[}}0, 1]] : memref<4x8xf32> into memref<32xf32>
    // CHECK: mpi.send(%[[FLAT]], %{{.*}}, %{{.*}}, %[[COMM]]) : memref<32xf32>, i32, i32
    // LLVM: llvm.call @MPI_Send
    tra_comm.send %t to 1 tag 3 : tensor<4x8xf32>
    // CHECK: call @tra_mpi_send(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (!llvm.ptr, i64, i32, i32) -> ()
    tra_comm.send %h to 1 tag 4 : tensor<4xf16>
    // CHECK: %[[R:.*]] = memref.alloc() : memref<4x8xf32>
    // CHECK: mpi.recv(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : memref<32xf32>, i32, i32
    // LLVM: llvm.call @MPI_Recv
    %r = tra_comm.recv from 2 tag 5 : tensor<4x8xf32>
    // CHECK: mpi.allreduce(%{{.*}}, %{{.*}}, MPI_SUM, %{{.*}}) : memref<32xf32>, memref<32xf32>
    // LLVM: llvm.mlir.addressof @ompi_mpi_op_sum
    // LLVM: llvm.call @MPI_Allreduce
    %a = tra_comm.all_reduce sum %r ranks [0, 1, 2, 3] : tensor<4x8xf32>
    // CHECK: memref.copy
    // CHECK: call @tra_mpi_allreduce(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (!llvm.ptr, i64, i32, i32, !llvm.ptr, i32) -> ()
    %g = tra_comm.all_reduce max %a ranks [0, 2] : tensor<4x8xf32>
    // Slices along dimension 1 are not contiguous: they are packed first.
    // CHECK: memref.alloc() : memref<32xf32>
    // CHECK-COUNT-2: memref.copy
    // CHECK: call @tra_mpi_reduce_scatter
    %s = tra_comm.reduce_scatter sum %g dim 1 ranks [0, 1] sizes [4, 4] : tensor<4x8xf32> -> tensor<4x4xf32>
    return %r, %a, %g, %s : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x4xf32>
  }
}

// -----

// Non-blocking moves bufferize to the runtime for every element type (LLVM
// 22 cannot lower mpi.isend/irecv/wait); the request is the runtime's i64
// handle. %t is overwritten while it is being sent: since the send's wait
// reads it, the write goes to a copy instead.

module attributes {dlti.map = #dlti.map<"MPI:Implementation" = "OpenMPI">} {
  // CHECK-LABEL: func.func @nonblocking(
  // CHECK-SAME: %[[T:[^:]*]]: memref<4x8xf32
  // CHECK: call @tra_mpi_isend(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (!llvm.ptr, i64, i32, i32) -> i64
  // CHECK: memref.alloc() : memref<2x8xbf16>
  // CHECK: call @tra_mpi_irecv(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (!llvm.ptr, i64, i32, i32) -> i64
  // CHECK: %[[W:.*]] = memref.alloc() {{.*}}: memref<4x8xf32>
  // CHECK: memref.copy %[[T]], %[[W]]
  // CHECK: call @tra_mpi_wait(%{{.*}}) : (i64) -> ()
  // CHECK: call @tra_mpi_wait(%{{.*}}) : (i64) -> ()
  // CHECK: return %[[W]]
  // LLVM-LABEL: func.func @nonblocking(
  // LLVM-NOT: mpi.
  // LLVM: return
  // FOLD-LABEL: func.func @nonblocking(
  // FOLD: %[[S:.*]] = call @tra_mpi_isend
  // FOLD: %[[R:.*]] = call @tra_mpi_irecv
  // FOLD: call @tra_mpi_wait(%[[R]]) : (i64) -> ()
  // FOLD: call @tra_mpi_wait(%[[S]]) : (i64) -> ()
  // FOLD-NOT: unrealized_conversion_cast
  func.func @nonblocking(%t: tensor<4x8xf32>, %u: tensor<2x8xf32>) -> (tensor<4x8xf32>, tensor<2x8xbf16>)
      attributes {tra_comm.rank = 0 : i64, tra_comm.num_ranks = 2 : i64} {
    %s = tra_comm.isend %t to 1 tag 0 : tensor<4x8xf32>
    %b, %r = tra_comm.irecv from 1 tag 1 : tensor<2x8xbf16>
    %w = tensor.insert_slice %u into %t[0, 0] [2, 8] [1, 1] : tensor<2x8xf32> into tensor<4x8xf32>
    %x = tra_comm.wait %r, %b : tensor<2x8xbf16> -> tensor<2x8xbf16>
    tra_comm.wait %s, %t : tensor<4x8xf32>
    return %w, %x : tensor<4x8xf32>, tensor<2x8xbf16>
  }
}

// -----

// Tiles in GPU memory (tra_comm.device = "cuda"): every move is a call of
// runtime/cuda (NCCL on device pointers) with the MPI runtime's arguments,
// f32 and world-wide moves included; no mpi op. The rank lists and counts
// are host constants (LLVM globals, which tra-map-to-gpu leaves alone).

// CHECK: llvm.mlir.global private constant @tra_comm.array{{[0-9]+}}(dense<[0, 1]> : tensor<2xi32>)
module attributes {tra_comm.device = "cuda"} {
  // CHECK-LABEL: func.func @gpu_moves
  // CHECK-NOT: mpi.
  // CHECK: call @tra_cuda_send(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (!llvm.ptr, i64, i32, i32) -> ()
  // CHECK: call @tra_cuda_recv(
  // CHECK: %[[RANKS:.*]] = llvm.mlir.addressof @tra_comm.array{{[0-9]+}} : !llvm.ptr
  // CHECK: call @tra_cuda_allreduce(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[RANKS]], %{{.*}}) : (!llvm.ptr, i64, i32, i32, !llvm.ptr, i32) -> ()
  // CHECK: call @tra_cuda_reduce_scatter(
  // CHECK: call @tra_cuda_isend(
  // CHECK: call @tra_cuda_irecv(
  // CHECK: call @tra_cuda_wait(
  // CHECK: call @tra_cuda_wait(
  // CHECK-NOT: mpi.
  // CHECK: return
  // LLVM-LABEL: func.func @gpu_moves
  // LLVM-NOT: MPI_
  // LLVM: return
  func.func @gpu_moves(%t: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x4xf32>, tensor<4x8xf32>)
      attributes {tra_comm.rank = 0 : i64, tra_comm.num_ranks = 2 : i64} {
    tra_comm.send %t to 1 tag 3 : tensor<4x8xf32>
    %r = tra_comm.recv from 1 tag 5 : tensor<4x8xf32>
    %a = tra_comm.all_reduce sum %r ranks [0, 1] : tensor<4x8xf32>
    %s = tra_comm.reduce_scatter sum %a dim 1 ranks [0, 1] sizes [4, 4] : tensor<4x8xf32> -> tensor<4x4xf32>
    %q = tra_comm.isend %a to 1 tag 6 : tensor<4x8xf32>
    %b, %p = tra_comm.irecv from 1 tag 7 : tensor<4x8xf32>
    %x = tra_comm.wait %p, %b : tensor<4x8xf32> -> tensor<4x8xf32>
    tra_comm.wait %q, %a : tensor<4x8xf32>
    return %r, %a, %s, %x : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x4xf32>, tensor<4x8xf32>
  }
}

// -----

// Scalars (a loss, a gradient norm) are moved as one-element buffers: the
// expansion to memref<1xf32> states its shape (it once had none and failed
// to verify).
module attributes {dlti.map = #dlti.map<"MPI:Implementation" = "OpenMPI">} {
  // CHECK-LABEL: func.func @scalars
  func.func @scalars(%t: tensor<f32>) -> tensor<f32>
      attributes {tra_comm.rank = 0 : i64, tra_comm.num_ranks = 2 : i64} {
    // CHECK: %[[ONE:.*]] = memref.expand_shape %{{.*}} [] output_shape [1] : memref<f32> into memref<1xf32>
    // CHECK: mpi.send(%[[ONE]], %{{.*}}, %{{.*}}, %{{.*}}) : memref<1xf32>, i32, i32
    tra_comm.send %t to 1 tag 3 : tensor<f32>
    // CHECK: mpi.allreduce(%{{.*}}, %{{.*}}, MPI_SUM, %{{.*}}) : memref<1xf32>, memref<1xf32>
    // LLVM: llvm.call @MPI_Allreduce
    %a = tra_comm.all_reduce sum %t ranks [0, 1] : tensor<f32>
    return %a : tensor<f32>
  }
}

// -----

// A fetch: a fresh buffer, a copy of the tile (only the slice for a slice)
// into it, the bytes counted for the tier (1: host, 2: disk).
module {
  // CHECK-LABEL: func.func @fetch
  // CHECK-SAME: (%[[W:[^:]*]]: memref<8x8xf32
  func.func @fetch(%w: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<4x8xbf16>) {
    // CHECK: %[[B:.*]] = memref.alloc() : memref<8x8xf32>
    // CHECK-NEXT: memref.copy %[[W]], %[[B]] : memref<8x8xf32, {{.*}}> to memref<8x8xf32>
    // CHECK: call @tra_exec_tier_fetched(%{{.*}}, %{{.*}}) : (i64, i32) -> ()
    // FOLD-LABEL: func.func @fetch
    // FOLD: call @tra_exec_tier_fetched(%c256_i64, %c1_i32)
    %f = tra_comm.fetch %w from "host" : tensor<8x8xf32>
    %h = arith.constant dense<1.0> : tensor<8x8xbf16>
    %s = tensor.extract_slice %h[4, 0] [4, 8] [1, 1] : tensor<8x8xbf16> to tensor<4x8xbf16>
    // CHECK: memref.copy %{{.*}}, %{{.*}} : memref<4x8xbf16, strided<[8, 1], offset: 32>> to memref<4x8xbf16>
    // FOLD: call @tra_exec_tier_fetched(%c64_i64, %c2_i32)
    %d = tra_comm.fetch %s from "disk" : tensor<4x8xbf16>
    return %f, %d : tensor<8x8xf32>, tensor<4x8xbf16>
  }
}

// -----

// A non-blocking fetch: a fresh buffer that tra_exec_fetch_start fills
// from the tile (sizes, then the strides of the buffer and of the tile; a
// slice's strides are the argument's), the bytes counted when it starts;
// its wait is tra_exec_fetch_wait, in place on the buffer, which the
// reader then reads.
module {
  // CHECK-LABEL: func.func @ifetch
  // FOLD-LABEL: func.func @ifetch
  func.func @ifetch(%w: tensor<8x8xf32>, %x: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<4x2xf32>) {
    // CHECK: %[[B:.*]] = memref.alloc() : memref<8x8xf32>
    // CHECK: %[[H:.*]] = call @tra_exec_fetch_start(%{{.*}}) : (!llvm.ptr, !llvm.ptr, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64) -> i64
    // CHECK: call @tra_exec_tier_fetched(
    // FOLD: call @tra_exec_fetch_start(%{{.*}}, %{{.*}}, %c4_i64, %c2_i64, %c8_i64, %c8_i64, %c1_i64, %c1_i64, %c8_i64, %c1_i64, %c0_i64, %c0_i64, %{{.*}}, %{{.*}}, %c0_i64, %c0_i64)
    // FOLD: call @tra_exec_tier_fetched(%c256_i64, %c1_i32)
    %b, %r = tra_comm.ifetch %w from "host" : tensor<8x8xf32>
    %s = tensor.extract_slice %x[4, 2] [4, 2] [1, 1] : tensor<8x8xf32> to tensor<4x2xf32>
    // FOLD: call @tra_exec_fetch_start(%{{.*}}, %{{.*}}, %c4_i64, %c2_i64, %c4_i64, %c2_i64, %c1_i64, %c1_i64, %c2_i64, %c1_i64, %c0_i64, %c0_i64, %{{.*}}, %{{.*}}, %c0_i64, %c0_i64)
    // FOLD: call @tra_exec_tier_fetched(%c32_i64, %c2_i32)
    %sb, %sr = tra_comm.ifetch %s from "disk" : tensor<4x2xf32>
    // CHECK: %[[C:.*]] = builtin.unrealized_conversion_cast %{{.*}} : !tra_comm.request to i64
    // CHECK-NEXT: call @tra_exec_fetch_wait(%[[C]]) : (i64) -> ()
    %f = tra_comm.wait %r, %b : tensor<8x8xf32> -> tensor<8x8xf32>
    // CHECK: call @tra_exec_fetch_wait(
    %g = tra_comm.wait %sr, %sb : tensor<4x2xf32> -> tensor<4x2xf32>
    // CHECK-NOT: memref.copy
    // CHECK: return %[[B]], %{{.*}} : memref<8x8xf32>, memref<4x2xf32>
    return %f, %g : tensor<8x8xf32>, tensor<4x2xf32>
  }
}

// -----

// On a GPU the fetch is runtime/cuda's (a copy stream), with the same
// arguments.
module attributes {tra_comm.device = "cuda"} {
  // CHECK-LABEL: func.func @gpu_ifetch
  func.func @gpu_ifetch(%w: tensor<8x8xbf16>) -> tensor<8x8xbf16> {
    // CHECK: call @tra_cuda_fetch_start(
    // CHECK: call @tra_exec_tier_fetched(
    // CHECK: call @tra_cuda_fetch_wait(
    %b, %r = tra_comm.ifetch %w from "host" : tensor<8x8xbf16>
    %f = tra_comm.wait %r, %b : tensor<8x8xbf16> -> tensor<8x8xbf16>
    return %f : tensor<8x8xbf16>
  }
}
