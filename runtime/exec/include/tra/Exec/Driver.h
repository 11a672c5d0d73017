//===- Driver.h - Command line of compiled tra executables ------*- C++ -*-===//
//
//   PROGRAM --input NAME=FILE.npy ... --output NAME=FILE.npy ...
//           [--weights FILE.safetensors|FILE.safetensors.index.json|DIR]...
//           [--threads N] [--profile] [--list]
//
// NAME is an argument or result name of the entry function (its `tra.name`).
// Arguments not given with --input are looked up by name in the --weights
// checkpoints. Every input must match the argument's shape and element type
// exactly (a bf16 argument may also be read from an f32 .npy file, since
// NumPy has no bfloat16). Errors name the argument and the file and give
// exit code 1; outputs are written atomically, and only after the program
// ran.
//
//===----------------------------------------------------------------------===//

#ifndef TRA_EXEC_DRIVER_H
#define TRA_EXEC_DRIVER_H

#include "tra/Exec/ABI.h"

namespace tra::exec {

/// Runs `program` as the command line `argv` asks and returns the process
/// exit code (0 on success, 1 on any error, reported on stderr).
int runProgram(const TraExecProgram &program, int argc,
               const char *const *argv);

} // namespace tra::exec

#endif // TRA_EXEC_DRIVER_H
