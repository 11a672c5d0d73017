// tra-compile --emit=mlir prints the module after each lowering stage, or
// after the one --stage names.
// RUN: tra-compile %s --hw %tra_src/hw/cpu-1node.json --emit=mlir --parallel-min-work=32768 | FileCheck %s
// CHECK: // ----- stage linalg -----
// CHECK: func.func @main(%{{.*}}: tensor<64x512xf32>
// CHECK: linalg.generic
// CHECK: // ----- stage bufferized -----
// CHECK: func.func @main(%{{.*}}: memref<64x512xf32>
// CHECK: linalg.generic
// CHECK: // ----- stage llvm -----
// CHECK: llvm.func @main(
// CHECK: omp.parallel
// CHECK-NOT: math.exp
// CHECK: llvm.func @_mlir_ciface_main(

// RUN: tra-compile %s --hw %tra_src/hw/cpu-1node.json --emit=mlir --stage=bufferized -o %t
// RUN: FileCheck %s --check-prefix=BUF < %t
// BUF-NOT: // ----- stage
// BUF: func.func @main(%{{.*}}: memref<64x512xf32>{{.*}}, %{{.*}}: memref<64x512xf32>{{.*}})
// BUF: linalg.generic
// BUF-NOT: llvm.func

// RUN: tra-compile %s --hw %tra_src/hw/cpu-1node.json --emit=mlir --stage=linalg \
// RUN:   | tra-opt | FileCheck %s --check-prefix=LINALG
// LINALG: linalg.generic
// LINALG-NOT: memref

// One device only, for now.
// RUN: not tra-compile %s --hw %tra_src/hw/cpu-8nodes.json --emit=mlir 2>&1 | FileCheck %s --check-prefix=MULTI
// MULTI: tra-compile: error: {{.*}}one-device

func.func @main(%x: tensor<64x512xf32> {tra.name = "x"}) -> (tensor<64x512xf32> {tra.name = "y"}) {
  %y = tra.map "ij->ij" (%x) : (tensor<64x512xf32>) -> tensor<64x512xf32> {
  ^bb0(%v: f32):
    %r = math.exp %v : f32
    tra.yield %r : f32
  }
  return %y : tensor<64x512xf32>
}
