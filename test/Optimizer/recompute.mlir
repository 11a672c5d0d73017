// Recomputing activations instead of keeping them (Recompute.h): a
// two-layer forward and backward whose activations a1 and a2 are read
// again after a long stretch. Keeping them needs 2.00 MiB on one device;
// with 1.81 MiB the planner recomputes both where the backward pass reads
// them (1.75 MiB), marks the copies and shows them in EXPLAIN; the program
// still computes the float64 reference's values.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/recompute_check.py hardware %t/tight.json 1900000
// RUN: %python %S/Inputs/recompute_check.py hardware %t/small.json 1700000
// RUN: tra-compile %s --hw %t/tight.json --explain -o %t/plan.mlir | FileCheck %s
// CHECK: tra.einsum "be->be" relu (recomputed)
// CHECK-NEXT: tra.einsum "be,bd->de" mul
// CHECK: tra.einsum "be->be" relu (recomputed)
// CHECK-NEXT: tra.einsum "be,bd->de" mul
// CHECK: TOTAL
// CHECK: recomputed: 2 elementwise operations run again where the backward pass reads their results instead of keeping them
// CHECK: device 0   cpu: 512.00 KiB + 1.25 MiB = 1.75 MiB / 1.81 MiB
// RUN: FileCheck %s --check-prefix=IR < %t/plan.mlir
// IR-COUNT-2: tra.einsum "be->be" relu {{.*}}tra.recomputed
// IR-NOT: tra.recomputed
//
// The program compiled for the one device recomputes them too (the copies
// stay apart from the originals through lowering: CSE would merge them),
// and equals the float64 reference.
// RUN: tra-compile %s --hw %t/tight.json --emit=mlir --stage=linalg -o - | FileCheck %s --check-prefix=LINALG
// LINALG-COUNT-2: linalg.generic {{.*}}tra.recomputed
// LINALG-NOT: tra.recomputed
// RUN: tra-compile %s --hw %t/tight.json -o %t/step
// RUN: %python %S/Inputs/recompute_check.py inputs %t
// RUN: %t/step --input x=%t/x.npy --input w=%t/w.npy --output dw2=%t/dw2.npy --output dw1=%t/dw1.npy --output d1=%t/d1.npy
// RUN: %python %S/Inputs/recompute_check.py check %t
//
// With the memory to keep them, nothing is recomputed.
// RUN: tra-compile %s --hw %tra_src/hw/cpu-1node.json --explain -o %t/roomy.mlir | FileCheck %s --check-prefix=ROOMY
// ROOMY-NOT: recomputed
// ROOMY: device 0   cpu: 512.00 KiB + 1.50 MiB = 2.00 MiB
//
// Too little even with recomputing: the error says what recomputing left;
// with recompute=false, what keeping everything needs.
// RUN: not tra-compile %s --hw %t/small.json --emit=plan -o %t/never.mlir 2>&1 | FileCheck %s --check-prefix=SMALL
// SMALL: error: @step needs at least 1835008 bytes (1.75 MiB) of memory (512.00 KiB of arguments and weights, 1.25 MiB of activations) but tight has 1700000 bytes (1.62 MiB) in 1 device, with 2 elementwise activations recomputed instead of kept
// RUN: not tra-opt %s --tra-assign-partitions="hw=%t/tight.json recompute=false" 2>&1 | FileCheck %s --check-prefix=KEEP
// KEEP: error: {{.*}}@step needs at least 2097152 bytes (2.00 MiB) of memory (512.00 KiB of arguments and weights, 1.50 MiB of activations) but tight has 1900000 bytes
// KEEP-NOT: recomputed instead of kept
// RUN: not test -e %t/never.mlir

func.func @step(%x: tensor<256x256xf32> {tra.name = "x"}, %w: tensor<256x256xf32> {tra.name = "w"})
    -> (tensor<256x256xf32> {tra.name = "dw2"}, tensor<256x256xf32> {tra.name = "dw1"}, tensor<256x256xf32> {tra.name = "d1"}) {
  // Forward: two layers, each keeping its activation for the backward pass.
  %h1 = tra.einsum "bd,de->be" mul (%x, %w) : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
  %a1 = tra.einsum "be->be" relu (%h1) : (tensor<256x256xf32>) -> tensor<256x256xf32>
  %y1 = tra.einsum "be,de->bd" mul (%a1, %w) : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
  %h2 = tra.einsum "bd,de->be" mul (%y1, %w) : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
  %a2 = tra.einsum "be->be" relu (%h2) : (tensor<256x256xf32>) -> tensor<256x256xf32>
  %y2 = tra.einsum "be,de->bd" mul (%a2, %w) : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
  // A long stretch in which a1 and a2 are not read.
  %z0 = tra.einsum "bd->bd" tanh (%y2) : (tensor<256x256xf32>) -> tensor<256x256xf32>
  %z1 = tra.einsum "bd->bd" tanh (%z0) : (tensor<256x256xf32>) -> tensor<256x256xf32>
  %z2 = tra.einsum "bd->bd" tanh (%z1) : (tensor<256x256xf32>) -> tensor<256x256xf32>
  %z3 = tra.einsum "bd->bd" tanh (%z2) : (tensor<256x256xf32>) -> tensor<256x256xf32>
  %z4 = tra.einsum "bd->bd" tanh (%z3) : (tensor<256x256xf32>) -> tensor<256x256xf32>
  %z5 = tra.einsum "bd->bd" tanh (%z4) : (tensor<256x256xf32>) -> tensor<256x256xf32>
  %z6 = tra.einsum "bd->bd" tanh (%z5) : (tensor<256x256xf32>) -> tensor<256x256xf32>
  %z7 = tra.einsum "bd->bd" tanh (%z6) : (tensor<256x256xf32>) -> tensor<256x256xf32>
  %z8 = tra.einsum "bd->bd" tanh (%z7) : (tensor<256x256xf32>) -> tensor<256x256xf32>
  %z9 = tra.einsum "bd->bd" tanh (%z8) : (tensor<256x256xf32>) -> tensor<256x256xf32>
  %z10 = tra.einsum "bd->bd" tanh (%z9) : (tensor<256x256xf32>) -> tensor<256x256xf32>
  %z11 = tra.einsum "bd->bd" tanh (%z10) : (tensor<256x256xf32>) -> tensor<256x256xf32>
  %z12 = tra.einsum "bd->bd" tanh (%z11) : (tensor<256x256xf32>) -> tensor<256x256xf32>
  %z13 = tra.einsum "bd->bd" tanh (%z12) : (tensor<256x256xf32>) -> tensor<256x256xf32>
  %z14 = tra.einsum "bd->bd" tanh (%z13) : (tensor<256x256xf32>) -> tensor<256x256xf32>
  %z15 = tra.einsum "bd->bd" tanh (%z14) : (tensor<256x256xf32>) -> tensor<256x256xf32>
  // Backward: a2 and a1 are read again, h2 and h1 after them.
  %dw2 = tra.einsum "be,bd->de" mul (%a2, %z15) : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
  %d2 = tra.einsum "bd,bd->bd" mul (%z15, %h2) : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
  %dw1 = tra.einsum "be,bd->de" mul (%a1, %d2) : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
  %d1 = tra.einsum "bd,bd->bd" mul (%d2, %h1) : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
  return %dw2, %dw1, %d1 : tensor<256x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>
}
