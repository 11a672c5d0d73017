//===- Communicator.cpp - The MPI runtime as a driver's communicator ------===//

#include "tra/Runtime/MpiCommunicator.h"

#include "tra/Exec/Driver.h"
#include "tra/Runtime/Mpi.h"

const tra::exec::Communicator &tra::mpi::getCommunicator() {
  static const exec::Communicator comm = [] {
    exec::Communicator c;
    c.init = tra_mpi_init;
    c.rank = tra_mpi_rank;
    c.send = tra_mpi_send;
    c.recv = tra_mpi_recv;
    c.fatal = tra_mpi_fatal;
    c.allreduce = tra_mpi_allreduce;
    c.bytesSent = tra_mpi_bytes_sent;
    c.messagesSent = tra_mpi_messages_sent;
    c.finalize = tra_mpi_finalize;
    return c;
  }();
  return comm;
}
