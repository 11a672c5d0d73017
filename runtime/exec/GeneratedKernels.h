//===- GeneratedKernels.h - Kernels compiled into the program ---*- C++ -*-===//
//
// Internal to runtime/exec: the kernels tra-emit-cpu-microkernels compiles
// into a program that calls the runtime's products (ABI.h), referenced
// weakly (null in programs without them, and in the runtime's own tests),
// and whether the runtime uses them (tra_exec_use_generated_kernels; by
// default where present). PackedGemm.cpp and Gemv.cpp fall back to their
// own intrinsics kernels otherwise.
//
//===----------------------------------------------------------------------===//

#ifndef TRA_EXEC_GENERATEDKERNELS_H
#define TRA_EXEC_GENERATEDKERNELS_H

#include "tra/Exec/ABI.h"

#include <cstdint>

// ABI.h declares them; the runtime's references are weak.
#pragma weak _mlir_ciface_tra_exec_microkernel_f32_8x32
#pragma weak _mlir_ciface_tra_exec_dots_f32_f32
#pragma weak _mlir_ciface_tra_exec_dots_f32_f16
#pragma weak _mlir_ciface_tra_exec_dots_f32_bf16
#pragma weak _mlir_ciface_tra_exec_dots_f32_q8

namespace tra {
namespace exec {

/// Whether the runtime calls the program's kernels where it has them.
bool generatedKernelsEnabled();

/// A memref descriptor of `size` contiguous elements at `data`.
inline TraExecMemRefF32 memRefOf(const float *data, int64_t size) {
  float *p = const_cast<float *>(data);
  return {p, p, 0, size, 1};
}
inline TraExecMemRefU16 memRefOf(const uint16_t *data, int64_t size) {
  uint16_t *p = const_cast<uint16_t *>(data);
  return {p, p, 0, size, 1};
}
inline TraExecMemRefI8 memRefOf(const int8_t *data, int64_t size) {
  int8_t *p = const_cast<int8_t *>(data);
  return {p, p, 0, size, 1};
}

} // namespace exec
} // namespace tra

#endif // TRA_EXEC_GENERATEDKERNELS_H
