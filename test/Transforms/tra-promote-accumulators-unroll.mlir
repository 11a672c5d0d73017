// RUN: tra-opt %s --split-input-file --tra-promote-accumulators=disable-unroll=1 | FileCheck %s
// RUN: tra-opt %s --split-input-file --tra-promote-accumulators | FileCheck %s --check-prefix=DEFAULT

// DEFAULT-NOT: loop_annotation

// A row maximum over 64 keys per row: the promoted inner loop must not be
// unrolled (LLVM would unroll it fully and vectorize the row loop with
// gathers), the row loop stays as it is.
// CHECK: #[[$UNROLL:.*]] = #llvm.loop_unroll<disable = true>
// CHECK: #[[$ANNOTATION:.*]] = #llvm.loop_annotation<unroll = #[[$UNROLL]]>
// CHECK-LABEL: func.func @row_max
// CHECK: scf.for %[[S:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:   scf.for {{.*}} iter_args
// CHECK:     arith.maximumf
// CHECK:   } {llvm.loop_annotation = #[[$ANNOTATION]]}
// CHECK:   memref.store
// CHECK-NEXT: }
// CHECK-NEXT: return
func.func @row_max(%in: memref<128x64xf32>, %out: memref<128xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  scf.for %s = %c0 to %c128 step %c1 {
    scf.for %t = %c0 to %c64 step %c1 {
      %acc = memref.load %out[%s] : memref<128xf32>
      %x = memref.load %in[%s, %t] : memref<128x64xf32>
      %m = arith.maximumf %acc, %x : f32
      memref.store %m, %out[%s] : memref<128xf32>
    }
  }
  return
}

// -----

// A reduction of an unknown length is annotated too; one of 8 iterations
// (shorter than a vector) is left to LLVM's unroller.
// CHECK-LABEL: func.func @dynamic_and_short
// CHECK: scf.for {{.*}} iter_args
// CHECK: } {llvm.loop_annotation =
// CHECK: scf.for {{.*}} iter_args
// CHECK-NOT: llvm.loop_annotation
// CHECK: return
func.func @dynamic_and_short(%in: memref<?xf32>, %n: index, %short: memref<8xf32>, %out: memref<2xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.for %t = %c0 to %n step %c1 {
    %acc = memref.load %out[%c0] : memref<2xf32>
    %x = memref.load %in[%t] : memref<?xf32>
    %sum = arith.addf %acc, %x : f32
    memref.store %sum, %out[%c0] : memref<2xf32>
  }
  scf.for %t = %c0 to %c8 step %c1 {
    %acc = memref.load %out[%c1] : memref<2xf32>
    %x = memref.load %short[%t] : memref<8xf32>
    %sum = arith.addf %acc, %x : f32
    memref.store %sum, %out[%c1] : memref<2xf32>
  }
  return
}
