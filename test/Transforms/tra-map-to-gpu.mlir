// RUN: tra-opt %s --tra-map-to-gpu -split-input-file | FileCheck %s
// RUN: tra-opt %s --tra-map-to-gpu --cse -split-input-file | FileCheck %s --check-prefix=STRIDED
// RUN: tra-opt %s --tra-map-to-gpu=block-size=128 -split-input-file | FileCheck %s --check-prefix=BLOCK

#id = affine_map<(d0, d1) -> (d0, d1)>

// One thread per output element: 32 iterations over blocks of 256 threads,
// the innermost dimension fastest; the op runs on its 1x1 tile.
// CHECK-LABEL: func.func @elementwise
// CHECK-SAME: (%[[X:.*]]: memref<4x8xf32>, %[[Y:.*]]: memref<4x8xf32>)
// CHECK: arith.ceildivui
// CHECK: %[[COLS:[0-9]+]] = arith.ceildivui
// CHECK: %[[TOTAL:[0-9]+]] = arith.muli %{{[0-9]+}}, %[[COLS]] : index
// CHECK: %[[C256:c256[_0-9]*]] = arith.constant 256 : index
// CHECK: %[[BLOCKS:[0-9]+]] = arith.ceildivui %[[TOTAL]], %[[C256]]
// CHECK: %[[T:[0-9]+]] = gpu.wait async
// CHECK: gpu.launch async [%[[T]]] blocks(%[[BX:[a-z0-9]+]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[BLOCKS]], {{.*}} threads(%[[TX:[a-z0-9]+]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[C256]],
// CHECK: %[[BASE:[0-9]+]] = arith.muli %[[BX]], %[[C256]]
// CHECK: %[[ID:[0-9]+]] = arith.addi %[[BASE]], %[[TX]]
// CHECK: %[[IN:[0-9]+]] = arith.cmpi ult, %[[ID]], %[[TOTAL]]
// CHECK: scf.if %[[IN]] {
// CHECK: arith.remui %[[ID]], %[[COLS]]
// CHECK: arith.divui %[[ID]], %[[COLS]]
// CHECK: %[[XS:.*]] = memref.subview %[[X]]{{.*}} [1, 1] [1, 1]
// CHECK: %[[YS:.*]] = memref.subview %[[Y]]{{.*}} [1, 1] [1, 1]
// CHECK: linalg.generic {{.*}} ins(%[[XS]] : {{.*}}) outs(%[[YS]] : {{.*}})
// CHECK: math.exp
// CHECK: gpu.terminator
// BLOCK-LABEL: func.func @elementwise
// BLOCK: threads({{.*}}) in (%{{.*}} = %c128,
func.func @elementwise(%x: memref<4x8xf32>, %y: memref<4x8xf32>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<4x8xf32>) outs(%y : memref<4x8xf32>) {
  ^bb0(%a: f32, %b: f32):
    %e = math.exp %a : f32
    linalg.yield %e : f32
  }
  return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// A row reduction: one thread per row, the reduction inside the kernel.
// Buffers are device memory; a contiguous copy is a runtime call.
// CHECK-LABEL: func.func @row_sum
// CHECK-SAME: (%[[X:.*]]: memref<4x8xf32>, %[[Y:.*]]: memref<4xf32>)
// CHECK: %[[T0:[0-9]+]] = gpu.wait async
// CHECK: %[[BUF:[a-z0-9_]+]], %{{.*}} = gpu.alloc async [%[[T0]]] () : memref<4xf32>
// CHECK: gpu.launch async
// CHECK: memref.subview %[[X]][%{{.*}}, 0] [1, 8] [1, 1]
// CHECK: memref.subview %[[BUF]][%{{.*}}] [1] [1]
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// CHECK: gpu.terminator
// CHECK: call @tra_cuda_memcpy(%{{.*}}, %{{.*}}, %{{.*}})
// CHECK: %[[T1:[0-9]+]] = gpu.wait async
// CHECK: gpu.dealloc async [%[[T1]]] %[[BUF]]
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.copy
// CHECK: return
func.func @row_sum(%x: memref<4x8xf32>, %y: memref<4xf32>) {
  %t = memref.alloc() : memref<4xf32>
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x8xf32>) outs(%t : memref<4xf32>) {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  }
  memref.copy %t, %y : memref<4xf32> to memref<4xf32>
  memref.dealloc %t : memref<4xf32>
  return
}

// -----

