//===- ProgramLoader.h - Compiled programs loaded in process ----*- C++ -*-===//
//
// A one-device program compiled into a shared library is loaded into the
// compiler's process with runtime/exec's loader (tra/Exec/Library.h), and its
// descriptor is checked against the signature it was compiled for.
//
//===----------------------------------------------------------------------===//

#ifndef TRA_TARGET_PROGRAMLOADER_H
#define TRA_TARGET_PROGRAMLOADER_H

#include "tra/Exec/Library.h"
#include "tra/Target/EntrySignature.h"

#include "llvm/Support/Error.h"

#include <memory>

namespace mlir {
namespace tra {

/// Loads the one-device program compiled by tra into the shared library
/// `path` into this process (runtime/exec's ProgramLibrary: dlopen with
/// RTLD_LOCAL, so several libraries, each with its own `tra_exec_program`,
/// can be loaded at once) and checks its descriptor. Errors name the file;
/// a distributed program is refused (tra-llama-worker runs those).
llvm::Expected<std::unique_ptr<::tra::exec::ProgramLibrary>>
openProgramLibrary(StringRef path);

/// Returns an error unless the entry of `library` has exactly `signature`'s
/// inputs and outputs (names, element types, shapes, in order).
llvm::Error checkProgramSignature(const ::tra::exec::ProgramLibrary &library,
                                  const EntrySignature &signature);

} // namespace tra
} // namespace mlir

#endif // TRA_TARGET_PROGRAMLOADER_H
