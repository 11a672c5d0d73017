// RUN: tra-opt %s --tra-emit-cpu-microkernels --verify-diagnostics

// A module that uses the micro-kernel's name for something else: one error,
// no crash.

func.func private @tra_exec_gemm_mixed(i64)

// expected-error @+1 {{symbol 'tra_exec_microkernel_f32_8x32' is reserved for a kernel of the runtime}}
func.func private @tra_exec_microkernel_f32_8x32(f32) -> f32
