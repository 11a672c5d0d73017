//===- MpiCommunicator.h - The MPI runtime as a communicator ---*- C++ -*-===//
//
// The executable driver (tra/Exec/Driver.h) runs distributed programs
// through an exec::Communicator; this is the MPI runtime's (tra/Runtime/
// Mpi.h), used by the main() of CPU and of GPU distributed executables.
//
//===----------------------------------------------------------------------===//

#ifndef TRA_RUNTIME_MPICOMMUNICATOR_H
#define TRA_RUNTIME_MPICOMMUNICATOR_H

namespace tra::exec {
struct Communicator;
} // namespace tra::exec

namespace tra::mpi {

/// The tra_mpi_* functions as a communicator.
const exec::Communicator &getCommunicator();

} // namespace tra::mpi

#endif // TRA_RUNTIME_MPICOMMUNICATOR_H
