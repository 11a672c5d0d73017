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

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <string>

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
  /// Threads the hardware description gives the device (the executable's
  /// default for --threads); 0 lets the executable use all cores.
  int64_t numThreads = 0;
};

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

/// Links `objects` with the runtime into the executable `output`, written
/// atomically (a temporary file renamed into place).
llvm::Error linkExecutable(ArrayRef<std::string> objects, StringRef output,
                           const LinkOptions &options);

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

} // namespace tra
} // namespace mlir

#endif // TRA_CONVERSION_EXECUTABLE_EXECUTABLE_H
