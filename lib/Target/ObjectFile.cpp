//===- ObjectFile.cpp - LLVM IR to a native object file
//---------------------===//

#include "tra/Target/ObjectFile.h"

#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"

using namespace mlir;
using namespace mlir::tra;

llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
mlir::tra::createTargetMachine(const CodegenOptions &options) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  llvm::Triple triple(llvm::sys::getProcessTriple());
  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return llvm::createStringError("no target for " + triple.str() + ": " +
                                   error);
  std::string cpu =
      options.cpu.empty() ? llvm::sys::getHostCPUName().str() : options.cpu;
  std::string features = options.features;
  if (features.empty() && options.cpu.empty()) {
    llvm::SubtargetFeatures host;
    for (auto &feature : llvm::sys::getHostCPUFeatures())
      host.AddFeature(feature.first(), feature.second);
    features = host.getString();
  }
  llvm::CodeGenOptLevel level =
      options.optLevel >= 3   ? llvm::CodeGenOptLevel::Aggressive
      : options.optLevel == 0 ? llvm::CodeGenOptLevel::None
                              : llvm::CodeGenOptLevel::Default;
  std::unique_ptr<llvm::TargetMachine> machine(
      target->createTargetMachine(triple, cpu, features, llvm::TargetOptions(),
                                  llvm::Reloc::PIC_, std::nullopt, level));
  if (!machine)
    return llvm::createStringError("cannot create a target machine for " +
                                   triple.str() + " (" + cpu + ")");
  return machine;
}

void mlir::tra::optimizeLLVMModule(llvm::Module &module,
                                   llvm::TargetMachine &machine,
                                   unsigned optLevel) {
  module.setDataLayout(machine.createDataLayout());
  module.setTargetTriple(machine.getTargetTriple());
  if (optLevel == 0)
    return;
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder builder(&machine);
  builder.registerModuleAnalyses(mam);
  builder.registerCGSCCAnalyses(cgam);
  builder.registerFunctionAnalyses(fam);
  builder.registerLoopAnalyses(lam);
  builder.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::OptimizationLevel level = optLevel == 1   ? llvm::OptimizationLevel::O1
                                  : optLevel == 2 ? llvm::OptimizationLevel::O2
                                                  : llvm::OptimizationLevel::O3;
  builder.buildPerModuleDefaultPipeline(level).run(module, mam);
}

llvm::Error mlir::tra::emitObjectFile(llvm::Module &module,
                                      llvm::TargetMachine &machine,
                                      StringRef path) {
  std::error_code ec;
  llvm::ToolOutputFile out(path, ec, llvm::sys::fs::OF_None);
  if (ec)
    return llvm::createStringError(path + ": " + ec.message());
  llvm::legacy::PassManager pm;
  if (machine.addPassesToEmitFile(pm, out.os(), nullptr,
                                  llvm::CodeGenFileType::ObjectFile))
    return llvm::createStringError("the target cannot emit object files");
  pm.run(module);
  out.os().flush();
  if (out.os().has_error())
    return llvm::createStringError(path + ": write error");
  out.keep();
  return llvm::Error::success();
}

LogicalResult
mlir::tra::compileLLVMModuleToObject(ModuleOp module, llvm::Module &llvmModule,
                                     const CodegenOptions &options,
                                     StringRef path) {
  llvm::Expected<std::unique_ptr<llvm::TargetMachine>> machine =
      createTargetMachine(options);
  if (!machine)
    return module.emitError(llvm::toString(machine.takeError()));
  optimizeLLVMModule(llvmModule, **machine, options.optLevel);
  if (llvm::Error error = emitObjectFile(llvmModule, **machine, path))
    return module.emitError(llvm::toString(std::move(error)));
  return success();
}
