// RUN: tra-opt %s --split-input-file --tra-promote-accumulators | FileCheck %s

// A row sum: the output element is loaded once, carried, stored once, and
// the add may be reassociated (so that LLVM vectorizes the reduction).
// CHECK-LABEL: func.func @row_sum
// CHECK-SAME: (%[[IN:.*]]: memref<4x256xf32>, %[[OUT:.*]]: memref<4xf32>)
// CHECK: scf.for %[[S:.*]] =
// CHECK:   %[[INIT:.*]] = memref.load %[[OUT]][%[[S]]]
// CHECK:   %[[R:.*]] = scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %[[INIT]]) -> (f32)
// CHECK-NOT: memref.load %[[OUT]]
// CHECK:     %[[X:.*]] = memref.load %[[IN]]
// CHECK:     %[[SUM:.*]] = arith.addf %[[ACC]], %[[X]] fastmath<reassoc> : f32
// CHECK-NOT: memref.store
// CHECK:     scf.yield %[[SUM]] : f32
// CHECK:   memref.store %[[R]], %[[OUT]][%[[S]]]
func.func @row_sum(%in: memref<4x256xf32>, %out: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c256 = arith.constant 256 : index
  scf.for %s = %c0 to %c4 step %c1 {
    scf.for %t = %c0 to %c256 step %c1 {
      %acc = memref.load %out[%s] : memref<4xf32>
      %x = memref.load %in[%s, %t] : memref<4x256xf32>
      %sum = arith.addf %acc, %x : f32
      memref.store %sum, %out[%s] : memref<4xf32>
    }
  }
  return
}

// -----

// A row maximum keeps its maximumf as it is (no flag needed); existing
// fast-math flags of a product are kept and reassoc added.
// CHECK-LABEL: func.func @max_and_product
// CHECK: iter_args
// CHECK:   arith.maximumf %{{.*}}, %{{.*}} : f32
// CHECK: iter_args
// CHECK:   arith.mulf %{{.*}}, %{{.*}} fastmath<reassoc,contract> : f32
func.func @max_and_product(%in: memref<256xf32>, %max: memref<f32>, %prod: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  scf.for %t = %c0 to %c256 step %c1 {
    %x = memref.load %in[%t] : memref<256xf32>
    %acc = memref.load %max[] : memref<f32>
    %m = arith.maximumf %acc, %x : f32
    memref.store %m, %max[] : memref<f32>
  }
  scf.for %t = %c0 to %c256 step %c1 {
    %x = memref.load %in[%t] : memref<256xf32>
    %acc = memref.load %prod[] : memref<f32>
    %p = arith.mulf %acc, %x fastmath<contract> : f32
    memref.store %p, %prod[] : memref<f32>
  }
  return
}

// -----

// The accumulator is used twice: promoted, but the add is not reassociated
// (the loop's result is not a plain sum).
// CHECK-LABEL: func.func @two_uses
// CHECK: iter_args
// CHECK: arith.mulf
// CHECK: arith.addf %{{.*}}, %{{.*}} : f32
func.func @two_uses(%in: memref<256xf32>, %out: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  scf.for %t = %c0 to %c256 step %c1 {
    %x = memref.load %in[%t] : memref<256xf32>
    %acc = memref.load %out[] : memref<f32>
    %sq = arith.mulf %acc, %acc : f32
    %sum = arith.addf %sq, %x : f32
    memref.store %sum, %out[] : memref<f32>
  }
  return
}

// -----

// Stores at indices that change with the loop (a copy) stay.
// CHECK-LABEL: func.func @negative_copy
// CHECK-NOT: iter_args
// CHECK: memref.store
func.func @negative_copy(%in: memref<256xf32>, %out: memref<256xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  scf.for %t = %c0 to %c256 step %c1 {
    %x = memref.load %in[%t] : memref<256xf32>
    memref.store %x, %out[%t] : memref<256xf32>
  }
  return
}

// -----

// The loop also reads another element of the output buffer (through a
// view of it): keeping the element in a register could change what that
// read sees, so nothing is promoted.
// CHECK-LABEL: func.func @negative_aliasing_read
// CHECK-NOT: iter_args
func.func @negative_aliasing_read(%out: memref<256xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %view = memref.subview %out[0] [256] [1] : memref<256xf32> to memref<256xf32, strided<[1]>>
  scf.for %t = %c0 to %c256 step %c1 {
    %x = memref.load %view[%t] : memref<256xf32, strided<[1]>>
    %acc = memref.load %out[%c0] : memref<256xf32>
    %sum = arith.addf %acc, %x : f32
    memref.store %sum, %out[%c0] : memref<256xf32>
  }
  return
}

// -----

// A call in the body may touch any memory: the loop stays as it is.
// CHECK-LABEL: func.func @negative_call
// CHECK-NOT: iter_args
func.func private @touch(memref<f32>)
func.func @negative_call(%in: memref<256xf32>, %out: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  scf.for %t = %c0 to %c256 step %c1 {
    %x = memref.load %in[%t] : memref<256xf32>
    %acc = memref.load %out[] : memref<f32>
    %sum = arith.addf %acc, %x : f32
    memref.store %sum, %out[] : memref<f32>
    func.call @touch(%out) : (memref<f32>) -> ()
  }
  return
}

// -----

// The element is read after it is stored in the same iteration: not the
// load-combine-store pattern, left alone.
// CHECK-LABEL: func.func @negative_load_after_store
// CHECK-NOT: iter_args
func.func @negative_load_after_store(%in: memref<256xf32>, %out: memref<f32>, %copy: memref<256xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  scf.for %t = %c0 to %c256 step %c1 {
    %x = memref.load %in[%t] : memref<256xf32>
    memref.store %x, %out[] : memref<f32>
    %y = memref.load %out[] : memref<f32>
    memref.store %y, %copy[%t] : memref<256xf32>
  }
  return
}
