// RUN: tra-opt %s --tra-early-dealloc --split-input-file | FileCheck %s

// The dealloc moves to right after the last use of the buffer.
// CHECK-LABEL: func.func @after_last_use
// CHECK: %[[A:.*]] = memref.alloc
// CHECK-NEXT: linalg.fill {{.*}} outs(%[[A]]
// CHECK-NEXT: linalg.copy ins(%[[A]] {{.*}} outs(%arg0
// CHECK-NEXT: memref.dealloc %[[A]]
// CHECK-NEXT: linalg.fill {{.*}} outs(%arg1
// CHECK-NEXT: return
func.func @after_last_use(%out: memref<4xf32>, %other: memref<4xf32>) {
  %c = arith.constant 1.0 : f32
  %a = memref.alloc() : memref<4xf32>
  linalg.fill ins(%c : f32) outs(%a : memref<4xf32>)
  linalg.copy ins(%a : memref<4xf32>) outs(%out : memref<4xf32>)
  linalg.fill ins(%c : f32) outs(%other : memref<4xf32>)
  memref.dealloc %a : memref<4xf32>
  return
}

// -----

// A view of the buffer used later keeps the buffer alive until then.
// CHECK-LABEL: func.func @alias_use
// CHECK: %[[A:.*]] = memref.alloc
// CHECK: %[[V:.*]] = memref.expand_shape %[[A]]
// CHECK: linalg.fill {{.*}} outs(%arg1
// CHECK-NEXT: linalg.copy ins(%[[V]] {{.*}} outs(%arg0
// CHECK-NEXT: memref.dealloc %[[A]]
// CHECK-NEXT: return
func.func @alias_use(%out: memref<2x2xf32>, %other: memref<4xf32>) {
  %c = arith.constant 1.0 : f32
  %a = memref.alloc() : memref<4xf32>
  linalg.fill ins(%c : f32) outs(%a : memref<4xf32>)
  %v = memref.expand_shape %a [[0, 1]] output_shape [2, 2] : memref<4xf32> into memref<2x2xf32>
  linalg.fill ins(%c : f32) outs(%other : memref<4xf32>)
  linalg.copy ins(%v : memref<2x2xf32>) outs(%out : memref<2x2xf32>)
  memref.dealloc %a : memref<4xf32>
  return
}

// -----

// Uses inside a loop count as uses by the loop.
// CHECK-LABEL: func.func @loop_use
// CHECK: %[[A:.*]] = memref.alloc
// CHECK: scf.for
// CHECK: linalg.copy ins(%[[A]]
// CHECK: }
// CHECK-NEXT: memref.dealloc %[[A]]
// CHECK-NEXT: linalg.fill {{.*}} outs(%arg1
func.func @loop_use(%out: memref<4xf32>, %other: memref<4xf32>, %n: index) {
  %c = arith.constant 1.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = memref.alloc() : memref<4xf32>
  linalg.fill ins(%c : f32) outs(%a : memref<4xf32>)
  scf.for %i = %c0 to %n step %c1 {
    linalg.copy ins(%a : memref<4xf32>) outs(%out : memref<4xf32>)
  }
  linalg.fill ins(%c : f32) outs(%other : memref<4xf32>)
  memref.dealloc %a : memref<4xf32>
  return
}

// -----

// A buffer passed to a call (which may keep reading it, as a non-blocking
// send does) or whose pointer is taken keeps its dealloc in place.
// CHECK-LABEL: func.func @escapes
// CHECK: call @send
// CHECK: memref.extract_aligned_pointer_as_index
// CHECK: linalg.fill {{.*}} outs(%arg0
// CHECK-NEXT: memref.dealloc
// CHECK-NEXT: memref.dealloc
// CHECK-NEXT: return
func.func private @send(memref<4xf32>)
func.func @escapes(%other: memref<4xf32>) -> index {
  %c = arith.constant 1.0 : f32
  %a = memref.alloc() : memref<4xf32>
  %b = memref.alloc() : memref<4xf32>
  linalg.fill ins(%c : f32) outs(%a : memref<4xf32>)
  call @send(%a) : (memref<4xf32>) -> ()
  %p = memref.extract_aligned_pointer_as_index %b : memref<4xf32> -> index
  linalg.fill ins(%c : f32) outs(%other : memref<4xf32>)
  memref.dealloc %a : memref<4xf32>
  memref.dealloc %b : memref<4xf32>
  return %p : index
}

// -----

