//===- MainCuda.cpp - main() of compiled tra executables for GPUs ---------===//
//
// Linked into the executables tra-compile writes for NVIDIA GPUs: runs the
// program the compiled object describes with runtime/cuda as the driver's
// accelerator (device memory, copies, the stream).
//
//===----------------------------------------------------------------------===//

#include "tra/Cuda/Cuda.h"
#include "tra/Exec/ABI.h"
#include "tra/Exec/Driver.h"

namespace {
std::string describeDevice() {
  tra::rt::Result<tra::cuda::DeviceInfo> device = tra::cuda::getDevice();
  if (!device)
    return "no GPU";
  return "GPU " + std::to_string(device->ordinal) + " (" + device->name +
         ", sm_" + std::to_string(device->major) +
         std::to_string(device->minor) + ")";
}

const tra::exec::Accelerator kCuda = {
    tra::cuda::initialize,   describeDevice,
    tra::cuda::allocate,     tra::cuda::release,
    tra::cuda::copyToDevice, tra::cuda::copyToHost,
    tra::cuda::synchronize,
};
} // namespace

int main(int argc, char **argv) {
  return tra::exec::runProgram(tra_exec_program, argc, argv,
                               /*communicator=*/nullptr, &kCuda);
}
