//===- EinsumSpec.h - Parsed einsum index specs -----------------*- C++ -*-===//
//
// An index spec such as "bij,bjk->bik" names one index per dimension of each
// input and of the output. This is the join/aggregation structure of an
// einsum: shared indices are join keys, indices absent from the output are
// aggregated.
//
//===----------------------------------------------------------------------===//

#ifndef TRA_DIALECT_TRA_IR_EINSUMSPEC_H
#define TRA_DIALECT_TRA_IR_EINSUMSPEC_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>

namespace mlir {
namespace tra {

/// A parsed index spec. Indices are numbered densely in order of first
/// appearance (inputs first, then output).
class EinsumSpec {
public:
  /// Parses `spec`. Each term is a (possibly empty) sequence of letters
  /// a-z/A-Z; terms are separated by ',' and the output follows '->'. A letter
  /// may appear at most once per term.
  static llvm::Expected<EinsumSpec> parse(llvm::StringRef spec);

  /// An identity spec for `numInputs` inputs of rank `rank`: "ab,ab->ab".
  static EinsumSpec identity(unsigned numInputs, unsigned rank);

  unsigned getNumIndices() const { return names.size(); }
  unsigned getNumInputs() const { return inputs.size(); }
  llvm::ArrayRef<unsigned> getInput(unsigned i) const { return inputs[i]; }
  llvm::ArrayRef<unsigned> getOutput() const { return output; }
  char getName(unsigned index) const { return names[index]; }

  /// Indices that appear in some input but not in the output, in index order.
  llvm::SmallVector<unsigned> getReducedIndices() const;
  /// Whether `index` appears in the output.
  bool isOutputIndex(unsigned index) const;
  /// Position of `index` in the output term, if any.
  std::optional<unsigned> getOutputPosition(unsigned index) const;
  /// Position of `index` in input term `input`, if any.
  std::optional<unsigned> getInputPosition(unsigned input,
                                           unsigned index) const;

  /// The term of input `i` (or of the output) as letters.
  std::string inputTerm(unsigned i) const;
  std::string outputTerm() const;
  /// The spec as text, "bij,bjk->bik".
  std::string str() const;

private:
  llvm::SmallVector<llvm::SmallVector<unsigned, 4>, 4> inputs;
  llvm::SmallVector<unsigned, 4> output;
  llvm::SmallVector<char, 8> names;
};

/// Extents of every index of `spec` given the operand and result shapes.
/// On a conflict, returns an error that names the operand, dimension and
/// index ("index 'j' has extent 8 in input #0 (dim 1) but 9 in input #1
/// (dim 0)"). Output indices that appear in no input take the result's
/// extent.
llvm::Expected<llvm::SmallVector<int64_t>>
inferIndexExtents(const EinsumSpec &spec,
                  llvm::ArrayRef<llvm::ArrayRef<int64_t>> inputShapes,
                  llvm::ArrayRef<int64_t> resultShape);

} // namespace tra
} // namespace mlir

#endif // TRA_DIALECT_TRA_IR_EINSUMSPEC_H
