// RUN: tra-opt %s --pass-pipeline='builtin.module(func.func(tra-alias-entry-outputs))' --split-input-file | FileCheck %s

// A KV cache update: the whole input cache is copied into the output, then
// the new rows are written. The copy runs only if the caller passed two
// buffers; output 0 may be the buffer of input 1.
// CHECK-LABEL: func.func @update_cache
// CHECK-SAME: (%[[X:.*]]: memref<2x4xf32>, %[[IN:.*]]: memref<16x4xf32>, %[[POS:.*]]: index, %[[OUT:.*]]: memref<16x4xf32>)
// CHECK-SAME: tra.output_aliases = array<i64: 1>
// CHECK: %[[P:.*]] = memref.extract_aligned_pointer_as_index %[[IN]]
// CHECK: %[[Q:.*]] = memref.extract_aligned_pointer_as_index %[[OUT]]
// CHECK: %[[NE:.*]] = arith.cmpi ne, %[[P]], %[[Q]] : index
// CHECK: scf.if %[[NE]] {
// CHECK-NEXT: memref.copy %[[IN]], %[[OUT]]
// CHECK-NEXT: }
// CHECK-NEXT: %[[ROWS:.*]] = memref.subview %[[OUT]]
// CHECK-NEXT: memref.copy %[[X]], %[[ROWS]]
func.func @update_cache(%x: memref<2x4xf32>, %cache: memref<16x4xf32>,
                        %pos: index, %out: memref<16x4xf32>)
    attributes {llvm.emit_c_interface, tra.entry_inputs = 3 : i64} {
  memref.copy %cache, %out : memref<16x4xf32> to memref<16x4xf32>
  %rows = memref.subview %out[%pos, 0] [2, 4] [1, 1]
      : memref<16x4xf32> to memref<2x4xf32, strided<[4, 1], offset: ?>>
  memref.copy %x, %rows
      : memref<2x4xf32> to memref<2x4xf32, strided<[4, 1], offset: ?>>
  return
}

// -----

// Two caches and an output computed from scratch: one entry per output.
// CHECK-LABEL: func.func @two_caches
// CHECK-SAME: tra.output_aliases = array<i64: -1, 2, 1>
// CHECK-COUNT-2: scf.if
func.func @two_caches(%x: memref<4xf32>, %k: memref<8x4xf32>,
                      %v: memref<8x4xf32>, %y: memref<4xf32>,
                      %kout: memref<8x4xf32>, %vout: memref<8x4xf32>)
    attributes {tra.entry_inputs = 3 : i64} {
  %c0 = arith.constant 0 : index
  %e = memref.load %x[%c0] : memref<4xf32>
  linalg.fill ins(%e : f32) outs(%y : memref<4xf32>)
  memref.copy %v, %kout : memref<8x4xf32> to memref<8x4xf32>
  memref.copy %k, %vout : memref<8x4xf32> to memref<8x4xf32>
  %a = memref.load %kout[%c0, %c0] : memref<8x4xf32>
  memref.store %a, %vout[%c0, %c0] : memref<8x4xf32>
  return
}

// -----

// The input is read after the copy too: once the output's writes went into
// a shared buffer, that read would see them.
// CHECK-LABEL: func.func @negative_input_read_again
// CHECK-NOT: tra.output_aliases
// CHECK-NOT: scf.if
// CHECK: memref.copy
func.func @negative_input_read_again(%in: memref<4xf32>, %out: memref<4xf32>,
                                     %sum: memref<f32>)
    attributes {tra.entry_inputs = 1 : i64} {
  memref.copy %in, %out : memref<4xf32> to memref<4xf32>
  %c0 = arith.constant 0 : index
  %a = memref.load %in[%c0] : memref<4xf32>
  memref.store %a, %sum[] : memref<f32>
  return
}

// -----

// The output is written before the copy (the copy then overwrites it; in a
// shared buffer, the write would clobber the input).
// CHECK-LABEL: func.func @negative_output_written_before
// CHECK-NOT: tra.output_aliases
// CHECK-NOT: scf.if
func.func @negative_output_written_before(%in: memref<4xf32>,
                                          %out: memref<4xf32>)
    attributes {tra.entry_inputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  memref.store %zero, %out[%c0] : memref<4xf32>
  memref.copy %in, %out : memref<4xf32> to memref<4xf32>
  return
}

