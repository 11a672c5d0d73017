// REQUIRES: mpi
// Uneven splits by device speed (issue 17): one node with a fast CPU device
// (4x the peak flop/s and memory bandwidth) and a slow one. An even split
// leaves the fast device waiting for the slow one, so without uneven splits
// the plan runs everything on the fast device; with them, each matmul is
// cut 4:1 (`e=2 4:1` / `b=2 4:1` in EXPLAIN, `weights` in the
// distributions), the slow device doing a fifth of the work.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/pipeline_check.py hetero %t/hw.json 4
// RUN: tra-compile %s --hw %t/hw.json --emit=plan --explain -o %t/plan.mlir | FileCheck %s
// CHECK: w0 argument 512x512xf32 - [1, 2] weights [1, 4, 1] on 0,1
// CHECK: %0 tra.einsum "bd,de->be" mul 256x512xf32 e=2 4:1 [1, 2] weights [1, 4, 1] on 0,1
// CHECK: tra.einsum "bd,de->be" mul 256x512xf32 b=2 4:1 [2, 1] weights [4, 1, 1] on 0,1
// CHECK: estimated step time: 3.194 ms
// CHECK: device 0 cpu: 4.30 MiB
// CHECK: device 1 cpu: 3.70 MiB
// RUN: FileCheck %s --check-prefix=IR < %t/plan.mlir
// IR: tra_plan.split = #tra_plan.split<e = 2, weights = [4, 1]>
// IR: #tra_plan.dist<[1, 2] weights [1, 4, 1] on [0, 1]>
//
// Without them (`uneven=false`): slower, on the fast device alone.
// RUN: tra-opt %s --tra-decompose="hw=%t/hw.json uneven=false" -o %t/even.mlir
// RUN: tra-compile %t/even.mlir --hw %t/hw.json --emit=plan --explain | FileCheck %s --check-prefix=EVEN
// EVEN-NOT: weights
// EVEN: estimated step time: 3.933 ms
//
// The uneven plan runs, one MPI rank per device, with the float64 NumPy
// reference's outputs; the ranks read their uneven tiles (rank 0 four
// fifths of w0's columns) and move exactly the estimated bytes between the
// two cuts (plus the last activation's 52 rows, gathered for the output).
// RUN: %python %S/Inputs/pipeline_check.py inputs %t 256
// RUN: tra-compile %s --hw %t/hw.json -o %t/uneven
// RUN: %mpirun -np 2 %t/uneven --input x=%t/x.npy --input w0=%t/w0.npy --input w1=%t/w1.npy --input w2=%t/w2.npy --input w3=%t/w3.npy --output y=%t/y.npy --profile 2> %t/profile.log
// RUN: %python %S/Inputs/pipeline_check.py check %t
// RUN: FileCheck %s --check-prefix=MOVED < %t/profile.log
// MOVED-DAG: tra: rank 0: sent 85072 bytes in 1 messages point to point
// RUN: tra-compile %s --hw %t/hw.json --emit=plan --explain | FileCheck %s --check-prefix=ESTIMATE
// ESTIMATE: bytes moved: 169120 B

func.func @mlp(%x: tensor<256x512xf32> {tra.name = "x"}, %w0: tensor<512x512xf32> {tra.name = "w0"},
               %w1: tensor<512x512xf32> {tra.name = "w1"}, %w2: tensor<512x512xf32> {tra.name = "w2"},
               %w3: tensor<512x512xf32> {tra.name = "w3"}) -> (tensor<256x512xf32> {tra.name = "y"}) {
  %h0 = tra.einsum "bd,de->be" mul (%x, %w0) : (tensor<256x512xf32>, tensor<512x512xf32>) -> tensor<256x512xf32>
  %a0 = tra.einsum "be->be" relu (%h0) : (tensor<256x512xf32>) -> tensor<256x512xf32>
  %h1 = tra.einsum "bd,de->be" mul (%a0, %w1) : (tensor<256x512xf32>, tensor<512x512xf32>) -> tensor<256x512xf32>
  %a1 = tra.einsum "be->be" relu (%h1) : (tensor<256x512xf32>) -> tensor<256x512xf32>
  %h2 = tra.einsum "bd,de->be" mul (%a1, %w2) : (tensor<256x512xf32>, tensor<512x512xf32>) -> tensor<256x512xf32>
  %a2 = tra.einsum "be->be" relu (%h2) : (tensor<256x512xf32>) -> tensor<256x512xf32>
  %y = tra.einsum "bd,de->be" mul (%a2, %w3) : (tensor<256x512xf32>, tensor<512x512xf32>) -> tensor<256x512xf32>
  return %y : tensor<256x512xf32>
}
