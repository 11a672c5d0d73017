//===- EntrySignature.h - What a compiled program reads and writes -*- C++
//-*-===//
//
// The entry function of a model and its signature: the names, element types
// and shapes of the tensors a compiled program reads and writes, and, for a
// distributed program, the tile of each tensor every rank holds. The program
// descriptor (ProgramDescriptor.h), the C header (CHeader.h) and the loader's
// checks (ProgramLoader.h) are written from it.
//
//===----------------------------------------------------------------------===//

#ifndef TRA_TARGET_ENTRYSIGNATURE_H
#define TRA_TARGET_ENTRYSIGNATURE_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlir {
namespace tra {

/// Element types of entry tensors, numbered as `TraExecDType` in the runtime
/// ABI.
enum class ExecElementType : int64_t {
  f32 = 0,
  f16 = 1,
  bf16 = 2,
  i64 = 3,
  i32 = 4,
  i1 = 5,
  i8 = 6
};

/// Returns the lower-case name of `type` ("f32", ..., "i8").
StringRef stringifyExecElementType(ExecElementType type);

/// One argument or result of an entry function.
struct EntryTensor {
  std::string name;
  ExecElementType elementType = ExecElementType::f32;
  SmallVector<int64_t> shape;
  /// Outputs: the index of the input whose buffer a caller may also pass as
  /// this output's (see `setOutputAliases`), or -1.
  int64_t aliasedInput = -1;
  /// Inputs: where the plan keeps it (ABI.h TraExecTier: 0 device memory, 1
  /// the node's host memory, 2 its disk; `tra_plan.tier`).
  int64_t tier = 0;
};

/// The signature of an entry function: what the executable reads and writes.
struct EntrySignature {
  /// The function's name in the model.
  std::string function;
  /// Its symbol in the lowered module (see `prefixModelSymbols`); empty if
  /// it was not renamed.
  std::string symbol;
  SmallVector<EntryTensor> inputs;
  SmallVector<EntryTensor> outputs;
};

/// Returns the entry function of `module`: the function named `name` if it is
/// not empty, else @main, else the only public function with a body. Emits an
/// error if there is none (or several candidates).
FailureOr<func::FuncOp> findEntryFunction(ModuleOp module, StringRef name);

/// Returns the signature of `entry`, naming arguments and results by their
/// `tra.name` attribute (else "arg<i>" / "result<i>"). Emits an error if a
/// type is not a static-shape tensor of f32, f16, bf16, i64, i32 or i1, or if
/// two arguments or two results have the same name.
FailureOr<EntrySignature> getEntrySignature(func::FuncOp entry);

/// Sets the `aliasedInput` of the outputs of `signature` from the
/// `tra.output_aliases` attribute (tra-alias-entry-outputs) of `lowered`, the
/// entry function after bufferization or lowering (a func.func or an
/// llvm.func); without it no output shares a buffer. Emits an error if the
/// attribute does not fit `signature`: one entry per output, each -1 or an
/// input of the same element type and shape, no input named twice.
LogicalResult setOutputAliases(Operation *lowered, EntrySignature &signature);

/// One tile of an entry tensor that one rank of a distributed program holds.
struct RankTile {
  /// Index of the tensor among the entry's inputs (or outputs).
  int64_t tensor = 0;
  /// Where the tile starts in the whole tensor.
  SmallVector<int64_t> offsets;
  /// Outputs: whether this rank reports the tile (the lowest holding rank).
  bool owner = false;
};

/// What one rank of a distributed program reads and writes: the signature
/// of its function (tile shapes) and where each tile sits.
struct RankSignature {
  EntrySignature local;
  SmallVector<RankTile> inputs;
  SmallVector<RankTile> outputs;
};

/// A distributed program: the entry's signature (whole tensors), one
/// program per rank, and the fingerprint of the plan.
struct DistributedSignature {
  EntrySignature global;
  std::vector<RankSignature> ranks;
  int64_t fingerprint = 0;
};

} // namespace tra
} // namespace mlir

#endif // TRA_TARGET_ENTRYSIGNATURE_H
