//===- Codegen.cpp - Objects, executables and libraries
//---------------------===//

#include "tra/Target/Codegen.h"

#include "tra/Pipeline/Pipeline.h"
#include "tra/Target/CHeader.h"
#include "tra/Target/LLVMIR.h"
#include "tra/Target/ObjectFile.h"

#include "mlir/IR/SymbolTable.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::tra;

LogicalResult mlir::tra::prefixModelSymbols(ModuleOp module) {
  SymbolTable symbols(module);
  SmallVector<func::FuncOp> defined;
  for (auto func : module.getOps<func::FuncOp>())
    if (!func.isExternal())
      defined.push_back(func);
  for (func::FuncOp func : defined) {
    std::string name = (kModelSymbolPrefix + func.getName()).str();
    if (symbols.lookup(name))
      return func.emitError("cannot rename @")
             << func.getName() << " to @" << name << ": the name is taken";
    if (failed(symbols.rename(func, name)))
      return failure();
  }
  return success();
}

void mlir::tra::setPipelineOptions(TRAToLLVMPipelineOptions &pipeline,
                                   const CodegenOptions &options) {
  pipeline.blas = options.blas;
  pipeline.blasMinFlops = options.blasMinFlops;
  pipeline.boundsChecks = options.boundsChecks;
  pipeline.fuseElementwise = options.fuseElementwise;
  pipeline.maskedBlock = options.maskedBlock;
  pipeline.profile = options.profile;
  if (options.parallelMinWork)
    pipeline.parallelMinWork = *options.parallelMinWork;
  pipeline.target = options.cuda ? "cuda" : "cpu";
  pipeline.gpuChips = options.gpuChips;
}

ProgramTarget mlir::tra::getProgramTarget(const CodegenOptions &options) {
  ProgramTarget target;
  target.numThreads = options.numThreads;
  target.cuda = options.cuda;
  target.hardware = options.hardwareName;
  target.parallelCosts = options.parallelCosts;
  return target;
}

LogicalResult mlir::tra::lowerToLLVMDialect(ModuleOp module, StringRef entry,
                                            const CodegenOptions &options) {
  DialectRegistry registry;
  registerTRACodegenDialects(registry);
  module.getContext()->appendDialectRegistry(registry);

  TRAToLLVMPipelineOptions pipelineOptions;
  setPipelineOptions(pipelineOptions, options);
  pipelineOptions.entry = entry.str();
  PassManager pm(module.getContext());
  buildTRAToLLVMPipeline(pm, pipelineOptions);
  return pm.run(module);
}

FailureOr<EntrySignature>
mlir::tra::lowerEntryToLLVMDialect(ModuleOp module,
                                   const CodegenOptions &options) {
  FailureOr<func::FuncOp> entry = findEntryFunction(module, options.entry);
  if (failed(entry))
    return failure();
  FailureOr<EntrySignature> signature = getEntrySignature(*entry);
  if (failed(signature) || failed(prefixModelSymbols(module)))
    return failure();
  signature->symbol = (*entry).getName().str();
  if (failed(lowerToLLVMDialect(module, signature->symbol, options)))
    return failure();
  // Which outputs may share an input's buffer (tra-alias-entry-outputs).
  Operation *lowered = SymbolTable::lookupSymbolIn(module, signature->symbol);
  if (!lowered)
    return module.emitError("the lowered module has no @") << signature->symbol;
  if (failed(setOutputAliases(lowered, *signature)))
    return failure();
  return signature;
}

LogicalResult mlir::tra::compileToObject(ModuleOp module, StringRef output,
                                         const CodegenOptions &options,
                                         EntrySignature *signatureOut) {
  FailureOr<EntrySignature> signature =
      lowerEntryToLLVMDialect(module, options);
  if (failed(signature))
    return failure();

  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> llvmModule =
      translateToLLVMIR(module, *signature, context, getProgramTarget(options));
  if (!llvmModule)
    return failure();
  if (failed(compileLLVMModuleToObject(module, *llvmModule, options, output)))
    return failure();
  if (signatureOut)
    *signatureOut = std::move(*signature);
  return success();
}

LogicalResult mlir::tra::linkCompiledObject(
    ModuleOp module, StringRef output, const LinkOptions &linkOptions,
    llvm::function_ref<LogicalResult(StringRef object)> compileObject,
    bool sharedLibrary) {
  SmallString<128> object;
  if (std::error_code ec =
          llvm::sys::fs::createTemporaryFile("tra-model", "o", object))
    return module.emitError("cannot create a temporary object file: ")
           << ec.message();
  llvm::FileRemover removeObject(object);
  if (failed(compileObject(object)))
    return failure();
  std::vector<std::string> objects = {std::string(object.str())};
  if (llvm::Error error = sharedLibrary
                              ? linkSharedLibrary(objects, output, linkOptions)
                              : linkExecutable(objects, output, linkOptions))
    return module.emitError(llvm::toString(std::move(error)));
  return success();
}

LogicalResult mlir::tra::compileToExecutable(ModuleOp module, StringRef output,
                                             const CodegenOptions &options) {
  return linkCompiledObject(module, output,
                            getExecutableLinkOptions(options.cuda),
                            [&](StringRef object) {
                              return compileToObject(module, object, options);
                            });
}

LogicalResult mlir::tra::compileToSharedLibrary(ModuleOp module,
                                                StringRef output,
                                                const CodegenOptions &options,
                                                EntrySignature *signature) {
  return linkCompiledObject(
      module, output, getSharedLibraryLinkOptions(options.cuda),
      [&](StringRef object) {
        return compileToObject(module, object, options, signature);
      },
      /*sharedLibrary=*/true);
}

LibraryPaths mlir::tra::getLibraryPaths(StringRef output) {
  StringRef stem = output;
  stem.consume_back(".o");
  LibraryPaths paths;
  paths.object = (stem + ".o").str();
  paths.header = (stem + ".h").str();
  paths.sharedLibrary = (stem + ".so").str();
  return paths;
}

LogicalResult mlir::tra::compileToLibrary(ModuleOp module, StringRef output,
                                          const CodegenOptions &options) {
  LinkOptions linkOptions = getSharedLibraryLinkOptions(options.cuda);
  LibraryPaths paths = getLibraryPaths(output);
  // Nothing is left behind unless all three files were written.
  bool done = false;
  llvm::scope_exit removePartial([&] {
    if (done)
      return;
    for (const std::string &path :
         {paths.object, paths.header, paths.sharedLibrary})
      llvm::sys::fs::remove(path);
  });
  EntrySignature signature;
  if (failed(compileToObject(module, paths.object, options, &signature)))
    return failure();
  if (llvm::Error error =
          linkSharedLibrary({paths.object}, paths.sharedLibrary, linkOptions))
    return module.emitError(llvm::toString(std::move(error)));
  // Written to a temporary file renamed into place.
  if (llvm::Error error =
          llvm::writeToOutput(paths.header, [&](llvm::raw_ostream &os) {
            writeCHeader(signature, os);
            return llvm::Error::success();
          }))
    return module.emitError(paths.header + ": ")
           << llvm::toString(std::move(error));
  done = true;
  return success();
}
