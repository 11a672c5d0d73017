//===- Distributed.cpp - Programs that run as one MPI job
//-------------------===//

#include "tra/Target/Distributed.h"

#include "tra/Conversion/PlanToComm/PlanToComm.h"
#include "tra/Dialect/Comm/IR/Comm.h"
#include "tra/Dialect/Plan/IR/PlanDialect.h"
#include "tra/Pipeline/Pipeline.h"
#include "tra/Target/Codegen.h"
#include "tra/Target/LLVMIR.h"
#include "tra/Target/Link.h"
#include "tra/Target/ObjectFile.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"

using namespace mlir;
using namespace mlir::tra;

/// Reads the tile attributes of argument/result `i` of a rank function.
static FailureOr<RankTile> getRankTile(func::FuncOp func, DictionaryAttr attrs,
                                       const EntryTensor &local,
                                       ArrayRef<EntryTensor> global,
                                       StringRef what) {
  RankTile tile;
  auto it = llvm::find_if(
      global, [&](const EntryTensor &t) { return t.name == local.name; });
  if (it == global.end())
    return func.emitError("rank function ")
           << what << " '" << local.name << "' is not an entry " << what;
  tile.tensor = it - global.begin();
  auto offsets = dyn_cast_if_present<DenseI64ArrayAttr>(
      attrs ? attrs.get(kOffsetsAttrName) : Attribute());
  if (!offsets || offsets.size() != int64_t(local.shape.size()))
    return func.emitError("rank function ")
           << what << " '" << local.name << "' has no valid "
           << kOffsetsAttrName;
  tile.offsets.assign(offsets.asArrayRef().begin(), offsets.asArrayRef().end());
  if (auto owner = dyn_cast_if_present<BoolAttr>(
          attrs ? attrs.get(kOwnerAttrName) : Attribute()))
    tile.owner = owner.getValue();
  return tile;
}

FailureOr<DistributedSignature>
mlir::tra::lowerDistributedToLLVMDialect(ModuleOp module,
                                         const CodegenOptions &options) {
  MLIRContext *ctx = module.getContext();
  DialectRegistry registry;
  registerTRACodegenDialects(registry);
  registerDistributeDialects(registry);
  ctx->appendDialectRegistry(registry);

  FailureOr<func::FuncOp> entry = findEntryFunction(module, options.entry);
  if (failed(entry))
    return failure();
  auto devices = (*entry)->getAttrOfType<IntegerAttr>(
      plan::PlanDialect::kNumDevicesAttrName);
  if (!devices)
    return (*entry).emitError("@")
           << (*entry).getName()
           << " is not planned: run tra-decompose before distributed code "
              "generation";
  DistributedSignature signature;
  FailureOr<EntrySignature> global = getEntrySignature(*entry);
  if (failed(global))
    return failure();
  signature.global = std::move(*global);
  std::string name = (*entry).getName().str();
  // Only the entry is compiled.
  for (auto func : llvm::make_early_inc_range(module.getOps<func::FuncOp>()))
    if (func != *entry && !func.isExternal())
      func.erase();

  // The fingerprint: the planned program, as every rank compiled it.
  {
    std::string text;
    llvm::raw_string_ostream os(text);
    module.print(os, OpPrintingFlags().elideLargeElementsAttrs(0));
    signature.fingerprint = int64_t(llvm::xxh3_64bits(text) >> 1);
  }

  PassManager localize(ctx);
  LocalizeOptions localizeOptions;
  localizeOptions.blockingMoves = options.blockingMoves;
  localize.addPass(createLocalize(localizeOptions));
  if (failed(localize.run(module)))
    return failure();

  int64_t numRanks = devices.getInt();
  SmallVector<std::string> rankNames;
  for (int64_t r = 0; r < numRanks; ++r) {
    std::string rankName = getRankFunctionName(name, r);
    auto func = module.lookupSymbol<func::FuncOp>(rankName);
    if (!func)
      return module.emitError("tra-localize did not produce @") << rankName;
    RankSignature rank;
    FailureOr<EntrySignature> local = getEntrySignature(func);
    if (failed(local))
      return failure();
    rank.local = std::move(*local);
    for (auto [i, tensor] : llvm::enumerate(rank.local.inputs)) {
      FailureOr<RankTile> tile =
          getRankTile(func, func.getArgAttrDict(i), tensor,
                      signature.global.inputs, "argument");
      if (failed(tile))
        return failure();
      rank.inputs.push_back(std::move(*tile));
    }
    for (auto [i, tensor] : llvm::enumerate(rank.local.outputs)) {
      FailureOr<RankTile> tile =
          getRankTile(func, func.getResultAttrDict(i), tensor,
                      signature.global.outputs, "result");
      if (failed(tile))
        return failure();
      rank.outputs.push_back(std::move(*tile));
    }
    signature.ranks.push_back(std::move(rank));
    rankNames.push_back(rankName);
  }
  // Ranks whose programs are the same code (replicated work, or the same
  // moves with the same partners) share one function: only the tile
  // offsets differ, and those are in the descriptor.
  llvm::StringMap<std::string> firstWithBody;
  std::vector<std::string> implementation(numRanks);
  for (int64_t r = 0; r < numRanks; ++r) {
    auto func = module.lookupSymbol<func::FuncOp>(rankNames[r]);
    OwningOpRef<func::FuncOp> copy = func.clone();
    copy->setSymName("rank");
    (*copy)->removeAttr(comm::CommDialect::kRankAttrName);
    for (unsigned i = 0, e = copy->getNumArguments(); i < e; ++i)
      copy->setArgAttrs(i, ArrayRef<NamedAttribute>{});
    for (unsigned i = 0, e = copy->getNumResults(); i < e; ++i)
      copy->setResultAttrs(i, ArrayRef<NamedAttribute>{});
    std::string text;
    llvm::raw_string_ostream os(text);
    copy->print(os, OpPrintingFlags().elideLargeElementsAttrs(0));
    auto [it, inserted] = firstWithBody.try_emplace(text, rankNames[r]);
    implementation[r] = it->second;
    if (!inserted)
      func.erase();
  }
  if (failed(prefixModelSymbols(module)))
    return failure();
  for (int64_t r = 0; r < numRanks; ++r)
    signature.ranks[r].local.symbol =
        (kModelSymbolPrefix + implementation[r]).str();

  // On GPUs every tile is in device memory and every move a runtime/cuda
  // (NCCL) call.
  if (options.cuda)
    module->setAttr(comm::CommDialect::kDeviceAttrName,
                    StringAttr::get(ctx, "cuda"));
  TRAToLLVMPipelineOptions pipelineOptions;
  setPipelineOptions(pipelineOptions, options);
  pipelineOptions.profile = false;
  PassManager pm(ctx);
  buildTRAToLinalgStage(pm, pipelineOptions);
  buildBufferizationStage(pm, pipelineOptions);
  if (options.cuda) {
    buildGPUStage(pm, pipelineOptions);
  } else {
    pm.addPass(createConvertMPIToLLVM());
    buildLLVMStage(pm, pipelineOptions);
  }
  if (failed(pm.run(module)))
    return failure();
  return FailureOr<DistributedSignature>(std::move(signature));
}

