// Weights in a memory tier (issue 17): four 256 KiB weights and 192 KiB of
// input and activations on a device of 900,000 bytes. Keeping the weights
// needs 1.19 MiB; with a host-memory tier every weight lives there and is
// streamed in before the matmul that reads it (two buffers: the one read
// and the next one, arriving meanwhile), and EXPLAIN shows where each
// weight lives, each transfer and what compute does not hide.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/tiers_check.py hardware %t/host.json 1 900000 host=4000000
// RUN: tra-compile %s --hw %t/host.json --emit=plan --explain -o %t/host.mlir | FileCheck %s
// CHECK:      x  argument 64x256xf32 - [1, 1] on 0
// CHECK-NEXT: w0  argument 256x256xf32 host [1, 1] on 0
// CHECK-NEXT: w1  argument 256x256xf32 host
// CHECK-NEXT: w2  argument 256x256xf32 host
// CHECK-NEXT: w3  argument 256x256xf32 host
// CHECK: %0  tra.einsum "bd,de->be" mul {{.*}} streamed in 256.00 KiB (263.1 us)
// CHECK: TOTAL
// 4 x 44.6 us of compute; transfers of 263.1 us, each started when the
// previous matmul starts: 1.053 ms of transfers, 906.5 us not hidden.
// CHECK-NEXT: estimated step time: 1.097 ms (compute 190.6 us, communication 0.0 us, waiting for streamed weights 906.5 us)
// CHECK-NEXT: memory tiers: 4 weights live in the nodes' tiers (host memory 1.00 MiB, disk 0 B) and are streamed to the devices each step: 1.00 MiB to the busiest device, 1.053 ms of transfers, 906.5 us of them not hidden behind compute
// CHECK: peak memory per device (arguments + activations and streamed buffers / capacity):
// CHECK-NEXT: device 0   cpu: 64.00 KiB + 640.00 KiB = 704.00 KiB / 878.91 KiB
// RUN: FileCheck %s --check-prefix=IR < %t/host.mlir
// IR: func.func @mlp(%arg0: tensor<64x256xf32> {tra.name = "x", tra_plan.dist = {{[^}]*}}},
// IR-SAME: tra_plan.tier = "host"
//
// Two devices split each weight (half the bytes to stream each).
// RUN: %python %S/Inputs/tiers_check.py hardware %t/two.json 2 500000 host=4000000
// RUN: tra-compile %s --hw %t/two.json --emit=plan --explain -o %t/two.mlir | FileCheck %s --check-prefix=TWO
// TWO: w0  argument 256x256xf32 host [1, 2] on 0,1
// TWO: streamed in 128.00 KiB
// TWO: memory tiers: 4 weights {{.*}} 512.00 KiB to the busiest device
//
// The programs move the tiles as planned: each einsum reads a fetch of its
// weight from the tier (tra-fetch-tiers), freed right after it, and the
// bytes fetched per run are the estimate above (1.00 MiB; 512.00 KiB on each
// of two devices); the outputs are the float64 NumPy reference's.
// RUN: %python %S/Inputs/tiers_check.py inputs %t
// RUN: tra-compile %s --hw %t/host.json -o %t/one
// RUN: %t/one --input x=%t/x.npy --input w0=%t/w0.npy --input w1=%t/w1.npy --input w2=%t/w2.npy --input w3=%t/w3.npy --output y=%t/y.npy --profile --repeat 2 2>&1 | FileCheck %s --check-prefix=RUN1
// RUN1: profile: fetched 1048576 bytes in 4 tiles from host memory per run
// RUN: %python %S/Inputs/tiers_check.py check %t
// RUN: tra-compile %s --hw %t/host.json --emit=mlir --stage=bufferized | FileCheck %s --check-prefix=FETCH
// Each fetch is started while the previous matmul runs (the first at the
// start) and waited for right before its matmul; its buffer is freed right
// after it.
// FETCH: %[[W0:.*]] = memref.alloc() : memref<256x256xf32>
// FETCH: %[[H0:.*]] = call @tra_exec_fetch_start(
// FETCH-NEXT: call @tra_exec_tier_fetched(%c262144_i64, %c1_i32)
// FETCH-NEXT: call @tra_exec_fetch_wait(%[[H0]])
// FETCH: %[[W1:.*]] = memref.alloc() : memref<256x256xf32>
// FETCH: %[[H1:.*]] = call @tra_exec_fetch_start(
// FETCH: call @tra_exec_sgemm
// FETCH-NEXT: memref.dealloc %[[W0]]
// FETCH: call @tra_exec_fetch_wait(%[[H1]])
// FETCH: call @tra_exec_fetch_start(
// FETCH: call @tra_exec_sgemm
// FETCH: memref.dealloc %[[W1]]
// REQUIRES: mpi
// RUN: tra-compile %s --hw %t/two.json -o %t/two
// RUN: %mpirun -np 2 %t/two --input x=%t/x.npy --input w0=%t/w0.npy --input w1=%t/w1.npy --input w2=%t/w2.npy --input w3=%t/w3.npy --output y=%t/y.npy --profile 2>&1 | FileCheck %s --check-prefix=RUN2
// RUN2-DAG: profile: rank 0: fetched 524288 bytes in 4 tiles from host memory per run
// RUN2-DAG: profile: rank 1: fetched 524288 bytes in 4 tiles from host memory per run
// RUN: %python %S/Inputs/tiers_check.py check %t
//
// Host memory too small: the rest goes to the disk tier.
// RUN: %python %S/Inputs/tiers_check.py hardware %t/disk.json 1 900000 host=300000 disk
// RUN: tra-compile %s --hw %t/disk.json --emit=plan --explain -o %t/disk.mlir | FileCheck %s --check-prefix=DISK
// DISK: w0  argument 256x256xf32 host
// DISK-NEXT: w1  argument 256x256xf32 disk
// DISK: memory tiers: 4 weights live in the nodes' tiers (host memory 256.00 KiB, disk 768.00 KiB)
// RUN: tra-compile %s --hw %t/disk.json -o %t/disk
// The program's descriptor says where each weight is (a GPU engine keeps
// those in host memory; a CPU one does not bring the disk's into memory).
// RUN: %t/disk --list | FileCheck %s --check-prefix=LIST
// LIST:      input  x: f32[64, 256]{{$}}
// LIST-NEXT: input  w0: f32[256, 256] (in host memory)
// LIST-NEXT: input  w1: f32[256, 256] (on disk)
// RUN: %t/disk --input x=%t/x.npy --input w0=%t/w0.npy --input w1=%t/w1.npy --input w2=%t/w2.npy --input w3=%t/w3.npy --output y=%t/y.npy --profile 2>&1 | FileCheck %s --check-prefix=RUNDISK
// RUNDISK: profile: fetched 262144 bytes in 1 tile from host memory per run
// RUNDISK-NEXT: profile: fetched 786432 bytes in 3 tiles from disk per run
// RUN: %python %S/Inputs/tiers_check.py check %t
//
// Errors: the tiers cannot hold the weights (naming every tier); no tier
// (the plain error); streaming turned off.
// RUN: %python %S/Inputs/tiers_check.py hardware %t/small.json 1 900000 host=300000
// RUN: not tra-compile %s --hw %t/small.json --emit=plan -o %t/never.mlir 2>&1 | FileCheck %s --check-prefix=SMALL
// SMALL: error: @mlp does not fit in the memory of tiers: beyond what its devices hold, 1048576 bytes (1.00 MiB) of weights must live in a memory tier, but tiers has 900000 bytes (878.91 KiB) in 1 device, and in its nodes' tiers 300000 bytes (292.97 KiB) of host memory and no disk
// RUN: %python %S/Inputs/tiers_check.py hardware %t/none.json 1 900000
// RUN: not tra-compile %s --hw %t/none.json --emit=plan -o %t/never.mlir 2>&1 | FileCheck %s --check-prefix=NONE
// NONE: error: @mlp needs at least 1245184 bytes (1.19 MiB) of memory (1.06 MiB of arguments and weights, 128.00 KiB of activations) but tiers has 900000 bytes (878.91 KiB) in 1 device{{$}}
// RUN: not tra-opt %s --tra-assign-partitions="hw=%t/host.json stream=false" 2>&1 | FileCheck %s --check-prefix=OFF
// OFF: error: {{.*}}@mlp needs at least 1245184 bytes {{.*}} in 1 device, and in its nodes' tiers 4000000 bytes (3.81 MiB) of host memory and no disk
// RUN: not test -e %t/never.mlir

