//===- MainMPI.cpp - main() of distributed tra executables ----------------===//
//
// Linked into the executables tra-compile writes for multi-device plans:
// runs the program the compiled object describes with the tra MPI runtime
// as the driver's communicator.
//
//===----------------------------------------------------------------------===//

#include "tra/Exec/ABI.h"
#include "tra/Exec/Driver.h"
#include "tra/Runtime/Mpi.h"

int main(int argc, char **argv) {
  tra::exec::Communicator comm;
  comm.init = tra_mpi_init;
  comm.rank = tra_mpi_rank;
  comm.send = tra_mpi_send;
  comm.recv = tra_mpi_recv;
  comm.fatal = tra_mpi_fatal;
  comm.allreduce = tra_mpi_allreduce;
  comm.bytesSent = tra_mpi_bytes_sent;
  comm.messagesSent = tra_mpi_messages_sent;
  comm.finalize = tra_mpi_finalize;
  return tra::exec::runProgram(tra_exec_program, argc, argv, &comm);
}
