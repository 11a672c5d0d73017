//===- tra-opt.cpp - mlir-opt with the tra dialect ------------------------===//
//
// Parses, verifies, transforms and prints IR that uses the tra dialect and
// the upstream dialects tra programs are written with. Pass plugins
// (--load-pass-plugin=FILE, see docs/Extending.md) add passes to it.
//
//===----------------------------------------------------------------------===//

#include "tra/Autodiff/Passes.h"
#include "tra/Conversion/Passes.h"
#include "tra/Conversion/PlanToComm/PlanToComm.h"
#include "tra/Dialect/Plan/IR/PlanDialect.h"
#include "tra/Dialect/TRA/IR/TRADialect.h"
#include "tra/Optimizer/Passes.h"
#include "tra/Optimizer/Pipeline.h"
#include "tra/Parse/ModuleFile.h"
#include "tra/Pipeline/Pipeline.h"
#include "tra/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/Extensions/InlinerExtension.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/Plugins/PassPlugin.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

/// Loads the pass plugins named by --load-pass-plugin before MlirOptMain
/// parses the command line, so that their passes get flags of their own
/// (`--tra-example-einsum-flops`) as built-in passes do; MlirOptMain alone
/// loads plugins while it parses, too late for that, and ignores a plugin
/// that fails to load. Loading the same plugin again there is harmless.
static bool preloadPassPlugins(int argc, char **argv) {
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef arg(argv[i]);
    if (arg == "--")
      break;
    if (!arg.consume_front("--") && !arg.consume_front("-"))
      continue;
    std::string path;
    if (arg.consume_front("load-pass-plugin="))
      path = arg.str();
    else if (arg == "load-pass-plugin" && i + 1 < argc)
      path = argv[++i];
    else
      continue;
    llvm::Expected<mlir::PassPlugin> plugin = mlir::PassPlugin::load(path);
    if (!plugin) {
      llvm::errs() << argv[0] << ": cannot load pass plugin '" << path
                   << "': " << llvm::toString(plugin.takeError()) << "\n";
      return false;
    }
    plugin->registerPassRegistryCallbacks();
  }
  return true;
}

/// MlirOptMain on the input file, after checking that its nesting is one
/// MLIR's recursive parser can read (tra/Parse/ModuleFile.h).
static int runOpt(int argc, char **argv, mlir::DialectRegistry &registry) {
  llvm::InitLLVM init(argc, argv);
  auto [inputFilename, outputFilename] = mlir::registerAndParseCLIOptions(
      argc, argv, "tra optimizer driver\n", registry);
  mlir::MlirOptMainConfig config =
      mlir::MlirOptMainConfig::createFromCLOptions();
  if (config.shouldShowDialects() || config.shouldListPasses())
    return mlir::asMainReturnCode(mlir::MlirOptMain(
        llvm::outs(), llvm::MemoryBuffer::getMemBuffer(""), registry, config));
  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> file =
      mlir::openInputFile(inputFilename, &error);
  if (!file) {
    llvm::errs() << argv[0] << ": " << error << "\n";
    return 1;
  }
  if (std::optional<size_t> at =
          mlir::tra::findExcessiveNesting(file->getBuffer())) {
    llvm::SourceMgr sourceMgr;
    unsigned id = sourceMgr.AddNewSourceBuffer(
        llvm::MemoryBuffer::getMemBuffer(file->getMemBufferRef(),
                                         /*RequiresNullTerminator=*/false),
        llvm::SMLoc());
    sourceMgr.PrintMessage(
        llvm::errs(),
        llvm::SMLoc::getFromPointer(
            sourceMgr.getMemoryBuffer(id)->getBufferStart() + *at),
        llvm::SourceMgr::DK_Error, mlir::tra::describeExcessiveNesting());
    return 1;
  }
  std::unique_ptr<llvm::ToolOutputFile> output =
      mlir::openOutputFile(outputFilename, &error);
  if (!output) {
    llvm::errs() << argv[0] << ": " << error << "\n";
    return 1;
  }
  if (mlir::failed(
          mlir::MlirOptMain(output->os(), std::move(file), registry, config)))
    return 1;
  output->keep();
  return 0;
}

int main(int argc, char **argv) {
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  mlir::registerInlinerPass();
  mlir::registerSymbolDCEPass();
  mlir::tra::registerAutodiffPasses();
  mlir::tra::registerTRAConversionPasses();
  mlir::tra::registerTRATransformsPasses();
  mlir::tra::registerOptimizerPasses();
  mlir::tra::plan::registerPlanningPipeline();
  mlir::tra::registerTRAToLLVMPipeline();
  mlir::bufferization::registerOneShotBufferizePass();
  // The upstream GPU passes of the target=cuda pipeline, to run its steps
  // one by one.
  mlir::registerGPUPasses();
  mlir::registerConvertGpuOpsToNVVMOpsPass();
  mlir::registerGpuToLLVMConversionPass();
  mlir::registerReconcileUnrealizedCastsPass();
  if (!preloadPassPlugins(argc, argv))
    return 1;

  mlir::DialectRegistry registry;
  registry.insert<mlir::tra::TRADialect, mlir::tra::plan::PlanDialect,
                  mlir::arith::ArithDialect, mlir::func::FuncDialect,
                  mlir::math::MathDialect, mlir::tensor::TensorDialect>();
  mlir::func::registerInlinerExtension(registry);
  mlir::tra::registerTRACodegenDialects(registry);
  mlir::tra::registerDistributeDialects(registry);
  return runOpt(argc, argv, registry);
}