func.func @mlp(%x: tensor<64x256xf32> {tra.name = "x"}, %w0: tensor<256x256xf32> {tra.name = "w0"},
               %w1: tensor<256x256xf32> {tra.name = "w1"}, %w2: tensor<256x256xf32> {tra.name = "w2"},
               %w3: tensor<256x256xf32> {tra.name = "w3"}) -> (tensor<64x256xf32> {tra.name = "y"}) {
  %h0 = tra.einsum "bd,de->be" mul (%x, %w0) : (tensor<64x256xf32>, tensor<256x256xf32>) -> tensor<64x256xf32>
  %a0 = tra.einsum "be->be" relu (%h0) : (tensor<64x256xf32>) -> tensor<64x256xf32>
  %h1 = tra.einsum "bd,de->be" mul (%a0, %w1) : (tensor<64x256xf32>, tensor<256x256xf32>) -> tensor<64x256xf32>
  %a1 = tra.einsum "be->be" relu (%h1) : (tensor<64x256xf32>) -> tensor<64x256xf32>
  %h2 = tra.einsum "bd,de->be" mul (%a1, %w2) : (tensor<64x256xf32>, tensor<256x256xf32>) -> tensor<64x256xf32>
  %a2 = tra.einsum "be->be" relu (%h2) : (tensor<64x256xf32>) -> tensor<64x256xf32>
  %y = tra.einsum "bd,de->be" mul (%a2, %w3) : (tensor<64x256xf32>, tensor<256x256xf32>) -> tensor<64x256xf32>
  return %y : tensor<64x256xf32>
}
