//===- IrFuzzer.cpp - Fuzzes the tra IR path ------------------------------===//
//
// What `tra-compile --emit=plan --hw hw/cpu-8nodes.json` does with a model
// file, on the input as its text: parse it (with the dialects tra-compile
// registers), verify it, canonicalize a copy and verify that, then plan the
// module for hw/cpu-8nodes.json (plan::planModule) and verify the plan.
// Diagnostics are dropped; a crash, a failed sanitizer check or an assertion
// is what the fuzzer looks for, and a canonicalized or planned module that
// no longer verifies is reported as a crash too.
//
// Inputs over 64 KiB are skipped (planning is the slow part). The text is
// parsed as the tools parse it (tra/Parse/ModuleFile.h): the nesting guard
// first, so deeply nested input exercises the guard, not MLIR's stack.
//
//===----------------------------------------------------------------------===//

#include "tra/Dialect/Plan/IR/PlanDialect.h"
#include "tra/Dialect/TRA/IR/TRADialect.h"
#include "tra/Hardware/Hardware.h"
#include "tra/Optimizer/Pipeline.h"
#include "tra/Parse/ModuleFile.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/Extensions/InlinerExtension.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/Error.h"

#include <cstdio>
#include <cstdlib>
#include <optional>

using namespace mlir;
using namespace mlir::tra;

namespace {

constexpr size_t kMaxInputBytes = 64 * 1024;
const ::tra::hw::HardwareDescription &hardware() {
  static const ::tra::hw::HardwareDescription description = [] {
    auto parsed = ::tra::hw::parseHardwareFile(TRA_FUZZ_HW_FILE);
    if (!parsed) {
      std::fprintf(stderr, "IrFuzzer: %s\n",
                   llvm::toString(parsed.takeError()).c_str());
      std::abort();
    }
    return std::move(*parsed);
  }();
  return description;
}

const DialectRegistry &registry() {
  static const DialectRegistry dialects = [] {
    DialectRegistry r;
    r.insert<TRADialect, plan::PlanDialect, arith::ArithDialect,
             func::FuncDialect, math::MathDialect>();
    func::registerInlinerExtension(r);
    return r;
  }();
  return dialects;
}

void fail(const char *what, ModuleOp module) {
  std::fprintf(stderr, "IrFuzzer: %s\n", what);
  module->print(llvm::errs());
  std::abort();
}

} // namespace

/// LLVM's BumpPtrAllocator poisons memory from inline header code in this
/// instrumented binary while the uninstrumented libMLIR allocates from the
/// same arenas: without this, ASan reports use-after-poison although nothing
/// is wrong (test/lit.cfg.py sets the same for the tools).
extern "C" const char *__asan_default_options() {
  return "allow_user_poisoning=0";
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > kMaxInputBytes)
    return 0;
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  const ::tra::hw::HardwareDescription &hw = hardware();

  // A fresh context per input: nothing uniqued by one input survives into
  // the next, so a crash reproduces from its input alone.
  MLIRContext context(registry(), MLIRContext::Threading::DISABLED);
  context.loadAllAvailableDialects();
  ScopedDiagnosticHandler quiet(&context,
                                [](Diagnostic &) { return success(); });
  // parseModuleText parses a null-terminated copy, as the tools'
  // MemoryBuffers are: MLIR's lexer reads the terminator (parsing
  // libFuzzer's unterminated buffer in place reads one byte past it).
  OwningOpRef<ModuleOp> module = parseModuleText(text, &context, "fuzz.mlir");
  if (!module || failed(verify(*module)))
    return 0;

  OwningOpRef<ModuleOp> canonical = module->clone();
  PassManager pm(&context);
  pm.enableVerifier(false);
  pm.addPass(createCanonicalizerPass());
  if (failed(pm.run(*canonical)))
    fail("canonicalization failed", *canonical);
  if (failed(verify(*canonical)))
    fail("the canonicalized module does not verify", *canonical);

  plan::PlanOptions options;
  auto planned = plan::planModule(*module, hw, options);
  if (!planned) {
    llvm::consumeError(planned.takeError());
    return 0;
  }
  if (failed(verify(*module)))
    fail("the planned module does not verify", *module);
  return 0;
}
