//===- EntrySignature.cpp - Entry functions and signatures
//------------------===//

#include "tra/Target/EntrySignature.h"

#include "tra/Dialect/Comm/IR/Comm.h"
#include "tra/Dialect/Plan/IR/PlanDialect.h"
#include "tra/Transforms/Passes.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/SmallSet.h"
#include "llvm/ADT/StringSet.h"

#include <optional>

using namespace mlir;
using namespace mlir::tra;

StringRef mlir::tra::stringifyExecElementType(ExecElementType type) {
  switch (type) {
  case ExecElementType::f32:
    return "f32";
  case ExecElementType::f16:
    return "f16";
  case ExecElementType::bf16:
    return "bf16";
  case ExecElementType::i64:
    return "i64";
  case ExecElementType::i32:
    return "i32";
  case ExecElementType::i1:
    return "i1";
  case ExecElementType::i8:
    return "i8";
  }
  llvm_unreachable("unknown element type");
}

/// Returns the runtime element type of `type`, if there is one.
static std::optional<ExecElementType> getExecElementType(Type type) {
  if (type.isF32())
    return ExecElementType::f32;
  if (type.isF16())
    return ExecElementType::f16;
  if (type.isBF16())
    return ExecElementType::bf16;
  if (type.isInteger(64))
    return ExecElementType::i64;
  if (type.isInteger(32))
    return ExecElementType::i32;
  if (type.isInteger(1))
    return ExecElementType::i1;
  if (type.isInteger(8))
    return ExecElementType::i8;
  return std::nullopt;
}

FailureOr<func::FuncOp> mlir::tra::findEntryFunction(ModuleOp module,
                                                     StringRef name) {
  if (!name.empty()) {
    auto func = module.lookupSymbol<func::FuncOp>(name);
    if (!func || func.isExternal())
      return module.emitError("no function @") << name << " with a body";
    return func;
  }
  if (auto main = module.lookupSymbol<func::FuncOp>("main");
      main && !main.isExternal())
    return main;
  func::FuncOp only;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isExternal() || !func.isPublic())
      continue;
    if (only)
      return module.emitError("several public functions (@")
             << only.getName() << ", @" << func.getName()
             << "); choose the entry function";
    only = func;
  }
  if (!only)
    return module.emitError("no public function with a body");
  return only;
}

/// Returns the tensor `what` #`index` of `entry` named `name` and of `type`;
/// emits an error if the runtime cannot read or write it.
static FailureOr<EntryTensor> getEntryTensor(func::FuncOp entry, StringRef what,
                                             unsigned index, std::string name,
                                             Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  std::optional<ExecElementType> elementType =
      tensor ? getExecElementType(tensor.getElementType()) : std::nullopt;
  if (!tensor || !tensor.hasStaticShape() || !elementType)
    return entry.emitError("entry function @")
           << entry.getName() << " " << what << " '" << name << "' has type "
           << type << "; executables read and write tensors of static shape "
           << "with element type f32, f16, bf16, i64, i32 or i1";
  return EntryTensor{std::move(name), *elementType,
                     SmallVector<int64_t>(tensor.getShape())};
}

/// Returns the `tra.name` of `attrs`, or `fallback`.
static std::string nameOf(DictionaryAttr attrs, std::string fallback) {
  if (auto name = dyn_cast_if_present<StringAttr>(attrs ? attrs.get("tra.name")
                                                        : Attribute()))
    return name.str();
  return fallback;
}

FailureOr<EntrySignature> mlir::tra::getEntrySignature(func::FuncOp entry) {
  EntrySignature signature;
  signature.function = entry.getName().str();
  for (auto [i, type] : llvm::enumerate(entry.getArgumentTypes())) {
    std::string name =
        nameOf(entry.getArgAttrDict(i), "arg" + std::to_string(i));
    FailureOr<EntryTensor> tensor =
        getEntryTensor(entry, "argument", i, std::move(name), type);
    if (failed(tensor))
      return failure();
    // A weight the plan keeps in a memory tier (ABI.h TraExecTier).
    if (auto tier = entry.getArgAttrOfType<StringAttr>(
            i, plan::PlanDialect::kTierAttrName))
      tensor->tier =
          std::max<int64_t>(0, comm::FetchOp::getTierCode(tier.getValue()));
    signature.inputs.push_back(std::move(*tensor));
  }
  for (auto [i, type] : llvm::enumerate(entry.getResultTypes())) {
    std::string name =
        nameOf(entry.getResultAttrDict(i), "result" + std::to_string(i));
    FailureOr<EntryTensor> tensor =
        getEntryTensor(entry, "result", i, std::move(name), type);
    if (failed(tensor))
      return failure();
    signature.outputs.push_back(std::move(*tensor));
  }
  for (auto [what, tensors] : {std::pair{"argument", &signature.inputs},
                               std::pair{"result", &signature.outputs}}) {
    llvm::StringSet<> seen;
    for (const EntryTensor &tensor : *tensors)
      if (!seen.insert(tensor.name).second)
        return entry.emitError("entry function @")
               << entry.getName() << " has two " << what << "s named '"
               << tensor.name << "'";
  }
  return signature;
}

LogicalResult mlir::tra::setOutputAliases(Operation *lowered,
                                          EntrySignature &signature) {
  Attribute attr = lowered->getAttr(kOutputAliasesAttrName);
  if (!attr)
    return success();
  auto aliases = dyn_cast<DenseI64ArrayAttr>(attr);
  if (!aliases || aliases.size() != int64_t(signature.outputs.size()))
    return lowered->emitError("'")
           << kOutputAliasesAttrName << "' must be an array of "
           << signature.outputs.size() << " i64 (one per output)";
  llvm::SmallSet<int64_t, 8> seen;
  for (auto [i, input] : llvm::enumerate(aliases.asArrayRef())) {
    EntryTensor &output = signature.outputs[i];
    if (input == -1)
      continue;
    if (input < 0 || input >= int64_t(signature.inputs.size()) ||
        !seen.insert(input).second)
      return lowered->emitError("'")
             << kOutputAliasesAttrName << "': output '" << output.name
             << "' names input #" << input
             << ", which is not an input or is named twice";
    const EntryTensor &in = signature.inputs[input];
    if (in.elementType != output.elementType || in.shape != output.shape)
      return lowered->emitError("'")
             << kOutputAliasesAttrName << "': output '" << output.name
             << "' cannot share the buffer of input '" << in.name
             << "' (another element type or shape)";
    output.aliasedInput = input;
  }
  return success();
}
