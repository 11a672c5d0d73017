//===- ProgramDescriptor.cpp - The runtime ABI descriptor in LLVM IR
//--------===//

#include "tra/Target/ProgramDescriptor.h"

#include "tra/Exec/ABI.h"

#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"

using namespace mlir;
using namespace mlir::tra;

namespace {
/// Builds the program descriptor of `signature` into an LLVM module.
class DescriptorBuilder {
public:
  DescriptorBuilder(llvm::Module &module)
      : module(module), ctx(module.getContext()),
        ptrType(llvm::PointerType::getUnqual(ctx)),
        i64Type(llvm::Type::getInt64Ty(ctx)) {}

  /// Adds `tra_exec_program` and its `run` function, with `opNames` as the
  /// profiled ops.
  llvm::Error build(const EntrySignature &signature,
                    ArrayRef<std::string> opNames, const ProgramTarget &target,
                    const DistributedSignature *distributed);

private:
  llvm::Constant *i64(int64_t v) { return llvm::ConstantInt::get(i64Type, v); }
  llvm::Constant *privateGlobal(llvm::Constant *init, const llvm::Twine &name);
  llvm::Constant *tensorTable(ArrayRef<EntryTensor> tensors, StringRef kind);
  llvm::Constant *stringTable(ArrayRef<std::string> strings, StringRef kind);
  llvm::Value *buildDescriptor(llvm::IRBuilder<> &b, llvm::Value *data,
                               ArrayRef<int64_t> shape);
  llvm::Function *buildRun(const EntrySignature &signature,
                           llvm::Function *entry);
  /// The C interface function of `signature`'s entry, checked against it.
  llvm::Expected<llvm::Function *> getEntry(const EntrySignature &signature);
  llvm::Constant *tileTable(ArrayRef<RankTile> tiles,
                            ArrayRef<EntryTensor> local, StringRef kind);
  llvm::Expected<llvm::Constant *>
  rankTable(const DistributedSignature &distributed);
  llvm::Constant *i64Array(ArrayRef<int64_t> values, const llvm::Twine &name);
  /// The `outputAliases` table of `outputs`: null if none shares a buffer.
  llvm::Constant *outputAliases(ArrayRef<EntryTensor> outputs);

  llvm::Module &module;
  llvm::LLVMContext &ctx;
  llvm::PointerType *ptrType;
  llvm::IntegerType *i64Type;
};
} // namespace

llvm::Constant *DescriptorBuilder::privateGlobal(llvm::Constant *init,
                                                 const llvm::Twine &name) {
  return new llvm::GlobalVariable(module, init->getType(), /*isConstant=*/true,
                                  llvm::GlobalValue::PrivateLinkage, init,
                                  name);
}

llvm::Constant *DescriptorBuilder::tensorTable(ArrayRef<EntryTensor> tensors,
                                               StringRef kind) {
  if (tensors.empty())
    return llvm::ConstantPointerNull::get(ptrType);
  auto *infoType =
      llvm::StructType::get(ctx, {ptrType, i64Type, i64Type, ptrType, i64Type});
  SmallVector<llvm::Constant *> infos;
  for (auto [i, tensor] : llvm::enumerate(tensors)) {
    std::string prefix = ("tra_exec." + kind + "." + llvm::Twine(i)).str();
    llvm::Constant *name = privateGlobal(
        llvm::ConstantDataArray::getString(ctx, tensor.name), prefix + ".name");
    SmallVector<uint64_t> extents(tensor.shape.begin(), tensor.shape.end());
    llvm::Constant *shape =
        extents.empty()
            ? static_cast<llvm::Constant *>(
                  llvm::ConstantPointerNull::get(ptrType))
            : privateGlobal(llvm::ConstantDataArray::get(ctx, extents),
                            prefix + ".shape");
    infos.push_back(llvm::ConstantStruct::get(
        infoType, {name, i64(static_cast<int64_t>(tensor.elementType)),
                   i64(tensor.shape.size()), shape, i64(tensor.tier)}));
  }
  auto *arrayType = llvm::ArrayType::get(infoType, infos.size());
  return privateGlobal(llvm::ConstantArray::get(arrayType, infos),
                       "tra_exec." + kind);
}

/// Returns the address of element `index` of the array field `field` of the
/// struct of type `type` at `base`.
static llvm::Value *fieldElement(llvm::IRBuilder<> &b, llvm::StructType *type,
                                 llvm::Value *base, unsigned field,
                                 unsigned index) {
  return b.CreateInBoundsGEP(
      type, base, {b.getInt32(0), b.getInt32(field), b.getInt32(index)});
}

