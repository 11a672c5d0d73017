// RUN: tra-opt %s --tra-gpu-dedup-kernels -split-input-file | FileCheck %s

// Two layers' copies of one kernel and a different kernel: the copy goes,
// its launch uses the first module.
// CHECK-LABEL: func.func @layers
// CHECK: gpu.launch_func @layer_kernel::@layer_kernel
// CHECK: gpu.launch_func @layer_kernel::@layer_kernel
// CHECK: gpu.launch_func @other_kernel::@layer_kernel
// CHECK: gpu.module @layer_kernel
// CHECK-NOT: gpu.module @layer_kernel_0
// CHECK: gpu.module @other_kernel
// CHECK: arith.addf
module attributes {gpu.container_module} {
  func.func @layers(%a: memref<8xf32>, %b: memref<8xf32>) {
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    gpu.launch_func @layer_kernel::@layer_kernel blocks in (%c1, %c1, %c1) threads in (%c8, %c1, %c1) args(%a : memref<8xf32>)
    gpu.launch_func @layer_kernel_0::@layer_kernel blocks in (%c1, %c1, %c1) threads in (%c8, %c1, %c1) args(%b : memref<8xf32>)
    gpu.launch_func @other_kernel::@layer_kernel blocks in (%c1, %c1, %c1) threads in (%c8, %c1, %c1) args(%b : memref<8xf32>)
    return
  }
  gpu.module @layer_kernel {
    gpu.func @layer_kernel(%x: memref<8xf32>) kernel {
      %i = gpu.thread_id x
      %v = memref.load %x[%i] : memref<8xf32>
      %w = arith.mulf %v, %v : f32
      memref.store %w, %x[%i] : memref<8xf32>
      gpu.return
    }
  }
  gpu.module @layer_kernel_0 {
    gpu.func @layer_kernel(%x: memref<8xf32>) kernel {
      %i = gpu.thread_id x
      %v = memref.load %x[%i] : memref<8xf32>
      %w = arith.mulf %v, %v : f32
      memref.store %w, %x[%i] : memref<8xf32>
      gpu.return
    }
  }
  gpu.module @other_kernel {
    gpu.func @layer_kernel(%x: memref<8xf32>) kernel {
      %i = gpu.thread_id x
      %v = memref.load %x[%i] : memref<8xf32>
      %w = arith.addf %v, %v : f32
      memref.store %w, %x[%i] : memref<8xf32>
      gpu.return
    }
  }
}

// -----

// Kernels outlined from a distributed program's rank functions (@f.rank0)
// get names PTX accepts (letters, digits, _ and $); the launches follow.
// CHECK-LABEL: func.func @f.rank0
// CHECK: gpu.launch_func @f.rank0_kernel::@f_rank0_kernel
// CHECK: gpu.launch_func @f.rank1_kernel::@f_rank1_kernel
// CHECK: gpu.module @f.rank0_kernel
// CHECK: gpu.func @f_rank0_kernel(
// CHECK: gpu.module @f.rank1_kernel
// CHECK: gpu.func @f_rank1_kernel(
module attributes {gpu.container_module} {
  func.func @"f.rank0"(%a: memref<8xf32>) {
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    gpu.launch_func @"f.rank0_kernel"::@"f.rank0_kernel" blocks in (%c1, %c1, %c1) threads in (%c8, %c1, %c1) args(%a : memref<8xf32>)
    gpu.launch_func @"f.rank1_kernel"::@"f.rank1_kernel" blocks in (%c1, %c1, %c1) threads in (%c8, %c1, %c1) args(%a : memref<8xf32>)
    return
  }
  gpu.module @"f.rank0_kernel" {
    gpu.func @"f.rank0_kernel"(%x: memref<8xf32>) kernel {
      %i = gpu.thread_id x
      %v = memref.load %x[%i] : memref<8xf32>
      memref.store %v, %x[%i] : memref<8xf32>
      gpu.return
    }
  }
  gpu.module @"f.rank1_kernel" {
    gpu.func @"f.rank1_kernel"(%x: memref<8xf32>) kernel {
      %i = gpu.thread_id x
      %v = memref.load %x[%i] : memref<8xf32>
      memref.store %v, %x[%i] : memref<8xf32>
      gpu.return
    }
  }
}
