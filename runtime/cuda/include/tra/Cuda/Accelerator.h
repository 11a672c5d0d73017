//===- Accelerator.h - runtime/cuda as a driver's accelerator ---*- C++ -*-===//
//
// The executable driver (tra/Exec/Driver.h) and the engine
// (tra/Engine/LocalModel.h) run GPU programs through an exec::Accelerator:
// device memory, copies and synchronization. This is runtime/cuda's.
//
//===----------------------------------------------------------------------===//

#ifndef TRA_CUDA_ACCELERATOR_H
#define TRA_CUDA_ACCELERATOR_H

#include "tra/Exec/Driver.h"

namespace tra::cuda {

/// The accelerator of this process's GPU (Cuda.h's functions).
const exec::Accelerator &getAccelerator();

} // namespace tra::cuda

#endif // TRA_CUDA_ACCELERATOR_H
