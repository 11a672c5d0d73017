//===- MainCuda.cpp - main() of compiled tra executables for GPUs ---------===//
//
// Linked into the executables tra-compile writes for NVIDIA GPUs: runs the
// program the compiled object describes with runtime/cuda as the driver's
// accelerator (device memory, copies, the stream).
//
//===----------------------------------------------------------------------===//

#include "tra/Cuda/Accelerator.h"
#include "tra/Exec/ABI.h"
#include "tra/Exec/Driver.h"

int main(int argc, char **argv) {
  return tra::exec::runProgram(tra_exec_program, argc, argv,
                               /*communicator=*/nullptr,
                               &tra::cuda::getAccelerator());
}
