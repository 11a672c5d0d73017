//===- DedupKernels.cpp - One gpu.module per distinct kernel --------------===//
//
// gpu-kernel-outlining writes one gpu.module per gpu.launch. A model's layers
// are the same code on different weights, so most of those modules are
// identical: LLaMA-7B's 32 layers give 32 copies of each of its kernels, and
// every copy would be compiled by LLVM and ptxas once per chip. This pass
// keeps the first of each set of identical modules (same kernels, the same
// up to the module's name) and points the launches of the others at it.
//
//===----------------------------------------------------------------------===//

#include "tra/Transforms/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"
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

namespace {
struct GpuDedupKernelsPass
    : public tra::impl::GpuDedupKernelsPassBase<GpuDedupKernelsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
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
