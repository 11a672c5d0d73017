//===- MainMPI.cpp - main() of distributed tra executables ----------------===//
//
// Linked into the executables tra-compile writes for multi-device plans:
// runs the program the compiled object describes with the tra MPI runtime
// as the driver's communicator.
//
//===----------------------------------------------------------------------===//

#include "tra/Exec/ABI.h"
#include "tra/Exec/Driver.h"
#include "tra/Runtime/MpiCommunicator.h"

int main(int argc, char **argv) {
  return tra::exec::runProgram(tra_exec_program, argc, argv,
                               &tra::mpi::getCommunicator());
}
