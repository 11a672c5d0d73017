//===- Options.h - tra-llama's command-line option category -----*- C++ -*-===//

#ifndef TRA_TOOLS_TRA_LLAMA_OPTIONS_H
#define TRA_TOOLS_TRA_LLAMA_OPTIONS_H

#include "llvm/Support/CommandLine.h"

/// The category of every tra-llama option: --help lists only these, not
/// the LLVM and MLIR options linked into the tool.
llvm::cl::OptionCategory &getToolCategory();

/// Prints an error for every option given that is not tra-llama's (LLVM
/// registers hidden options such as --threads that would otherwise be
/// accepted and ignored) and returns whether there was one.
bool rejectForeignOptions();

#endif // TRA_TOOLS_TRA_LLAMA_OPTIONS_H
