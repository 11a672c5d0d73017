//===- Main.cpp - main() of compiled tra executables ----------------------===//
//
// Linked into every executable tra-compile writes; runs the program the
// compiled object describes (`tra_exec_program`).
//
//===----------------------------------------------------------------------===//

#include "tra/Exec/ABI.h"
#include "tra/Exec/Driver.h"

int main(int argc, char **argv) {
  return tra::exec::runProgram(tra_exec_program, argc, argv);
}
