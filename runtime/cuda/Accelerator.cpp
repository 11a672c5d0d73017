//===- Accelerator.cpp - runtime/cuda as a driver's accelerator -----------===//

#include "tra/Cuda/Accelerator.h"

#include "tra/Cuda/Cuda.h"
#include "tra/Runtime/Mpi.h"

using namespace tra;

namespace {
/// Connects the GPUs of a distributed program's ranks. Every rank loads
/// NCCL first and the ranks agree that all could, so that no rank waits in
/// NCCL's start-up for a rank that will never join it.
rt::Status connect(const exec::Communicator &comm, int numRanks) {
  rt::Status loaded = cuda::loadCollectives();
  int64_t ok = loaded ? 1 : 0;
  comm.allreduce(&ok, 1, TRA_MPI_I64, TRA_MPI_MIN, nullptr, 0);
  if (!loaded)
    return loaded;
  if (!ok)
    return rt::Error{"another rank cannot load NCCL"};
  cuda::Bootstrap bootstrap;
  bootstrap.rank = comm.rank();
  bootstrap.size = numRanks;
  bootstrap.send = comm.send;
  bootstrap.recv = comm.recv;
  return cuda::connectRanks(bootstrap);
}

const exec::Accelerator kCuda = {
    cuda::initialize,      cuda::describeDevice, cuda::allocate,
    cuda::release,         cuda::copyToDevice,   cuda::copyToHost,
    cuda::fillZero,        cuda::synchronize,    connect,
    cuda::disconnectRanks, cuda::describeMoves,  cuda::pinHostMemory,
    cuda::unpinHostMemory,
};
} // namespace

const exec::Accelerator &tra::cuda::getAccelerator() { return kCuda; }