// No parallel dimension indexes the output: one thread runs the whole op.
// CHECK-LABEL: func.func @total
// CHECK: %[[C1:c1[_0-9]*]] = arith.constant 1 : index
// CHECK: gpu.launch async {{.*}} in (%{{.*}} = %[[C1]], %{{.*}} = %[[C1]], %{{.*}} = %[[C1]]) threads({{.*}}) in (%{{.*}} = %[[C1]], %{{.*}} = %[[C1]], %{{.*}} = %[[C1]])
// CHECK-NEXT: linalg.generic {{.*}}iterator_types = ["reduction"]
func.func @total(%x: memref<8xf32>, %y: memref<f32>) {
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]}
      ins(%x : memref<8xf32>) outs(%y : memref<f32>) {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// The host reads a position from device memory through a host buffer, then
// copies a row at it.
// CHECK-LABEL: func.func @position
// CHECK: %[[HOST:alloca[_0-9]*]] = memref.alloca() : memref<1xi64>
// CHECK: %[[BYTES:c8_i64[_0-9]*]] = arith.constant 8 : i64
// CHECK: call @tra_cuda_read(%{{.*}}, %{{.*}}, %[[BYTES]])
// CHECK: %[[P:[0-9]+]] = memref.load %[[HOST]]
// CHECK: %[[I:[0-9]+]] = arith.index_cast %[[P]]
// CHECK: memref.subview %{{.*}}[%[[I]], 0] [1, 4] [1, 1]
// CHECK: call @tra_cuda_memcpy
func.func @position(%pos: memref<i64>, %cache: memref<16x4xf32>, %row: memref<1x4xf32>) {
  %p = memref.load %pos[] : memref<i64>
  %i = arith.index_cast %p : i64 to index
  %dst = memref.subview %cache[%i, 0] [1, 4] [1, 1] : memref<16x4xf32> to memref<1x4xf32, strided<[4, 1], offset: ?>>
  memref.copy %row, %dst : memref<1x4xf32> to memref<1x4xf32, strided<[4, 1], offset: ?>>
  return
}

// -----

// A host constant gets a device copy for the rest of its block.
// CHECK-LABEL: func.func @constant
// CHECK: %[[G:[0-9]+]] = memref.get_global @table
// CHECK: %[[D:[a-z0-9_]+]], %{{.*}} = gpu.alloc async
// CHECK: memref.dim %[[G]]
// CHECK: call @tra_cuda_memcpy
// CHECK: memref.dim %[[D]]
// CHECK: call @tra_cuda_memcpy
// CHECK: gpu.dealloc async [%{{.*}}] %[[D]]
memref.global "private" constant @table : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>
func.func @constant(%y: memref<4xf32>) {
  %g = memref.get_global @table : memref<4xf32>
  memref.copy %g, %y : memref<4xf32> to memref<4xf32>
  return
}

// -----

// A copy between strided views with static strides goes to the copy
// engines: tra_cuda_copy_strided(dst, src, element bytes, rank, 4 sizes,
// 4 destination strides, 4 source strides), unused trailing dimensions
// padded with size 1 and stride 0. So does a linalg.copy on the host (what
// tra-expand-strided-copies makes of a strided memref.copy).
// STRIDED-LABEL: func.func @strided
// STRIDED-NOT: gpu.launch
// STRIDED-DAG: %[[ONE:.*]] = arith.constant 1 : i64
// STRIDED-DAG: %[[ZERO:.*]] = arith.constant 0 : i64
// STRIDED-DAG: %[[TWO:.*]] = arith.constant 2 : i64
// STRIDED-DAG: %[[FOUR:.*]] = arith.constant 4 : i64
// STRIDED-DAG: %[[EIGHT:.*]] = arith.constant 8 : i64
// STRIDED: call @tra_cuda_copy_strided(%{{.*}}, %{{.*}}, %[[FOUR]], %[[TWO]], %{{.*}}, %{{.*}}, %[[ONE]], %[[ONE]], %[[FOUR]], %[[ONE]], %[[ZERO]], %[[ZERO]], %[[EIGHT]], %[[TWO]], %[[ZERO]], %[[ZERO]])
// STRIDED: call @tra_cuda_copy_strided
// STRIDED-NOT: gpu.launch
// STRIDED: return
func.func @strided(%x: memref<8x8xf32>, %y: memref<8x4xf32>) {
  %s = memref.subview %x[0, 0] [8, 4] [1, 2] : memref<8x8xf32> to memref<8x4xf32, strided<[8, 2]>>
  memref.copy %s, %y : memref<8x4xf32, strided<[8, 2]>> to memref<8x4xf32>
  linalg.copy ins(%s : memref<8x4xf32, strided<[8, 2]>>) outs(%y : memref<8x4xf32>)
  return
}

// -----

// A copy the runtime cannot describe (dynamic strides) is a kernel.
// CHECK-LABEL: func.func @dynamic_strides
// CHECK-NOT: tra_cuda_copy_strided
// CHECK: gpu.launch
// CHECK: linalg.copy
func.func @dynamic_strides(%x: memref<8x4xf32, strided<[?, ?], offset: ?>>, %y: memref<8x4xf32>) {
  memref.copy %x, %y : memref<8x4xf32, strided<[?, ?], offset: ?>> to memref<8x4xf32>
  return
}

// -----

// A non-blocking fetch of a memory tier's tile into a device buffer is
// runtime/cuda's (a copy stream), with the same arguments; the host
// runtime's declarations go.
// CHECK-NOT: func.func private @tra_exec_fetch_start
// CHECK-NOT: func.func private @tra_exec_fetch_wait
// CHECK-LABEL: func.func @fetch
// CHECK: gpu.alloc
// CHECK: %[[H:.*]] = call @tra_cuda_fetch_start(
// CHECK: call @tra_cuda_fetch_wait(%[[H]])
func.func private @tra_exec_fetch_start(!llvm.ptr, !llvm.ptr, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64) -> i64
func.func private @tra_exec_fetch_wait(i64)
func.func @fetch(%src: !llvm.ptr) -> index {
  %one = arith.constant 1 : i64
  %zero = arith.constant 0 : i64
  %four = arith.constant 4 : i64
  %a = memref.alloc() : memref<4xf32>
  %ia = memref.extract_aligned_pointer_as_index %a : memref<4xf32> -> index
  %ja = arith.index_cast %ia : index to i64
  %pa = llvm.inttoptr %ja : i64 to !llvm.ptr
  %h = call @tra_exec_fetch_start(%pa, %src, %four, %one, %four, %one, %one, %one, %one, %zero, %zero, %zero, %one, %zero, %zero, %zero) : (!llvm.ptr, !llvm.ptr, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64) -> i64
  call @tra_exec_fetch_wait(%h) : (i64) -> ()
  return %ia : index
}