LogicalResult
mlir::tra::compileDistributedToObject(ModuleOp module, StringRef output,
                                      const CodegenOptions &options) {
  FailureOr<DistributedSignature> signature =
      lowerDistributedToLLVMDialect(module, options);
  if (failed(signature))
    return failure();
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> llvmModule = translateDistributedToLLVMIR(
      module, *signature, context, getProgramTarget(options));
  if (!llvmModule)
    return failure();
  return compileLLVMModuleToObject(module, *llvmModule, options, output);
}

/// Compiles a planned `module` and links it into the executable or, with
/// `sharedLibrary`, the shared library `output`.
static LogicalResult linkDistributed(ModuleOp module, StringRef output,
                                     const CodegenOptions &options,
                                     bool sharedLibrary) {
  LinkOptions linkOptions = getDistributedLinkOptions(options.cuda);
  if (linkOptions.runtimeLibraries.empty())
    return module.emitError(
        options.cuda ? "this compiler was built without the MPI runtime "
                       "(runtime/mpi) or the CUDA runtime (runtime/cuda): "
                       "distributed GPU programs cannot be linked"
                     : "this compiler was built without the MPI runtime "
                       "(runtime/mpi): distributed programs cannot be "
                       "linked");
  if (sharedLibrary && options.cuda) {
    // A GPU rank program calls MPI nowhere (its moves are runtime/cuda's):
    // it links like a one-GPU library.
    linkOptions = getCudaSharedLibraryLinkOptions();
  } else if (sharedLibrary) {
    // The rank programs' MPI calls (the mpi dialect's MPI_* and the
    // tra_mpi_* runtime) stay undefined in the library: they bind to the MPI
    // runtime of the process that loads it, so that both share one MPI
    // state. The MPI library is linked so that MPI_* have a provider.
    LinkOptions shared = getDefaultSharedLibraryLinkOptions();
    shared.systemLibraries = std::move(linkOptions.systemLibraries);
    linkOptions = std::move(shared);
  }
  return linkCompiledObject(
      module, output, linkOptions,
      [&](StringRef object) {
        return compileDistributedToObject(module, object, options);
      },
      sharedLibrary);
}

LogicalResult
mlir::tra::compileDistributedToExecutable(ModuleOp module, StringRef output,
                                          const CodegenOptions &options) {
  return linkDistributed(module, output, options, /*sharedLibrary=*/false);
}

LogicalResult
mlir::tra::compileDistributedToSharedLibrary(ModuleOp module, StringRef output,
                                             const CodegenOptions &options) {
  return linkDistributed(module, output, options, /*sharedLibrary=*/true);
}