// A dealloc in another block than its alloc is left alone.
// CHECK-LABEL: func.func @other_block
// CHECK: scf.if
// CHECK-NEXT: linalg.fill
// CHECK-NEXT: memref.dealloc
func.func @other_block(%out: memref<4xf32>, %cond: i1) {
  %c = arith.constant 1.0 : f32
  %a = memref.alloc() : memref<4xf32>
  linalg.copy ins(%a : memref<4xf32>) outs(%out : memref<4xf32>)
  scf.if %cond {
    linalg.fill ins(%c : f32) outs(%out : memref<4xf32>)
    memref.dealloc %a : memref<4xf32>
  }
  return
}

// -----

// A buffer a non-blocking fetch fills (its address passed to the runtime's
// fetch start) is written until the wait of the fetch's handle: freed after
// its last use following the wait, never before the wait. A pointer that
// also goes elsewhere keeps the dealloc in place.
// CHECK-LABEL: func.func @fetched
// CHECK: %[[H:.*]] = call @tra_exec_fetch_start(
// CHECK: call @tra_exec_fetch_wait(%[[H]])
// CHECK-NEXT: linalg.copy ins(%[[A:[^ ]*]] : memref<4xf32>)
// CHECK-NEXT: memref.dealloc %[[A]]
// CHECK-NEXT: linalg.fill
// CHECK: %[[G:.*]] = call @tra_cuda_fetch_start(
// CHECK-NEXT: linalg.fill
// CHECK-NEXT: call @tra_cuda_fetch_wait(%[[G]])
// CHECK-NEXT: memref.dealloc
// CHECK: call @keep(
// CHECK-NEXT: memref.dealloc
// CHECK-NEXT: return
func.func private @tra_exec_fetch_start(!llvm.ptr, !llvm.ptr, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64) -> i64
func.func private @tra_exec_fetch_wait(i64)
func.func private @tra_cuda_fetch_start(!llvm.ptr, !llvm.ptr, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64) -> i64
func.func private @tra_cuda_fetch_wait(i64)
func.func private @keep(!llvm.ptr)
func.func @fetched(%src: !llvm.ptr, %out: memref<4xf32>) {
  %c = arith.constant 1.0 : f32
  %one = arith.constant 1 : i64
  %zero = arith.constant 0 : i64
  %four = arith.constant 4 : i64
  %a = memref.alloc() : memref<4xf32>
  %ia = memref.extract_aligned_pointer_as_index %a : memref<4xf32> -> index
  %ja = arith.index_cast %ia : index to i64
  %pa = llvm.inttoptr %ja : i64 to !llvm.ptr
  %h = call @tra_exec_fetch_start(%pa, %src, %four, %one, %four, %one, %one, %one, %one, %zero, %zero, %zero, %one, %zero, %zero, %zero) : (!llvm.ptr, !llvm.ptr, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64) -> i64
  linalg.fill ins(%c : f32) outs(%out : memref<4xf32>)
  call @tra_exec_fetch_wait(%h) : (i64) -> ()
  linalg.copy ins(%a : memref<4xf32>) outs(%out : memref<4xf32>)
  linalg.fill ins(%c : f32) outs(%out : memref<4xf32>)
  // Never read after the fetch: freed right after the wait.
  %b = memref.alloc() : memref<4xf32>
  %ib = memref.extract_aligned_pointer_as_index %b : memref<4xf32> -> index
  %jb = arith.index_cast %ib : index to i64
  %pb = llvm.inttoptr %jb : i64 to !llvm.ptr
  %g = call @tra_cuda_fetch_start(%pb, %src, %four, %one, %four, %one, %one, %one, %one, %zero, %zero, %zero, %one, %zero, %zero, %zero) : (!llvm.ptr, !llvm.ptr, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64) -> i64
  linalg.fill ins(%c : f32) outs(%out : memref<4xf32>)
  call @tra_cuda_fetch_wait(%g) : (i64) -> ()
  // Its address also goes to another call: left in place.
  %d = memref.alloc() : memref<4xf32>
  %id = memref.extract_aligned_pointer_as_index %d : memref<4xf32> -> index
  %jd = arith.index_cast %id : index to i64
  %pd = llvm.inttoptr %jd : i64 to !llvm.ptr
  %k = call @tra_exec_fetch_start(%pd, %src, %four, %one, %four, %one, %one, %one, %one, %zero, %zero, %zero, %one, %zero, %zero, %zero) : (!llvm.ptr, !llvm.ptr, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64) -> i64
  call @tra_exec_fetch_wait(%k) : (i64) -> ()
  call @keep(%pd) : (!llvm.ptr) -> ()
  memref.dealloc %a : memref<4xf32>
  memref.dealloc %b : memref<4xf32>
  memref.dealloc %d : memref<4xf32>
  return
}
