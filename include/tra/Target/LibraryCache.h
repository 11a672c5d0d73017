//===- LibraryCache.h - The on-disk cache of compiled libraries -*- C++ -*-===//
//
// Compiled shared libraries are cached by a hash of everything that
// determines their code (the module's text, the code generation options,
// the target CPU, the compiler and runtime build), so a second run of the
// same model skips code generation. Entries are written atomically with a
// SHA-256 manifest, and a corrupt or stale entry is rebuilt.
//
//===----------------------------------------------------------------------===//

#ifndef TRA_TARGET_LIBRARYCACHE_H
#define TRA_TARGET_LIBRARYCACHE_H

#include "tra/Exec/Library.h"
#include "tra/Target/CodegenOptions.h"
#include "tra/Target/EntrySignature.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <string>

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace mlir {
namespace tra {

/// Identifies the code this build generates: the runtime ABI version, the
/// LLVM version and the size and time of the compiler binary and runtime
/// archives. Part of every library cache key.
std::string getCompilerIdentity();

/// The default library cache: $XDG_CACHE_HOME/tra, else ~/.cache/tra; ""
/// if neither is known.
std::string getDefaultLibraryCacheDirectory();

/// Returns the cache key (64 hex digits, SHA-256) of compiling `module` with
/// `options`: the module's text, the options (the host CPU and features when
/// they are empty), `extra` (e.g. the hardware description) and
/// getCompilerIdentity().
std::string computeLibraryCacheKey(ModuleOp module,
                                   const CodegenOptions &options,
                                   StringRef extra);

/// A program compiled (or found in the cache) and loaded.
struct CompiledProgram {
  /// The loaded library (run it through the engine, runtime/engine).
  std::unique_ptr<::tra::exec::ProgramLibrary> program;
  /// The entry's signature, as in the model, with the outputs'
  /// `aliasedInput` of the loaded library.
  EntrySignature signature;
  /// True if the library came from the cache (nothing was compiled).
  bool fromCache = false;
  /// Seconds spent compiling (0 when loaded from the cache).
  double compileSeconds = 0;
  /// The cache entry, or "" when compiled without the cache.
  std::string cachePath;
};

/// Compiles `module` (its entry `options.entry`) into a shared library and
/// loads it. With a non-empty `cacheDirectory`, the library is first looked
/// up there by computeLibraryCacheKey(module, options, keyExtra); a valid
/// entry (its SHA-256 matches the manifest written with it, it loads, its
/// descriptor has the entry's signature) is loaded without compiling. A
/// corrupt or stale entry is reported on `notes` and rebuilt. New entries
/// are written atomically (temporary files renamed into place: the library
/// first, then its manifest). Without a cache directory the library is
/// compiled into a temporary directory that is removed once it is loaded.
/// `module` is lowered in place if it is compiled.
llvm::Expected<CompiledProgram>
loadOrCompileProgram(ModuleOp module, const CodegenOptions &options,
                     StringRef cacheDirectory, StringRef keyExtra,
                     llvm::raw_ostream &notes);

/// A shared library found in the library cache or compiled.
struct CachedLibrary {
  std::string path;
  bool fromCache = false;
  double compileSeconds = 0;
};

/// Finds the library of the planned `module` in `cacheDirectory`, as
/// `<entry>-dist-<key>.so` with the key of computeLibraryCacheKey (the
/// planned module's text includes its plan), or compiles it there (written
/// atomically, with its manifest, like loadOrCompileProgram's entries). With
/// an empty or unusable cache directory (noted on `notes`) the library is
/// compiled into `scratchDirectory` instead. The library is not loaded here:
/// the MPI processes load it. `module` is lowered in place if it is compiled.
llvm::Expected<CachedLibrary> findOrCompileDistributedLibrary(
    ModuleOp module, const CodegenOptions &options, StringRef cacheDirectory,
    StringRef keyExtra, StringRef scratchDirectory, llvm::raw_ostream &notes);

} // namespace tra
} // namespace mlir

#endif // TRA_TARGET_LIBRARYCACHE_H
