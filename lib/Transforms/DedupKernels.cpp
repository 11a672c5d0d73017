//===- DedupKernels.cpp - One gpu.module per distinct kernel --------------===//
//
// gpu-kernel-outlining writes one gpu.module per gpu.launch. A model's layers
// are the same code on different weights, so most of those modules are
// identical: LLaMA-7B's 32 layers give 32 copies of each of its kernels, and
// every copy would be compiled by LLVM and ptxas once per chip. This pass
// keeps the first of each set of identical modules (same kernels, the same
// up to the module's name) and points the launches of the others at it.
//
// It also gives kernels names that PTX accepts: MLIR symbols may contain
// characters PTX identifiers may not (the rank functions of a distributed
// program are `@f.rank0`, ..., and outlining names their kernels after
// them), so every character other than letters, digits, `_` and `$` becomes
// `_`.
//
//===----------------------------------------------------------------------===//

#include "tra/Transforms/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir {
namespace tra {
#define GEN_PASS_DEF_GPUDEDUPKERNELSPASS
#include "tra/Transforms/Passes.h.inc"
} // namespace tra
} // namespace mlir

using namespace mlir;

/// The text of `module`'s body: its kernels, without the module's name.
static std::string getBodyText(gpu::GPUModuleOp module) {
  std::string text;
  llvm::raw_string_ostream os(text);
  OpPrintingFlags flags;
  flags.enableDebugInfo(false);
  // Numbered within the module alone: printing it must not walk the
  // whole program.
  flags.useLocalScope();
  for (Operation &op : module.getBody()->getOperations())
    op.print(os, flags);
  if (Attribute targets = module.getTargetsAttr())
    os << targets;
  return text;
}

/// `name` with every character PTX identifiers do not allow replaced by
/// `_` (and a leading digit prefixed by `_`).
static std::string getPtxName(StringRef name) {
  std::string result;
  for (char c : name)
    result.push_back(llvm::isAlnum(c) || c == '_' || c == '$' ? c : '_');
  if (!result.empty() && llvm::isDigit(result[0]))
    result.insert(result.begin(), '_');
  return result;
}

/// Renames the kernels of `module` whose names PTX rejects, and the
/// launches that name them.
static void renameForPtx(ModuleOp module) {
  // (module, old kernel name) -> new kernel name.
  DenseMap<std::pair<StringAttr, StringAttr>, StringAttr> renamed;
  for (auto kernels : module.getOps<gpu::GPUModuleOp>()) {
    SymbolTable symbols(kernels);
    for (auto func : kernels.getOps<gpu::GPUFuncOp>()) {
      std::string name = getPtxName(func.getName());
      if (name == func.getName())
        continue;
      std::string unique = name;
      for (unsigned n = 1; symbols.lookup(unique); ++n)
        unique = name + "_" + std::to_string(n);
      StringAttr old = func.getNameAttr();
      StringAttr fresh = StringAttr::get(module.getContext(), unique);
      SymbolTable::setSymbolName(func, fresh);
      renamed[{kernels.getNameAttr(), old}] = fresh;
    }
  }
  if (renamed.empty())
    return;
  module.walk([&](gpu::LaunchFuncOp launch) {
    auto it =
        renamed.find({launch.getKernelModuleName(), launch.getKernelName()});
    if (it != renamed.end())
      launch.setKernelAttr(SymbolRefAttr::get(
          launch.getKernelModuleName(), {FlatSymbolRefAttr::get(it->second)}));
  });
}

namespace {
struct GpuDedupKernelsPass
    : public tra::impl::GpuDedupKernelsPassBase<GpuDedupKernelsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    renameForPtx(module);
    llvm::StringMap<StringAttr> firstByText;
    llvm::DenseMap<StringAttr, StringAttr> replacement;
    SmallVector<gpu::GPUModuleOp> duplicates;
    for (auto kernels : module.getOps<gpu::GPUModuleOp>()) {
      auto [it, inserted] =
          firstByText.try_emplace(getBodyText(kernels), kernels.getNameAttr());
      if (inserted)
        continue;
      replacement[kernels.getNameAttr()] = it->second;
      duplicates.push_back(kernels);
    }
    if (duplicates.empty())
      return;
    module.walk([&](gpu::LaunchFuncOp launch) {
      SymbolRefAttr kernel = launch.getKernel();
      auto it = replacement.find(kernel.getRootReference());
      if (it == replacement.end())
        return;
      launch.setKernelAttr(
          SymbolRefAttr::get(it->second, kernel.getNestedReferences()));
    });
    // Launches are the only users of kernel modules: once they are
    // redirected the duplicates are dead. (Asking the symbol table per
    // module would walk the whole program once per duplicate.)
    for (gpu::GPUModuleOp kernels : duplicates)
      kernels.erase();
  }
};
} // namespace
