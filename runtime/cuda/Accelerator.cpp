//===- Accelerator.cpp - runtime/cuda as a driver's accelerator -----------===//

#include "tra/Cuda/Accelerator.h"

#include "tra/Cuda/Cuda.h"

using namespace tra;

namespace {
const exec::Accelerator kCuda = {
    cuda::initialize,   cuda::describeDevice, cuda::allocate, cuda::release,
    cuda::copyToDevice, cuda::copyToHost,     cuda::fillZero, cuda::synchronize,
};
} // namespace

const exec::Accelerator &tra::cuda::getAccelerator() { return kCuda; }
