//===- MainMPICuda.cpp - main() of distributed tra executables for GPUs ---===//
//
// Linked into the executables tra-compile writes for plans over several
// NVIDIA GPUs: one MPI rank per GPU, the tra MPI runtime as the driver's
// communicator (launch, start-up checks, NCCL's bootstrap, gathering the
// outputs) and runtime/cuda as its accelerator (device memory, the stream,
// the moves between the GPUs through NCCL).
//
//===----------------------------------------------------------------------===//

#include "tra/Cuda/Accelerator.h"
#include "tra/Exec/ABI.h"
#include "tra/Exec/Driver.h"
#include "tra/Runtime/MpiCommunicator.h"

int main(int argc, char **argv) {
  return tra::exec::runProgram(tra_exec_program, argc, argv,
                               &tra::mpi::getCommunicator(),
                               &tra::cuda::getAccelerator());
}
