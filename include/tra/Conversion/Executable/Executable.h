//===- Executable.h - Native objects and executables ------------*- C++ -*-===//
//
// The last steps of the compiler: a model-level tra module is lowered to the
// LLVM dialect (Pipeline.h), translated to LLVM IR together with a program
// descriptor that tells the executable runtime the entry's argument and
// result names, shapes and element types, optimized, emitted as an object
// for the host CPU, and linked with the runtime (runtime/exec) into an
// executable. The descriptor's layout is the C ABI of
// runtime/exec/include/tra/Exec/ABI.h.
//
//===----------------------------------------------------------------------===//

#ifndef TRA_CONVERSION_EXECUTABLE_EXECUTABLE_H
#define TRA_CONVERSION_EXECUTABLE_EXECUTABLE_H

#include "tra/Pipeline/Pipeline.h"
#include "tra/Exec/Library.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace llvm {
class LLVMContext;
class Module;
class TargetMachine;
class raw_ostream;
} // namespace llvm

namespace mlir {
namespace tra {

/// Element types of entry tensors, numbered as `TraExecDType` in the runtime
/// ABI.
enum class ExecElementType : int64_t {
  f32 = 0,
  f16 = 1,
  bf16 = 2,
  i64 = 3,
  i32 = 4,
  i1 = 5
};

/// Returns the lower-case name of `type` ("f32", ..., "i1").
StringRef stringifyExecElementType(ExecElementType type);

/// One argument or result of an entry function.
struct EntryTensor {
  std::string name;
  ExecElementType elementType = ExecElementType::f32;
  SmallVector<int64_t> shape;
};

/// The signature of an entry function: what the executable reads and writes.
struct EntrySignature {
  /// The function's name in the model.
  std::string function;
  /// Its symbol in the lowered module (see `prefixModelSymbols`); empty if
  /// it was not renamed.
  std::string symbol;
  SmallVector<EntryTensor> inputs;
  SmallVector<EntryTensor> outputs;
};

/// Returns the entry function of `module`: the function named `name` if it is
/// not empty, else @main, else the only public function with a body. Emits an
/// error if there is none (or several candidates).
FailureOr<func::FuncOp> findEntryFunction(ModuleOp module, StringRef name);

/// Returns the signature of `entry`, naming arguments and results by their
/// `tra.name` attribute (else "arg<i>" / "result<i>"). Emits an error if a
/// type is not a static-shape tensor of f32, f16, bf16, i64, i32 or i1, or if
/// two arguments or two results have the same name.
FailureOr<EntrySignature> getEntrySignature(func::FuncOp entry);

/// One tile of an entry tensor that one rank of a distributed program holds.
struct RankTile {
  /// Index of the tensor among the entry's inputs (or outputs).
  int64_t tensor = 0;
  /// Where the tile starts in the whole tensor.
  SmallVector<int64_t> offsets;
  /// Outputs: whether this rank reports the tile (the lowest holding rank).
  bool owner = false;
};

/// What one rank of a distributed program reads and writes: the signature
/// of its function (tile shapes) and where each tile sits.
struct RankSignature {
  EntrySignature local;
  SmallVector<RankTile> inputs;
  SmallVector<RankTile> outputs;
};

/// A distributed program: the entry's signature (whole tensors), one
/// program per rank, and the fingerprint of the plan.
struct DistributedSignature {
  EntrySignature global;
  std::vector<RankSignature> ranks;
  int64_t fingerprint = 0;
};

/// How to compile a module to native code.
struct CodegenOptions {
  /// Entry function (see `findEntryFunction`).
  std::string entry;
  /// LLVM optimization level, 0 to 3.
  unsigned optLevel = 3;
  /// Target CPU and features; empty means the host's.
  std::string cpu;
  std::string features;
  /// Pipeline switches (see TRAToLLVMPipelineOptions).
  bool blas = true;
  int64_t blasMinFlops = 0;
  bool boundsChecks = true;
  bool fuseElementwise = true;
  /// Time every model-level op for the executable's --profile.
  bool profile = true;
  /// Distributed programs: blocking tile moves in program order instead of
  /// non-blocking moves that overlap computation (tra-localize's
  /// blocking-moves; for comparison and debugging).
  bool blockingMoves = false;
  /// Threads the hardware description gives the device (the executable's
  /// default for --threads); 0 lets the executable use all cores.
  int64_t numThreads = 0;
  /// The pipeline's parallel-min-work, if not its default.
  std::optional<int64_t> parallelMinWork;
};

/// Sets the switches of `pipeline` that `options` carries (BLAS, bounds
/// checks, fusion, profiling, thread threshold); the caller sets the entry.
void setPipelineOptions(TRAToLLVMPipelineOptions &pipeline,
                        const CodegenOptions &options);

/// Prefix given to every function defined in a compiled module, so that no
/// model function collides with `main` or a C library symbol.
inline constexpr llvm::StringLiteral kModelSymbolPrefix = "tra_model_";

/// Renames every function defined in `module` to kModelSymbolPrefix + name,
/// updating all uses.
LogicalResult prefixModelSymbols(ModuleOp module);

/// Lowers `module` in place to the LLVM dialect with the `tra-lower-to-llvm`
/// pipeline, exposing `entry` through the C interface.
LogicalResult lowerToLLVMDialect(ModuleOp module, StringRef entry,
                                 const CodegenOptions &options);

/// Finds the entry (`options.entry`), records its signature, prefixes the
/// model symbols and lowers `module` to the LLVM dialect: the first half of
/// every code generation path. The signature's `symbol` is the lowered name.
FailureOr<EntrySignature>
lowerEntryToLLVMDialect(ModuleOp module, const CodegenOptions &options);

/// Translates `module` (in the LLVM dialect, the entry lowered with its C
/// interface) to LLVM IR and adds the program descriptor
/// `tra_exec_program` with a `run` function that calls the entry and
/// `numThreads` as the executable's default thread count. Emits an error and
/// returns null on failure.
std::unique_ptr<llvm::Module> translateToLLVMIR(ModuleOp module,
                                                const EntrySignature &signature,
                                                llvm::LLVMContext &context,
                                                int64_t numThreads = 0);

/// Returns a target machine for the host (or `options.cpu`/`features`).
llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
createTargetMachine(const CodegenOptions &options);

/// Sets `module`'s target and data layout to `machine`'s and runs LLVM's
/// default optimization pipeline at `optLevel` (0 to 3).
void optimizeLLVMModule(llvm::Module &module, llvm::TargetMachine &machine,
                        unsigned optLevel);

/// Writes `module` as an object file to `path`.
llvm::Error emitObjectFile(llvm::Module &module, llvm::TargetMachine &machine,
                           StringRef path);

/// How to link an executable.
struct LinkOptions {
  /// The compiler driver used to link (clang++ or c++).
  std::string linker;
  /// The executable runtime's archives, in link order.
  SmallVector<std::string> runtimeLibraries;
  /// System libraries and flags after them (OpenBLAS, pthreads, libm).
  SmallVector<std::string> systemLibraries;
};

/// Returns the link options of this build: the runtime archives built with
/// the compiler and the C++ compiler that built them.
LinkOptions getDefaultLinkOptions();

/// Returns the runtime archives `list` names (the build tree's paths,
/// separated by ';'), or the archives of the same names in the lib/
/// directory beside this program's bin/ directory when all of them are
/// there: an installed compiler (`cmake --install`) links the installed
/// runtime, one in the build tree its build's.
SmallVector<std::string> locateRuntimeLibraries(StringRef list);

/// Links `objects` with the runtime into the executable `output`, written
/// atomically (a temporary file renamed into place).
llvm::Error linkExecutable(ArrayRef<std::string> objects, StringRef output,
                           const LinkOptions &options);

/// Compiles `module` to a temporary object file with `compileObject` and
/// links it with `linkOptions` into the executable (or, with
/// `sharedLibrary`, the shared library) `output`; the shared last step of
/// every executable and library flavour. Errors are emitted as diagnostics.
LogicalResult linkCompiledObject(
    ModuleOp module, StringRef output, const LinkOptions &linkOptions,
    llvm::function_ref<LogicalResult(StringRef object)> compileObject,
    bool sharedLibrary = false);

/// Writes a C header for embedding the object: the runtime ABI's program
/// descriptor and the entry's buffers in `run` order.
void writeCHeader(const EntrySignature &signature, llvm::raw_ostream &os);

/// Compiles `module` to the executable `output`: finds the entry, lowers,
/// translates, optimizes, emits an object and links it with the runtime.
/// Errors are emitted as diagnostics. `module` is lowered in place.
LogicalResult
compileToExecutable(ModuleOp module, StringRef output,
                    const CodegenOptions &options,
                    const LinkOptions &linkOptions = getDefaultLinkOptions());

/// Compiles `module` to the object file `output` (no linking).
LogicalResult compileToObject(ModuleOp module, StringRef output,
                              const CodegenOptions &options,
                              EntrySignature *signature = nullptr);

//===----------------------------------------------------------------------===//
// Distributed programs (one program per MPI rank)
//===----------------------------------------------------------------------===//

/// Takes a planned module (every function planned for N devices, see
/// tra-decompose): splits the entry into one function per rank
/// (tra-localize) and lowers them all to the LLVM dialect, their tile moves
/// to MPI. Returns the signatures; `module` is lowered in place.
FailureOr<DistributedSignature>
lowerDistributedToLLVMDialect(ModuleOp module, const CodegenOptions &options);

/// translateToLLVMIR for a distributed program: the descriptor lists one
/// program per rank (runtime ABI `TraExecRankProgram`).
std::unique_ptr<llvm::Module> translateDistributedToLLVMIR(
    ModuleOp module, const DistributedSignature &signature,
    llvm::LLVMContext &context, int64_t numThreads = 0);

/// Link options of distributed executables: the MPI driver and runtime
/// (runtime/mpi) and the MPI library. `runtimeLibraries` is empty if this
/// compiler was built without MPI.
LinkOptions getDistributedLinkOptions();

/// Compiles a planned `module` to a distributed object / executable (run it
/// with `mpirun -np N`).
LogicalResult compileDistributedToObject(ModuleOp module, StringRef output,
                                         const CodegenOptions &options);
LogicalResult compileDistributedToExecutable(ModuleOp module, StringRef output,
                                             const CodegenOptions &options);

//===----------------------------------------------------------------------===//
// Shared libraries, in-process execution and the library cache
// (SharedLibrary.cpp)
//===----------------------------------------------------------------------===//

} // namespace tra
} // namespace mlir