llvm::Constant *DescriptorBuilder::stringTable(ArrayRef<std::string> strings,
                                               StringRef kind) {
  if (strings.empty())
    return llvm::ConstantPointerNull::get(ptrType);
  SmallVector<llvm::Constant *> pointers;
  for (auto [i, text] : llvm::enumerate(strings))
    pointers.push_back(
        privateGlobal(llvm::ConstantDataArray::getString(ctx, text),
                      "tra_exec." + kind + "." + llvm::Twine(i)));
  auto *arrayType = llvm::ArrayType::get(ptrType, pointers.size());
  return privateGlobal(llvm::ConstantArray::get(arrayType, pointers),
                       "tra_exec." + kind);
}

llvm::Value *DescriptorBuilder::buildDescriptor(llvm::IRBuilder<> &b,
                                                llvm::Value *data,
                                                ArrayRef<int64_t> shape) {
  // The memref descriptor of the LLVM dialect: allocated and aligned
  // pointers, offset, then sizes and strides for a non-0-d memref.
  unsigned rank = shape.size();
  SmallVector<llvm::Type *> fields = {ptrType, ptrType, i64Type};
  if (rank) {
    fields.push_back(llvm::ArrayType::get(i64Type, rank));
    fields.push_back(llvm::ArrayType::get(i64Type, rank));
  }
  auto *type = llvm::StructType::get(ctx, fields);
  llvm::Value *desc = b.CreateAlloca(type);
  b.CreateStore(data, b.CreateStructGEP(type, desc, 0));
  b.CreateStore(data, b.CreateStructGEP(type, desc, 1));
  b.CreateStore(i64(0), b.CreateStructGEP(type, desc, 2));
  int64_t stride = 1;
  for (int d = rank - 1; d >= 0; --d) {
    b.CreateStore(i64(shape[d]), fieldElement(b, type, desc, 3, d));
    b.CreateStore(i64(stride), fieldElement(b, type, desc, 4, d));
    stride *= shape[d];
  }
  return desc;
}

llvm::Function *DescriptorBuilder::buildRun(const EntrySignature &signature,
                                            llvm::Function *entry) {
  auto *type = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), {ptrType},
                                       /*isVarArg=*/false);
  auto *run = llvm::Function::Create(type, llvm::GlobalValue::InternalLinkage,
                                     "tra_exec.run", module);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", run));
  SmallVector<llvm::Value *> args;
  unsigned slot = 0;
  for (ArrayRef<EntryTensor> tensors :
       {ArrayRef(signature.inputs), ArrayRef(signature.outputs)}) {
    for (const EntryTensor &tensor : tensors) {
      llvm::Value *address =
          b.CreateConstInBoundsGEP1_64(ptrType, run->getArg(0), slot++);
      llvm::Value *data = b.CreateLoad(ptrType, address);
      args.push_back(buildDescriptor(b, data, tensor.shape));
    }
  }
  b.CreateCall(entry, args);
  b.CreateRetVoid();
  return run;
}

llvm::Expected<llvm::Function *>
DescriptorBuilder::getEntry(const EntrySignature &signature) {
  std::string cifaceName =
      "_mlir_ciface_" +
      (signature.symbol.empty() ? signature.function : signature.symbol);
  llvm::Function *entry = module.getFunction(cifaceName);
  if (!entry)
    return llvm::createStringError(
        "the lowered module has no C interface function " + cifaceName);
  size_t numBuffers = signature.inputs.size() + signature.outputs.size();
  if (entry->arg_size() != numBuffers || !entry->getReturnType()->isVoidTy())
    return llvm::createStringError(
        cifaceName + " takes " + std::to_string(entry->arg_size()) +
        " arguments, expected " + std::to_string(numBuffers) +
        " buffers and no result");
  return entry;
}

llvm::Constant *DescriptorBuilder::i64Array(ArrayRef<int64_t> values,
                                            const llvm::Twine &name) {
  if (values.empty())
    return llvm::ConstantPointerNull::get(ptrType);
  SmallVector<uint64_t> data(values.begin(), values.end());
  return privateGlobal(llvm::ConstantDataArray::get(ctx, data), name);
}

llvm::Constant *
DescriptorBuilder::outputAliases(ArrayRef<EntryTensor> outputs) {
  SmallVector<int64_t> aliases;
  for (const EntryTensor &output : outputs)
    aliases.push_back(output.aliasedInput);
  if (llvm::all_of(aliases, [](int64_t input) { return input == -1; }))
    return llvm::ConstantPointerNull::get(ptrType);
  return i64Array(aliases, "tra_exec.output_aliases");
}

