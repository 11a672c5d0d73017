// REQUIRES: cuda-toolkit
// RUN: tra-opt %s --tra-gpu-fatbin=toolkit=%cuda_toolkit -split-input-file -verify-diagnostics

// A chip fatbinary has no name for.
module attributes {gpu.container_module} {
  // expected-error @+1 {{tra-gpu-fatbin: unexpected chip 'compute_90'}}
  gpu.binary @kernels [#gpu.object<#nvvm.target<chip = "compute_90">, bin = "not a cubin">]
}

// -----

// PTX instead of a cubin.
module attributes {gpu.container_module} {
  // expected-error @+1 {{tra-gpu-fatbin: expected cubins of NVVM targets (gpu-module-to-binary format=bin)}}
  gpu.binary @kernels [#gpu.object<#nvvm.target<chip = "sm_90">, assembly = ".version 8.0">]
}
