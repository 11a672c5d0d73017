// REQUIRES: mpi
// Pipeline stages (issue 17): two nodes of two 1.5 MiB devices joined by a
// slow network (0.5 GB/s), an MLP of four 1 MiB weights. One node cannot
// hold the weights, so a flat plan splits layers over all four devices and
// pays the network in every layer; cut into two stages, each node holds two
// layers and only one activation crosses the network. The planner tries
// both and keeps the faster; EXPLAIN shows the stages and `@2` (the first
// device of the stage) in the split column.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/pipeline_check.py hardware %t/hw.json 2 2 1600000 5e8
// RUN: tra-compile %s --hw %t/hw.json --emit=plan --explain -o %t/plan.mlir | FileCheck %s
// CHECK:      pipeline: 2 stages: 4 operations on 0,1; 3 operations on 2,3
// CHECK:      w0  argument 512x512xf32 - [1, 2] on 0,1
// CHECK:      w2  argument 512x512xf32 - [1, 2] on 2,3
// CHECK:      tra.einsum "bd,de->be" mul 64x512xf32 e=2 [1, 2] on 0,1
// CHECK:      tra.einsum "bd,de->be" mul 64x512xf32 e=2 @2 [1, 2] on 2,3
// CHECK:      estimated step time: 741.6 us
// CHECK-NEXT: bytes moved: {{.*}} inter-node 131072 B (128.00 KiB)
// RUN: FileCheck %s --check-prefix=IR < %t/plan.mlir
// IR: tra_plan.split = #tra_plan.split<e = 2, first_device = 2>
//
// Without stages (`pipeline=false`), the plan splits over all four devices
// and is slower, moving three times the bytes over the network.
// RUN: tra-opt %s --tra-decompose="hw=%t/hw.json pipeline=false" -o %t/flat.mlir
// RUN: tra-compile %t/flat.mlir --hw %t/hw.json --emit=plan --explain | FileCheck %s --check-prefix=FLAT
// FLAT-NOT: pipeline: {{[0-9]}} stages
// FLAT-NOT: @2
// FLAT:      estimated step time: 845.9 us
// FLAT-NEXT: bytes moved: {{.*}} inter-node 393216 B (384.00 KiB)
//
// The staged plan runs, one MPI rank per device, with the float64 NumPy
// reference's outputs; so does the flat one.
// RUN: %python %S/Inputs/pipeline_check.py inputs %t
// RUN: tra-compile %s --hw %t/hw.json -o %t/staged
// RUN: %mpirun -np 4 %t/staged --input x=%t/x.npy --input w0=%t/w0.npy --input w1=%t/w1.npy --input w2=%t/w2.npy --input w3=%t/w3.npy --output y=%t/y.npy
// RUN: %python %S/Inputs/pipeline_check.py check %t
// RUN: tra-compile %t/flat.mlir --hw %t/hw.json -o %t/flat
// RUN: %mpirun -np 4 %t/flat --input x=%t/x.npy --input w0=%t/w0.npy --input w1=%t/w1.npy --input w2=%t/w2.npy --input w3=%t/w3.npy --output y=%t/y.npy
// RUN: %python %S/Inputs/pipeline_check.py check %t
//
// Stages cut by the weights they hold (memory), not only by compute: two
// one-device nodes, the first 4 times as fast but with 1.6 MB of memory,
// the second with 4 MB. Cut by compute, the fast node would get three of
// the four 1 MiB weights, which it cannot hold; the flat plan needs 2.38
// MiB on it. Cut by memory, it holds one layer and the other node three,
// and the plan runs with the reference's outputs.
// RUN: %python %S/Inputs/pipeline_check.py unequal %t/unequal.json 4 1600000 4000000 5e8
// RUN: tra-compile %s --hw %t/unequal.json --emit=plan --explain | FileCheck %s --check-prefix=MEM
// MEM:      pipeline: 2 stages: 2 operations on 0; 5 operations on 1
// MEM:      device 0   cpu: 1.12 MiB + 256.00 KiB = 1.38 MiB / 1.53 MiB
// RUN: not tra-opt %s --tra-decompose="hw=%t/unequal.json pipeline=false" 2>&1 | FileCheck %s --check-prefix=MEM-FLAT
// MEM-FLAT: does not fit in the memory of unequal
// RUN: tra-compile %s --hw %t/unequal.json -o %t/unequal
// RUN: %mpirun -np 2 %t/unequal --input x=%t/x.npy --input w0=%t/w0.npy --input w1=%t/w1.npy --input w2=%t/w2.npy --input w3=%t/w3.npy --output y=%t/y.npy
// RUN: %python %S/Inputs/pipeline_check.py check %t
//
// A plan edited by hand may place an operation on any block of devices; one
// past the hardware's devices is refused.
// RUN: sed -e 's/e = 2, first_device = 2/e = 2, first_device = 3/' %t/plan.mlir > %t/bad.mlir
// RUN: not tra-compile %t/bad.mlir --hw %t/hw.json --emit=plan 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: error: plan runs the operation on devices 3 to 4 but the hardware has 4 devices

func.func @mlp(%x: tensor<64x512xf32> {tra.name = "x"}, %w0: tensor<512x512xf32> {tra.name = "w0"},
               %w1: tensor<512x512xf32> {tra.name = "w1"}, %w2: tensor<512x512xf32> {tra.name = "w2"},
               %w3: tensor<512x512xf32> {tra.name = "w3"}) -> (tensor<64x512xf32> {tra.name = "y"}) {
  %h0 = tra.einsum "bd,de->be" mul (%x, %w0) : (tensor<64x512xf32>, tensor<512x512xf32>) -> tensor<64x512xf32>
  %a0 = tra.einsum "be->be" relu (%h0) : (tensor<64x512xf32>) -> tensor<64x512xf32>
  %h1 = tra.einsum "bd,de->be" mul (%a0, %w1) : (tensor<64x512xf32>, tensor<512x512xf32>) -> tensor<64x512xf32>
  %a1 = tra.einsum "be->be" relu (%h1) : (tensor<64x512xf32>) -> tensor<64x512xf32>
  %h2 = tra.einsum "bd,de->be" mul (%a1, %w2) : (tensor<64x512xf32>, tensor<512x512xf32>) -> tensor<64x512xf32>
  %a2 = tra.einsum "be->be" relu (%h2) : (tensor<64x512xf32>) -> tensor<64x512xf32>
  %y = tra.einsum "bd,de->be" mul (%a2, %w3) : (tensor<64x512xf32>, tensor<512x512xf32>) -> tensor<64x512xf32>
  return %y : tensor<64x512xf32>
}
