//===- LLVMIR.cpp - A lowered module to LLVM IR
//-----------------------------===//

#include "tra/Target/LLVMIR.h"

#include "tra/Target/ProgramDescriptor.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::tra;

/// Removes the argument and result attributes of LLVM functions that LLVM IR
/// translation does not know (`tra.name`, ...), which would only produce
/// warnings.
static void dropForeignArgumentAttributes(ModuleOp module) {
  auto llvmOnly = [](DictionaryAttr attrs) {
    SmallVector<NamedAttribute> kept;
    if (attrs)
      for (NamedAttribute attr : attrs)
        if (attr.getName().strref().starts_with("llvm."))
          kept.push_back(attr);
    return kept;
  };
  module.walk([&](LLVM::LLVMFuncOp op) {
    auto func = cast<FunctionOpInterface>(op.getOperation());
    for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
      func.setArgAttrs(i, llvmOnly(func.getArgAttrDict(i)));
    for (unsigned i = 0, e = func.getNumResults(); i < e; ++i)
      func.setResultAttrs(i, llvmOnly(func.getResultAttrDict(i)));
  });
}

/// Translates `module` to LLVM IR and adds the descriptor.
static std::unique_ptr<llvm::Module>
translateWithDescriptor(ModuleOp module, const EntrySignature &signature,
                        const DistributedSignature *distributed,
                        llvm::LLVMContext &context,
                        const ProgramTarget &target) {
  SmallVector<std::string> opNames;
  if (auto names = module->getAttrOfType<ArrayAttr>("tra.profile_ops"))
    for (auto name : names.getAsRange<StringAttr>())
      opNames.push_back(name.str());
  dropForeignArgumentAttributes(module);
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, context, "tra");
  if (!llvmModule) {
    module.emitError("translation to LLVM IR failed");
    return nullptr;
  }
  if (llvm::Error error = addProgramDescriptor(*llvmModule, signature, opNames,
                                               target, distributed)) {
    module.emitError(llvm::toString(std::move(error)));
    return nullptr;
  }
  std::string problems;
  llvm::raw_string_ostream os(problems);
  if (llvm::verifyModule(*llvmModule, &os)) {
    module.emitError("the generated LLVM IR does not verify: ") << problems;
    return nullptr;
  }
  return llvmModule;
}

std::unique_ptr<llvm::Module>
mlir::tra::translateToLLVMIR(ModuleOp module, const EntrySignature &signature,
                             llvm::LLVMContext &context,
                             const ProgramTarget &target) {
  return translateWithDescriptor(module, signature, nullptr, context, target);
}

std::unique_ptr<llvm::Module> mlir::tra::translateDistributedToLLVMIR(
    ModuleOp module, const DistributedSignature &signature,
    llvm::LLVMContext &context, const ProgramTarget &target) {
  return translateWithDescriptor(module, signature.global, &signature, context,
                                 target);
}
