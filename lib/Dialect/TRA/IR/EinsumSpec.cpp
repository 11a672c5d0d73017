//===- EinsumSpec.cpp - Parsed einsum index specs -------------------------===//

#include "tra/Dialect/TRA/IR/EinsumSpec.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::tra;

static llvm::Error specError(llvm::StringRef spec, const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 llvm::Twine("malformed index spec '") + spec +
                                     "': " + msg);
}

static bool isIndexLetter(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

llvm::Expected<EinsumSpec> EinsumSpec::parse(llvm::StringRef spec) {
  size_t arrow = spec.find("->");
  if (arrow == llvm::StringRef::npos)
    return specError(spec, "expected '->' before the output term");
  if (spec.find("->", arrow + 2) != llvm::StringRef::npos)
    return specError(spec, "more than one '->'");

  EinsumSpec result;
  auto indexOf = [&](char c) -> unsigned {
    for (auto [i, n] : llvm::enumerate(result.names))
      if (n == c)
        return i;
    result.names.push_back(c);
    return result.names.size() - 1;
  };
  auto parseTerm = [&](llvm::StringRef term,
                       llvm::SmallVectorImpl<unsigned> &out,
                       const llvm::Twine &what) -> llvm::Error {
    for (char c : term) {
      if (!isIndexLetter(c))
        return specError(spec, llvm::Twine("unexpected character '") +
                                   llvm::Twine(c) + "' in " + what +
                                   " (indices are letters a-z, A-Z)");
      unsigned idx = indexOf(c);
      if (llvm::is_contained(out, idx))
        return specError(spec, llvm::Twine("index '") + llvm::Twine(c) +
                                   "' repeated in " + what);
      out.push_back(idx);
    }
    return llvm::Error::success();
  };

  llvm::StringRef lhs = spec.substr(0, arrow);
  llvm::StringRef rhs = spec.substr(arrow + 2);
  // As in NumPy, every comma separates a term and an empty term is a scalar
  // (0-d) input: "->s" has one scalar input, ",s->s" two.
  llvm::SmallVector<llvm::StringRef> terms;
  lhs.split(terms, ',', /*MaxSplit=*/-1, /*KeepEmpty=*/true);
  for (auto [i, term] : llvm::enumerate(terms)) {
    result.inputs.emplace_back();
    if (llvm::Error err = parseTerm(term.trim(), result.inputs.back(),
                                    llvm::formatv("input term #{0}", i)))
      return std::move(err);
  }
  if (llvm::Error err = parseTerm(rhs.trim(), result.output, "the output term"))
    return std::move(err);
  return result;
}

EinsumSpec EinsumSpec::identity(unsigned numInputs, unsigned rank) {
  EinsumSpec result;
  for (unsigned d = 0; d < rank; ++d) {
    result.names.push_back(d < 26 ? char('a' + d) : char('A' + d - 26));
    result.output.push_back(d);
  }
  for (unsigned i = 0; i < numInputs; ++i)
    result.inputs.emplace_back(result.output.begin(), result.output.end());
  return result;
}

llvm::SmallVector<unsigned> EinsumSpec::getReducedIndices() const {
  llvm::SmallVector<unsigned> reduced;
  for (unsigned i = 0, e = getNumIndices(); i < e; ++i)
    if (!isOutputIndex(i))
      reduced.push_back(i);
  return reduced;
}

bool EinsumSpec::isOutputIndex(unsigned index) const {
  return llvm::is_contained(output, index);
}

std::optional<unsigned> EinsumSpec::getOutputPosition(unsigned index) const {
  for (auto [pos, idx] : llvm::enumerate(output))
    if (idx == index)
      return pos;
  return std::nullopt;
}

std::optional<unsigned> EinsumSpec::getInputPosition(unsigned input,
                                                     unsigned index) const {
  for (auto [pos, idx] : llvm::enumerate(inputs[input]))
    if (idx == index)
      return pos;
  return std::nullopt;
}

std::string EinsumSpec::inputTerm(unsigned i) const {
  std::string s;
  for (unsigned idx : inputs[i])
    s.push_back(names[idx]);
  return s;
}

std::string EinsumSpec::outputTerm() const {
  std::string s;
  for (unsigned idx : output)
    s.push_back(names[idx]);
  return s;
}

std::string EinsumSpec::str() const {
  std::string s;
  for (unsigned i = 0; i < getNumInputs(); ++i) {
    if (i)
      s.push_back(',');
    s += inputTerm(i);
  }
  return s + "->" + outputTerm();
}

llvm::Expected<llvm::SmallVector<int64_t>> mlir::tra::inferIndexExtents(
    const EinsumSpec &spec, llvm::ArrayRef<llvm::ArrayRef<int64_t>> inputShapes,
    llvm::ArrayRef<int64_t> resultShape) {
  constexpr int64_t kUnknown = -1;
  llvm::SmallVector<int64_t> extents(spec.getNumIndices(), kUnknown);
  // Where each index's extent was first seen, for the error message.
  llvm::SmallVector<std::pair<unsigned, unsigned>> source(spec.getNumIndices());
  for (unsigned i = 0; i < spec.getNumInputs(); ++i) {
    for (auto [dim, idx] : llvm::enumerate(spec.getInput(i))) {
      int64_t extent = inputShapes[i][dim];
      if (extents[idx] == kUnknown) {
        extents[idx] = extent;
        source[idx] = {i, unsigned(dim)};
        continue;
      }
      if (extents[idx] != extent)
        return llvm::createStringError(
            llvm::inconvertibleErrorCode(),
            llvm::formatv("index '{0}' has extent {1} in input #{2} (dim {3}) "
                          "but {4} in input #{5} (dim {6})",
                          spec.getName(idx), extents[idx], source[idx].first,
                          source[idx].second, extent, i, dim)
                .str());
    }
  }
  for (auto [dim, idx] : llvm::enumerate(spec.getOutput())) {
    int64_t extent = resultShape[dim];
    if (extents[idx] == kUnknown) {
      extents[idx] = extent;
      continue;
    }
    if (extents[idx] != extent)
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          llvm::formatv("result dim {0} (index '{1}') has extent {2}, but the "
                        "index has extent {3} in input #{4} (dim {5})",
                        dim, spec.getName(idx), extent, extents[idx],
                        source[idx].first, source[idx].second)
              .str());
  }
  return extents;
}
