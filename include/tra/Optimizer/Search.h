//===- Search.h - Finding the cheapest plan ---------------------*- C++ -*-===//
//
// searchPlan is the optimizer's dynamic program over a PlanProblem: it walks
// the nodes in program order keeping, for every combination of
// distributions of the values still to be read (the frontier), the cheapest
// choices so far. With beam 0 it keeps every combination and is exact; with a
// beam it keeps the `beam` most promising states (cost so far plus an
// estimated cost to go) plus, for every value the current node produced and
// every distribution it has in some state, the most promising state with
// that distribution (which keeps chains exact).
//
// searchExhaustive enumerates every combination of choices (branch and
// bound); it exists to check searchPlan on small graphs.
//
//===----------------------------------------------------------------------===//

#ifndef TRA_OPTIMIZER_SEARCH_H
#define TRA_OPTIMIZER_SEARCH_H

#include "tra/Optimizer/PlanProblem.h"

#include <optional>
#include <vector>

namespace mlir {
namespace tra {
namespace plan {

struct SearchOptions {
  /// States kept per step besides the best per frontier distribution; 0
  /// keeps all states.
  unsigned beam = 32;
  /// Seconds charged per byte of the worst device's arguments.
  double lambda = 0;
};

struct SearchResult {
  /// One choice per node.
  std::vector<unsigned> plan;
  /// The objective of `plan`.
  double cost = 0;
  /// Whether some state was dropped (the result may not be optimal).
  bool pruned = false;
  /// The most states held at once.
  size_t maxStates = 0;
};

SearchResult searchPlan(PlanProblem &problem, const SearchOptions &options);

/// The optimum by enumeration, or std::nullopt when there are more than
/// `maxCombinations` combinations of choices.
std::optional<SearchResult> searchExhaustive(PlanProblem &problem,
                                             double lambda,
                                             double maxCombinations = 1e7);

} // namespace plan
} // namespace tra
} // namespace mlir

#endif // TRA_OPTIMIZER_SEARCH_H
