// REQUIRES: cuda-toolkit
// ptxas compiles the kernel once per chip, fatbinary packs the two cubins.
// RUN: tra-opt %s --pass-pipeline="builtin.module(nvvm-attach-target{chip=sm_80 O=3},nvvm-attach-target{chip=sm_90 O=3},gpu.module(convert-gpu-to-nvvm,reconcile-unrealized-casts),gpu-module-to-binary{format=bin toolkit=%cuda_toolkit},tra-gpu-fatbin{toolkit=%cuda_toolkit})" | FileCheck %s
// RUN: tra-opt %s --pass-pipeline="builtin.module(nvvm-attach-target{chip=sm_80 O=3},nvvm-attach-target{chip=sm_90 O=3},gpu.module(convert-gpu-to-nvvm,reconcile-unrealized-casts),gpu-module-to-binary{format=bin toolkit=%cuda_toolkit})" | FileCheck %s --check-prefix=CUBINS
// RUN: not tra-opt %s --pass-pipeline="builtin.module(nvvm-attach-target{chip=sm_80},gpu.module(convert-gpu-to-nvvm,reconcile-unrealized-casts),gpu-module-to-binary{format=bin toolkit=%cuda_toolkit},tra-gpu-fatbin{toolkit=/nonexistent})" 2>&1 | FileCheck %s --check-prefix=NOTOOL
// RUN: not tra-opt %s --pass-pipeline="builtin.module(nvvm-attach-target{chip=sm_80},gpu.module(convert-gpu-to-nvvm,reconcile-unrealized-casts),gpu-module-to-binary{format=isa toolkit=%cuda_toolkit},tra-gpu-fatbin{toolkit=%cuda_toolkit})" 2>&1 | FileCheck %s --check-prefix=NOTBIN

// Two cubins before, one fatbin (magic 0xBA55ED50) after, naming both chips.
// CUBINS: gpu.binary @kernels [#gpu.object<#nvvm.target<O = 3, chip = "sm_80">, {{.*}}bin = "\7FELF{{.*}}>, #gpu.object<#nvvm.target<O = 3, chip = "sm_90">, {{.*}}bin = "\7FELF
// CHECK: gpu.binary @kernels [#gpu.object<#nvvm.target<O = 3, chip = "sm_80">, properties = {tra.chips = ["sm_80", "sm_90"]}, "P\EDU\BA
// CHECK-NOT: #gpu.object
// NOTOOL: error: tra-gpu-fatbin: no CUDA fatbinary at /nonexistent/bin/fatbinary
// NOTBIN: error: tra-gpu-fatbin: expected cubins of NVVM targets (gpu-module-to-binary format=bin)

module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @scale(%a: memref<?xf32>, %s: f32) kernel {
      %i = gpu.thread_id x
      %v = memref.load %a[%i] : memref<?xf32>
      %w = arith.mulf %v, %s : f32
      memref.store %w, %a[%i] : memref<?xf32>
      gpu.return
    }
  }
}
