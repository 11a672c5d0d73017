// Threads in the pipeline: the large map's rows become an OpenMP
// worksharing loop around a sequential (vectorizable) column loop; the small
// map stays a serial loop nest outside any parallel region.
// RUN: tra-opt %s --tra-lower-to-llvm="parallel=true parallel-min-work=32768 profile=false" \
// RUN:   | FileCheck %s --implicit-check-not=" scf." --implicit-check-not=memref.
// CHECK-LABEL: llvm.func @main(
// CHECK: omp.parallel {
// CHECK-NEXT: omp.wsloop {
// CHECK-NEXT: omp.loop_nest (%[[I:.*]]) : i64 = (%{{.*}}) to (%{{.*}}) step (%{{.*}}) {
// CHECK: llvm.cond_br
// CHECK: llvm.mul %[[I]]
// CHECK: llvm.fadd
// CHECK: llvm.store
// CHECK: omp.yield
// CHECK: omp.terminator
// CHECK-NOT: omp.
// CHECK: llvm.intr.sqrt
// CHECK-NOT: omp.
// CHECK-LABEL: llvm.func @_mlir_ciface_main(

// Without threads, or with a higher threshold, no OpenMP at all; with a
// lower threshold, both maps are parallel.
// RUN: tra-opt %s --tra-lower-to-llvm="parallel=false" | FileCheck %s --check-prefix=SERIAL
// RUN: tra-opt %s --tra-lower-to-llvm="parallel=true parallel-min-work=10000000" | FileCheck %s --check-prefix=SERIAL
// SERIAL-NOT: omp.
// SERIAL-LABEL: llvm.func @_mlir_ciface_main(
// RUN: tra-opt %s --tra-lower-to-llvm="parallel=true parallel-min-work=64" | FileCheck %s --check-prefix=ALL
// ALL-COUNT-2: omp.parallel
// ALL-NOT: omp.parallel

func.func @main(%x: tensor<256x2048xf32> {tra.name = "x"}, %b: tensor<2048xf32> {tra.name = "b"},
                %s: tensor<8x8xf32> {tra.name = "s"})
    -> (tensor<256x2048xf32> {tra.name = "y"}, tensor<8x8xf32> {tra.name = "e"}) {
  %y = tra.map "bo,o->bo" (%x, %b) : (tensor<256x2048xf32>, tensor<2048xf32>) -> tensor<256x2048xf32> {
  ^bb0(%v: f32, %c: f32):
    %zero = arith.constant 0.0 : f32
    %t = arith.addf %v, %c : f32
    %r = arith.maximumf %t, %zero : f32
    tra.yield %r : f32
  }
  %e = tra.map "ij->ij" (%s) : (tensor<8x8xf32>) -> tensor<8x8xf32> {
  ^bb0(%v: f32):
    %r = math.sqrt %v : f32
    tra.yield %r : f32
  }
  return %y, %e : tensor<256x2048xf32>, tensor<8x8xf32>
}
