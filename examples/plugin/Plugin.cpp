//===- Plugin.cpp - Entry point of the example pass plugin ----------------===//
//
// `tra-opt --load-pass-plugin=TRAExampleEinsumFlops.so` opens this library
// and calls mlirGetPassPluginInfo(); its callback registers the plugin's
// passes with tra-opt's pass registry.
//
//===----------------------------------------------------------------------===//

#include "Passes.h"

#include "mlir/Tools/Plugins/PassPlugin.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/Compiler.h"

extern "C" LLVM_ATTRIBUTE_WEAK mlir::PassPluginLibraryInfo
mlirGetPassPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "TRAExampleEinsumFlops", LLVM_VERSION_STRING,
          [] { mlir::tra_example::registerTRAExamplePasses(); }};
}
