//===- Link.h - Linking objects with the tra runtime ------------*- C++ -*-===//
//
// Compiled objects become executables or shared libraries by linking them
// with the runtime's archives (runtime/exec, runtime/mpi for distributed
// programs) and the system libraries those need, with the C++ compiler
// that built the runtime. An installed compiler links the installed
// runtime.
//
//===----------------------------------------------------------------------===//

#ifndef TRA_TARGET_LINK_H
#define TRA_TARGET_LINK_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Error.h"

#include <string>

namespace mlir {
namespace tra {

/// How to link an executable or a shared library.
struct LinkOptions {
  /// The compiler driver used to link (clang++ or c++).
  std::string linker;
  /// The runtime's archives, in link order.
  SmallVector<std::string> runtimeLibraries;
  /// System libraries and flags after them (OpenBLAS, pthreads, libm).
  SmallVector<std::string> systemLibraries;
};

/// Executables of one-device programs: the executable runtime with its
/// `main` (TRAExecMain, TRAExec, TRARuntime) and the system libraries.
LinkOptions getDefaultLinkOptions();

/// Shared libraries: the executable runtime's TRAExec archive (no `main`, no
/// command line) and the system libraries.
LinkOptions getDefaultSharedLibraryLinkOptions();

/// Distributed executables: the MPI driver and runtime (runtime/mpi) before
/// the one-device archives, and the MPI library; with `cuda` (one NVIDIA GPU
/// per rank) the driver with the CUDA accelerator, the GPU archives and
/// libtra_cuda.so as for getCudaLinkOptions. `runtimeLibraries` is empty if
/// this compiler was built without MPI (or, for `cuda`, the CUDA runtime).
LinkOptions getDistributedLinkOptions(bool cuda = false);

/// Programs for NVIDIA GPUs: the executable runtime without OpenBLAS (its
/// driver with the CUDA accelerator, for executables) and runtime/cuda's
/// libtra_cuda.so, found at run time beside the program, in ../lib, or where
/// this compiler's build or install put it. `runtimeLibraries` is empty if
/// this compiler was built without the CUDA runtime.
LinkOptions getCudaLinkOptions();
LinkOptions getCudaSharedLibraryLinkOptions();

/// The link options of executables / shared libraries for the CPU (or, with
/// `cuda`, the GPU).
LinkOptions getExecutableLinkOptions(bool cuda);
LinkOptions getSharedLibraryLinkOptions(bool cuda);

/// Returns the runtime archives `list` names (the build tree's paths,
/// separated by ';'), or the archives of the same names in the lib/
/// directory beside this program's bin/ directory when all of them are
/// there: an installed compiler (`cmake --install`) links the installed
/// runtime, one in the build tree its build's.
SmallVector<std::string> locateRuntimeLibraries(StringRef list);

/// What `linkObjects` writes.
enum class LinkKind { Executable, SharedLibrary };

/// Links `objects` with the runtime into `output`, an executable or a
/// shared library (`-shared`), written atomically (a temporary file renamed
/// into place; nothing is left behind on failure).
llvm::Error linkObjects(ArrayRef<std::string> objects, StringRef output,
                        const LinkOptions &options, LinkKind kind);

/// linkObjects() of an executable / a shared library.
llvm::Error linkExecutable(ArrayRef<std::string> objects, StringRef output,
                           const LinkOptions &options);
llvm::Error linkSharedLibrary(ArrayRef<std::string> objects, StringRef output,
                              const LinkOptions &options);

} // namespace tra
} // namespace mlir

#endif // TRA_TARGET_LINK_H
