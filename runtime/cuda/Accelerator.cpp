//===- Accelerator.cpp - runtime/cuda as a driver's accelerator -----------===//

#include "tra/Cuda/Accelerator.h"

#include "tra/Cuda/Cuda.h"

using namespace tra;

namespace {
std::string describeDevice() {
  rt::Result<cuda::DeviceInfo> device = cuda::getDevice();
  if (!device)
    return "no GPU";
  return "GPU " + std::to_string(device->ordinal) + " (" + device->name +
         ", sm_" + std::to_string(device->major) +
         std::to_string(device->minor) + ")";
}

const exec::Accelerator kCuda = {
    cuda::initialize,   describeDevice,     cuda::allocate,
    cuda::release,      cuda::copyToDevice, cuda::copyToHost,
    cuda::fillZero,     cuda::synchronize,
};
} // namespace

const exec::Accelerator &tra::cuda::getAccelerator() { return kCuda; }