llvm::Constant *DescriptorBuilder::tileTable(ArrayRef<RankTile> tiles,
                                             ArrayRef<EntryTensor> local,
                                             StringRef kind) {
  if (tiles.empty())
    return llvm::ConstantPointerNull::get(ptrType);
  auto *tileType =
      llvm::StructType::get(ctx, {i64Type, ptrType, ptrType, i64Type});
  SmallVector<llvm::Constant *> entries;
  for (auto [i, tile] : llvm::enumerate(tiles)) {
    std::string prefix = ("tra_exec." + kind + "." + llvm::Twine(i)).str();
    entries.push_back(llvm::ConstantStruct::get(
        tileType,
        {i64(tile.tensor), i64Array(tile.offsets, prefix + ".offsets"),
         i64Array(local[i].shape, prefix + ".shape"),
         i64(tile.owner ? 1 : 0)}));
  }
  return privateGlobal(
      llvm::ConstantArray::get(llvm::ArrayType::get(tileType, entries.size()),
                               entries),
      "tra_exec." + kind);
}

llvm::Expected<llvm::Constant *>
DescriptorBuilder::rankTable(const DistributedSignature &distributed) {
  auto *rankType =
      llvm::StructType::get(ctx, {i64Type, ptrType, i64Type, ptrType, ptrType});
  SmallVector<llvm::Constant *> ranks;
  for (auto [r, rank] : llvm::enumerate(distributed.ranks)) {
    llvm::Expected<llvm::Function *> entry = getEntry(rank.local);
    if (!entry)
      return entry.takeError();
    llvm::Function *run = buildRun(rank.local, *entry);
    std::string prefix = ("tra_exec.rank" + llvm::Twine(r)).str();
    ranks.push_back(llvm::ConstantStruct::get(
        rankType,
        {i64(rank.inputs.size()),
         tileTable(rank.inputs, rank.local.inputs, prefix + ".inputs"),
         i64(rank.outputs.size()),
         tileTable(rank.outputs, rank.local.outputs, prefix + ".outputs"),
         run}));
  }
  return privateGlobal(llvm::ConstantArray::get(
                           llvm::ArrayType::get(rankType, ranks.size()), ranks),
                       "tra_exec.ranks");
}

llvm::Error DescriptorBuilder::build(const EntrySignature &signature,
                                     ArrayRef<std::string> opNames,
                                     const ProgramTarget &target,
                                     const DistributedSignature *distributed) {
  llvm::Constant *run = llvm::ConstantPointerNull::get(ptrType);
  llvm::Constant *ranks = llvm::ConstantPointerNull::get(ptrType);
  if (distributed) {
    llvm::Expected<llvm::Constant *> table = rankTable(*distributed);
    if (!table)
      return table.takeError();
    ranks = *table;
  } else {
    llvm::Expected<llvm::Function *> entry = getEntry(signature);
    if (!entry)
      return entry.takeError();
    run = buildRun(signature, *entry);
  }
  llvm::Constant *entryName =
      privateGlobal(llvm::ConstantDataArray::getString(ctx, signature.function),
                    "tra_exec.entry_name");
  // The fields of TraExecProgram, in order.
  auto *doubleType = llvm::Type::getDoubleTy(ctx);
  auto f64 = [&](double v) { return llvm::ConstantFP::get(doubleType, v); };
  const ::tra::exec::ParallelCosts costs = target.parallelCosts.valid()
                                               ? target.parallelCosts
                                               : ::tra::exec::ParallelCosts{};
  llvm::Constant *hardware =
      privateGlobal(llvm::ConstantDataArray::getString(ctx, target.hardware),
                    "tra_exec.hardware");
  auto *programType = llvm::StructType::get(
      ctx, {i64Type, ptrType, i64Type, ptrType, i64Type, ptrType, ptrType,
            i64Type, i64Type, ptrType, i64Type, ptrType, i64Type, i64Type,
            ptrType, ptrType, doubleType, doubleType, doubleType});
  llvm::Constant *program = llvm::ConstantStruct::get(
      programType,
      {i64(TRA_EXEC_ABI_VERSION), entryName, i64(signature.inputs.size()),
       tensorTable(signature.inputs, "inputs"), i64(signature.outputs.size()),
       tensorTable(signature.outputs, "outputs"), run, i64(target.numThreads),
       i64(opNames.size()), stringTable(opNames, "ops"),
       i64(distributed ? distributed->ranks.size() : 0), ranks,
       i64(distributed ? distributed->fingerprint : 0),
       i64(target.cuda ? TRA_EXEC_CUDA : TRA_EXEC_HOST), hardware,
       distributed ? llvm::ConstantPointerNull::get(ptrType)
                   : outputAliases(signature.outputs),
       f64(costs.syncSeconds), f64(costs.coreBytesPerSecond),
       f64(costs.coreMacsPerSecond)});
  new llvm::GlobalVariable(module, programType, /*isConstant=*/true,
                           llvm::GlobalValue::ExternalLinkage, program,
                           "tra_exec_program");
  return llvm::Error::success();
}

llvm::Error mlir::tra::addProgramDescriptor(
    llvm::Module &module, const EntrySignature &signature,
    ArrayRef<std::string> profiledOps, const ProgramTarget &target,
    const DistributedSignature *distributed) {
  return DescriptorBuilder(module).build(signature, profiledOps, target,
                                         distributed);
}