namespace mlir {
namespace tra {

/// Returns the link options of shared libraries: the executable runtime's
/// TRAExec archive (no `main`, no command line) and the system libraries.
LinkOptions getDefaultSharedLibraryLinkOptions();

/// Links `objects` with the runtime into the shared library `output`
/// (`-shared`), written atomically (a temporary file renamed into place).
llvm::Error linkSharedLibrary(ArrayRef<std::string> objects, StringRef output,
                              const LinkOptions &options);

/// Compiles `module` to the shared library `output`, which defines
/// `tra_exec_program` (the descriptor of runtime/exec's ABI.h) and the
/// runtime functions compiled code calls. `module` is lowered in place.
LogicalResult compileToSharedLibrary(
    ModuleOp module, StringRef output, const CodegenOptions &options,
    EntrySignature *signature = nullptr,
    const LinkOptions &linkOptions = getDefaultSharedLibraryLinkOptions());

/// Compiles a planned `module` (see compileDistributedToObject) into the
/// shared library `output`: the descriptor lists every rank's program
/// (`TraExecRankProgram`). Its MPI calls are left to the MPI runtime of the
/// process that loads it (tra-llama-worker, linked with runtime/mpi and
/// exporting its symbols), so that the loader and the library share one MPI
/// state. `module` is lowered in place.
LogicalResult compileDistributedToSharedLibrary(ModuleOp module,
                                                StringRef output,
                                                const CodegenOptions &options);

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
  /// The entry's signature, as in the model.
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

/// The files `compileToLibrary` writes for `-o output`: output without a
/// trailing ".o", plus ".o", ".h" and ".so".
struct LibraryPaths {
  std::string object, header, sharedLibrary;
};
LibraryPaths getLibraryPaths(StringRef output);

/// `tra-compile --emit=lib`: compiles `module` to an object (to link with
/// the runtime's TRAExec archive), its C header (writeCHeader) and a shared
/// library (the object linked with TRAExec), named by getLibraryPaths.
/// On failure none of the three is left behind.
LogicalResult compileToLibrary(
    ModuleOp module, StringRef output, const CodegenOptions &options,
    const LinkOptions &linkOptions = getDefaultSharedLibraryLinkOptions());

} // namespace tra
} // namespace mlir

#endif // TRA_CONVERSION_EXECUTABLE_EXECUTABLE_H