// -----

// A view of the output taken before the copy counts as a use before it.
// CHECK-LABEL: func.func @negative_output_view_before
// CHECK-NOT: tra.output_aliases
// CHECK-NOT: scf.if
func.func @negative_output_view_before(%in: memref<4xf32>,
                                       %out: memref<4xf32>)
    attributes {tra.entry_inputs = 1 : i64} {
  %view = memref.subview %out[0] [2] [1]
      : memref<4xf32> to memref<2xf32, strided<[1]>>
  memref.copy %in, %out : memref<4xf32> to memref<4xf32>
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  memref.store %zero, %view[%c0] : memref<2xf32, strided<[1]>>
  return
}

// -----

// A copy that does not always run (not in the entry block).
// CHECK-LABEL: func.func @negative_nested_copy
// CHECK-NOT: tra.output_aliases
// CHECK: scf.if %{{.*}} {
// CHECK-NEXT: memref.copy
// CHECK-NEXT: }
// CHECK-NOT: scf.if
func.func @negative_nested_copy(%in: memref<4xf32>, %flag: i1,
                                %out: memref<4xf32>)
    attributes {tra.entry_inputs = 2 : i64} {
  scf.if %flag {
    memref.copy %in, %out : memref<4xf32> to memref<4xf32>
  }
  return
}

// -----

// One input copied into two outputs: sharing either buffer would let the
// first output's writes reach the second copy.
// CHECK-LABEL: func.func @negative_input_copied_twice
// CHECK-NOT: tra.output_aliases
// CHECK-NOT: scf.if
func.func @negative_input_copied_twice(%in: memref<4xf32>, %a: memref<4xf32>,
                                       %b: memref<4xf32>)
    attributes {tra.entry_inputs = 1 : i64} {
  memref.copy %in, %a : memref<4xf32> to memref<4xf32>
  memref.copy %in, %b : memref<4xf32> to memref<4xf32>
  return
}

// -----

// Two inputs copied into one output: only the first copy is the output's
// first use.
// CHECK-LABEL: func.func @second_copy_into_output
// CHECK-SAME: tra.output_aliases = array<i64: 0>
// CHECK: scf.if
// CHECK-NEXT: memref.copy %arg0, %arg2
// CHECK-NEXT: }
// CHECK-NEXT: memref.copy %arg1, %arg2
func.func @second_copy_into_output(%a: memref<4xf32>, %b: memref<4xf32>,
                                   %out: memref<4xf32>)
    attributes {tra.entry_inputs = 2 : i64} {
  memref.copy %a, %out : memref<4xf32> to memref<4xf32>
  memref.copy %b, %out : memref<4xf32> to memref<4xf32>
  return
}

// -----

// Copies that are not of an input into an output, or not of whole dense
// buffers of one type.
// CHECK-LABEL: func.func @negative_not_input_to_output
// CHECK-NOT: tra.output_aliases
// CHECK-NOT: scf.if
func.func @negative_not_input_to_output(
    %in: memref<4xf32>, %strided: memref<4xf32, strided<[2]>>,
    %out: memref<4xf32>, %out2: memref<4xf32>, %out3: memref<4xf32>)
    attributes {tra.entry_inputs = 2 : i64} {
  %tmp = memref.alloc() : memref<4xf32>
  memref.copy %tmp, %out : memref<4xf32> to memref<4xf32>
  memref.copy %strided, %out2 : memref<4xf32, strided<[2]>> to memref<4xf32>
  memref.copy %in, %tmp : memref<4xf32> to memref<4xf32>
  memref.copy %out, %out3 : memref<4xf32> to memref<4xf32>
  memref.dealloc %tmp : memref<4xf32>
  return
}

// -----

// Not an entry function (no tra.entry_inputs), or not yet bufferized.
// CHECK-LABEL: func.func @negative_not_entry
// CHECK-NOT: scf.if
// CHECK-LABEL: func.func @negative_tensors
// CHECK-NOT: tra.output_aliases
func.func @negative_not_entry(%in: memref<4xf32>, %out: memref<4xf32>) {
  memref.copy %in, %out : memref<4xf32> to memref<4xf32>
  return
}
func.func @negative_tensors(%in: tensor<4xf32>) -> tensor<4xf32>
    attributes {tra.entry_inputs = 1 : i64} {
  return %in : tensor<4xf32>
}
