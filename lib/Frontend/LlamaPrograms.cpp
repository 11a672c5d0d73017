//===- LlamaPrograms.cpp - Compiled step programs of a LLaMA model --------===//

#include "tra/Frontend/LlamaPrograms.h"

#include "tra/Frontend/Llama.h"

#include "mlir/IR/Verifier.h"

using namespace mlir;
using namespace mlir::tra;

llvm::Expected<CompiledProgram>
mlir::tra::compileLlamaStep(MLIRContext &context,
                            const ::tra::rt::LlamaParams &params, int64_t seq,
                            int64_t threads, StringRef cacheDirectory,
                            StringRef keyExtra, llvm::raw_ostream &notes) {
  if (seq < 1 || seq > params.maxSeqLen)
    return llvm::createStringError(
        "a step of " + std::to_string(seq) +
        " tokens does not fit the KV cache of " +
        std::to_string(params.maxSeqLen) + " positions");
  OwningOpRef<ModuleOp> module = buildLlamaModule(&context, params, seq);
  if (failed(verify(*module)))
    return llvm::createStringError(
        "internal error: the generated model does not verify");
  CodegenOptions options;
  options.entry = "forward";
  options.numThreads = threads;
  options.profile = false;
  return loadOrCompileProgram(*module, options, cacheDirectory, keyExtra,
                              notes);
}
