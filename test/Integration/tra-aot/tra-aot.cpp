//===- tra-aot.cpp - Test driver of the ahead-of-time compiler ------------===//
//
//   tra-aot MODEL.mlir -o OUT [--entry NAME]
//           [--emit=exe|obj|header|linalg|buffers|llvm-dialect|llvm-ir]
//           [-O N]
//           [--blas=false] [--bounds-checks=false] [--fuse-elementwise=false]
//           [--profile=false]
//
// Drives lib/Conversion/Executable the way tools/tra-compile does for one
// CPU device, and can stop after any stage, so that the Integration tests
// and the benchmarks can build executables before the full compiler is
// wired. Not installed.
//
//===----------------------------------------------------------------------===//

#include "tra/Conversion/Executable/Executable.h"
#include "tra/Conversion/Pipeline/Pipeline.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Target/TargetMachine.h"

using namespace mlir;
using namespace mlir::tra;
namespace cl = llvm::cl;

namespace {
enum class Emit { exe, obj, header, linalg, buffers, llvmDialect, llvmIR };
} // namespace

static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<model.mlir>"),
                                      cl::Required);
static cl::opt<std::string> outputFile("o", cl::desc("Output file"),
                                       cl::value_desc("path"), cl::Required);
static cl::opt<std::string> entryName("entry", cl::desc("Entry function"));
static cl::opt<Emit> emit(
    "emit", cl::desc("What to write"), cl::init(Emit::exe),
    cl::values(clEnumValN(Emit::exe, "exe", "an executable (default)"),
               clEnumValN(Emit::obj, "obj", "an object file"),
               clEnumValN(Emit::header, "header", "the C header of the entry"),
               clEnumValN(Emit::linalg, "linalg", "MLIR after tra-to-linalg"),
               clEnumValN(Emit::buffers, "buffers", "MLIR after bufferization"),
               clEnumValN(Emit::llvmDialect, "llvm-dialect",
                          "MLIR in the LLVM dialect"),
               clEnumValN(Emit::llvmIR, "llvm-ir", "optimized LLVM IR")));
static cl::opt<unsigned> optLevel("O", cl::desc("LLVM optimization level"),
                                  cl::init(3), cl::Prefix);
static cl::opt<bool> blas("blas", cl::desc("Call BLAS for contractions"),
                          cl::init(true));
static cl::opt<bool> boundsChecks("bounds-checks",
                                  cl::desc("Run-time bounds checks"),
                                  cl::init(true));
static cl::opt<bool> profile("profile", cl::desc("Time every op"),
                             cl::init(true));
static cl::opt<bool> fuseElementwise("fuse-elementwise",
                                     cl::desc("Fuse elementwise ops"),
                                     cl::init(true));

/// Writes `text` to the output file.
static LogicalResult
writeOutput(llvm::function_ref<void(llvm::raw_ostream &)> write) {
  std::string error;
  std::unique_ptr<llvm::ToolOutputFile> out =
      openOutputFile(outputFile, &error);
  if (!out) {
    llvm::errs() << "tra-aot: " << error << "\n";
    return failure();
  }
  write(out->os());
  out->keep();
  return success();
}

/// Stops after the stage `emit` names, or compiles all the way.
static LogicalResult run(ModuleOp module, const CodegenOptions &options) {
  switch (emit) {
  case Emit::exe:
    return compileToExecutable(module, outputFile, options);
  case Emit::obj:
    return compileToObject(module, outputFile, options);
  case Emit::header: {
    FailureOr<func::FuncOp> entry = findEntryFunction(module, options.entry);
    if (failed(entry))
      return failure();
    FailureOr<EntrySignature> signature = getEntrySignature(*entry);
    if (failed(signature))
      return failure();
    return writeOutput(
        [&](llvm::raw_ostream &os) { writeCHeader(*signature, os); });
  }
  case Emit::linalg:
  case Emit::buffers: {
    TRAToLLVMPipelineOptions pipelineOptions;
    pipelineOptions.entry = options.entry;
    pipelineOptions.boundsChecks = options.boundsChecks;
    pipelineOptions.fuseElementwise = options.fuseElementwise;
    pipelineOptions.blas = options.blas;
    pipelineOptions.profile = options.profile;
    PassManager pm(module.getContext());
    buildTRAToLinalgStage(pm, pipelineOptions);
    if (emit == Emit::buffers)
      buildBufferizationStage(pm, pipelineOptions);
    if (failed(pm.run(module)))
      return failure();
    return writeOutput([&](llvm::raw_ostream &os) { module.print(os); });
  }
  case Emit::llvmDialect:
  case Emit::llvmIR:
    break;
  }
  FailureOr<EntrySignature> signature =
      lowerEntryToLLVMDialect(module, options);
  if (failed(signature))
    return failure();
  if (emit == Emit::llvmDialect)
    return writeOutput([&](llvm::raw_ostream &os) { module.print(os); });
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> llvmModule =
      translateToLLVMIR(module, *signature, context);
  if (!llvmModule)
    return failure();
  auto machine = createTargetMachine(options);
  if (!machine) {
    llvm::errs() << "tra-aot: " << llvm::toString(machine.takeError()) << "\n";
    return failure();
  }
  optimizeLLVMModule(*llvmModule, **machine, options.optLevel);
  return writeOutput(
      [&](llvm::raw_ostream &os) { llvmModule->print(os, nullptr); });
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::ParseCommandLineOptions(argc, argv,
                              "tra ahead-of-time compiler (test driver)\n");

  DialectRegistry registry;
  registerTRACodegenDialects(registry);
  MLIRContext context(registry);
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> file = openInputFile(inputFile, &error);
  if (!file) {
    llvm::errs() << "tra-aot: " << inputFile << ": " << error << "\n";
    return 1;
  }
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return 1;

  CodegenOptions options;
  options.entry = entryName;
  options.optLevel = optLevel;
  options.blas = blas;
  options.boundsChecks = boundsChecks;
  options.fuseElementwise = fuseElementwise;
  options.profile = profile;
  return failed(run(*module, options)) ? 1 : 0;
}
