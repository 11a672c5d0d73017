//===- Search.cpp - Finding the cheapest plan -----------------------------===//

#include "tra/Optimizer/Search.h"

#include "llvm/ADT/Hashing.h"
#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <limits>
#include <numeric>

using namespace mlir;
using namespace mlir::tra;
using namespace mlir::tra::plan;

namespace {
/// The states of one step: for each, the distributions of the frontier
/// values (a fixed-width key), the cost so far and how it was reached.
class StateSet {
public:
  explicit StateSet(unsigned width) : width(width) {}

  unsigned getWidth() const { return width; }
  size_t size() const { return costs.size(); }
  ArrayRef<uint32_t> getKey(size_t state) const {
    return ArrayRef<uint32_t>(keys).slice(state * width, width);
  }
  double getCost(size_t state) const { return costs[state]; }
  uint32_t getParent(size_t state) const { return parents[state]; }
  uint32_t getChoice(size_t state) const { return choices[state]; }

  /// Keeps the cheaper of the existing state with `key` and the new one.
  void relax(ArrayRef<uint32_t> key, double cost, uint32_t parent,
             uint32_t choice) {
    if (slots.empty() || 2 * (size() + 1) > slots.size())
      grow();
    size_t slot = findSlot(key);
    if (slots[slot] >= 0) {
      size_t state = slots[slot];
      if (cost < costs[state]) {
        costs[state] = cost;
        parents[state] = parent;
        choices[state] = choice;
      }
      return;
    }
    slots[slot] = int32_t(size());
    keys.append(key.begin(), key.end());
    costs.push_back(cost);
    parents.push_back(parent);
    choices.push_back(choice);
  }

  /// Keeps only the states in `keep` (in that order).
  StateSet select(ArrayRef<size_t> keep) const {
    StateSet result(width);
    for (size_t state : keep)
      result.relax(getKey(state), costs[state], parents[state], choices[state]);
    return result;
  }

private:
  size_t hashKey(ArrayRef<uint32_t> key) const {
    return size_t(llvm::hash_combine_range(key.begin(), key.end()));
  }

  size_t findSlot(ArrayRef<uint32_t> key) const {
    size_t mask = slots.size() - 1, slot = hashKey(key) & mask;
    while (slots[slot] >= 0 && getKey(slots[slot]) != key)
      slot = (slot + 1) & mask;
    return slot;
  }

  void grow() {
    size_t capacity = std::max<size_t>(16, slots.size() * 2);
    slots.assign(capacity, -1);
    for (size_t state = 0; state < size(); ++state)
      slots[findSlot(getKey(state))] = int32_t(state);
  }

  unsigned width;
  SmallVector<uint32_t, 64> keys;
  std::vector<double> costs;
  std::vector<uint32_t> parents;
  std::vector<uint32_t> choices;
  std::vector<int32_t> slots;
};

/// Cost-to-go estimates for the ranking of states, from a relaxation of the
/// remaining problem to a tree. Every node is attributed to one operand, its
/// primary one (the most recently produced). For every use of a value as a
/// primary operand and every distribution the value may have, the estimate
/// is the cheapest way for the using node and everything attributed to it,
/// down the tree, to proceed from that distribution; each future node is
/// attributed to exactly one value of any frontier, so these add up without
/// counting a node twice. A use as a secondary operand adds its regret: how
/// much more that cheapest way costs from this distribution than from the
/// best one (so a value shared by many operations, like rotary tables read
/// by every layer, is steered to a distribution all of them can use).
class CostToGo {
public:
  /// `carried`, when not empty, gives per value carried to an argument
  /// (ProblemValue::carriedTo) the distribution that argument is expected
  /// in; the carry to it is charged like an operation's own cost.
  CostToGo(PlanProblem &problem, double lambda, ArrayRef<unsigned> carried)
      : problem(problem) {
    ArrayRef<ProblemNode> nodes = problem.getNodes();
    ArrayRef<ProblemValue> values = problem.getValues();
    perValue.resize(values.size());
    std::vector<double> choiceCost;
    for (int n = int(nodes.size()) - 1; n >= 0; --n) {
      const ProblemNode &node = nodes[n];
      int k = getPrimaryOperand(node);
      if (k < 0)
        continue;
      choiceCost.clear();
      for (const ProblemChoice &choice : node.choices) {
        double cost = choice.time + lambda * choice.memoryBytes;
        for (auto [r, v] : llvm::enumerate(node.resultValues)) {
          if (v < 0)
            continue;
          cost += getTotal(v, choice.results[r]);
          if (!carried.empty() && values[v].carriedTo >= 0)
            cost += problem.getEdgeCost(v, choice.results[r], carried[v]);
        }
        choiceCost.push_back(cost);
      }
      for (auto [operand, v] : llvm::enumerate(node.operandValues))
        if (v >= 0 && values[v].producer >= 0)
          addUse(unsigned(v), unsigned(n), operand, int(operand) == k,
                 choiceCost);
    }
    for (Estimates &estimates : perValue)
      estimates.finish();
  }

  /// The estimate for value `value` in distribution `dist` after node
  /// `step`: its uses still to come.
  double get(unsigned value, unsigned dist, unsigned step) const {
    return perValue[value].getFrom(dist, step);
  }

private:
  /// The estimates of one value: per use (by node, ascending once finished)
  /// and candidate distribution, then suffix sums over the uses.
  struct Estimates {
    SmallVector<unsigned, 32> dists;
    llvm::DenseMap<unsigned, unsigned> column;
    std::vector<unsigned> nodes;
    /// Row per use (plus an all-zero row), column per distribution.
    std::vector<double> table;

    double getTotal(unsigned dist) const {
      auto it = column.find(dist);
      if (it == column.end())
        return 0;
      double total = 0;
      for (size_t row = 0; row < nodes.size(); ++row)
        total += table[row * dists.size() + it->second];
      return total;
    }

    /// Reorders the uses by node and turns rows into suffix sums.
    void finish() {
      size_t width = dists.size(), uses = nodes.size();
      std::vector<double> sorted((uses + 1) * width, 0.0);
      std::vector<unsigned> ascending(nodes.rbegin(), nodes.rend());
      for (size_t i = 0; i < uses; ++i)
        for (size_t c = 0; c < width; ++c)
          sorted[i * width + c] = table[(uses - 1 - i) * width + c];
      for (size_t i = uses; i-- > 0;)
        for (size_t c = 0; c < width; ++c)
          sorted[i * width + c] += sorted[(i + 1) * width + c];
      table = std::move(sorted);
      nodes = std::move(ascending);
    }

    double getFrom(unsigned dist, unsigned step) const {
      auto it = column.find(dist);
      if (it == column.end())
        return 0;
      size_t row =
          std::upper_bound(nodes.begin(), nodes.end(), step) - nodes.begin();
      return table[row * dists.size() + it->second];
    }
  };

  double getTotal(unsigned value, unsigned dist) const {
    return perValue[value].getTotal(dist);
  }

  /// Records the use of `value` as operand `operand` of node `n`.
  void addUse(unsigned value, unsigned n, unsigned operand, bool primary,
              ArrayRef<double> choiceCost) {
    Estimates &estimates = perValue[value];
    if (estimates.dists.empty()) {
      estimates.dists = getCandidateDists(value);
      for (auto [c, dist] : llvm::enumerate(estimates.dists))
        estimates.column[dist] = c;
    }
    const ProblemNode &node = problem.getNodes()[n];
    estimates.nodes.push_back(n);
    size_t row = estimates.table.size();
    double least = std::numeric_limits<double>::infinity();
    for (unsigned dist : estimates.dists) {
      double best = std::numeric_limits<double>::infinity();
      for (auto [c, choice] : llvm::enumerate(node.choices))
        best = std::min(best, choiceCost[c] +
                                  problem.getEdgeCost(
                                      value, dist, choice.operands[operand]));
      estimates.table.push_back(best);
      least = std::min(least, best);
    }
    // A secondary use contributes its regret: how much worse the best
    // continuation is from this distribution than from the best one.
    if (!primary)
      for (size_t c = row; c < estimates.table.size(); ++c)
        estimates.table[c] -= least;
  }

  /// The operand whose producer comes last, or -1.
  int getPrimaryOperand(const ProblemNode &node) const {
    int best = -1, bestProducer = -1;
    for (auto [k, v] : llvm::enumerate(node.operandValues)) {
      if (v < 0)
        continue;
      int producer = problem.getValues()[v].producer;
      if (producer > bestProducer) {
        best = k;
        bestProducer = producer;
      }
    }
    return best;
  }

  SmallVector<unsigned, 32> getCandidateDists(unsigned value) const {
    const ProblemValue &v = problem.getValues()[value];
    SmallVector<unsigned, 32> dists;
    for (const ProblemChoice &choice : problem.getNodes()[v.producer].choices)
      if (!llvm::is_contained(dists, choice.results[v.resultIndex]))
        dists.push_back(choice.results[v.resultIndex]);
    return dists;
  }

  PlanProblem &problem;
  std::vector<Estimates> perValue;
};

/// The dynamic program over the nodes in program order.
class FrontierSearch {
public:
  FrontierSearch(PlanProblem &problem, const SearchOptions &options,
                 ArrayRef<unsigned> carried = {})
      : problem(problem), options(options),
        costToGo(problem, options.lambda, carried) {}

  SearchResult run();

private:
  StateSet step(unsigned n, const StateSet &states,
                SmallVectorImpl<int> &frontier);
  StateSet prune(const StateSet &states, unsigned n, ArrayRef<int> frontier,
                 unsigned firstNewSlot);

  PlanProblem &problem;
  const SearchOptions &options;
  CostToGo costToGo;
  /// Frontier slot of the first value the last step added.
  unsigned newSlotsBegin = 0;
  /// Per step: (parent, choice) of every state kept.
  std::vector<std::vector<std::pair<uint32_t, uint32_t>>> history;
  SearchResult result;
};
} // namespace

/// Expands every state by every choice of node `n`, and updates `frontier`
/// (the values whose distributions the keys hold).
StateSet FrontierSearch::step(unsigned n, const StateSet &states,
                              SmallVectorImpl<int> &frontier) {
  const ProblemNode &node = problem.getNodes()[n];
  ArrayRef<ProblemValue> values = problem.getValues();
  // Where each operand's distribution is found in the key (-1: bound).
  SmallVector<int, 4> operandSlot;
  for (int v : node.operandValues) {
    auto *it = v >= 0 ? llvm::find(frontier, v) : frontier.end();
    operandSlot.push_back(it == frontier.end() ? -1
                                               : int(it - frontier.begin()));
  }
  // Frontier after this node: drop values read for the last time, add the
  // results that are read later.
  SmallVector<int> next;
  SmallVector<unsigned> keptSlots;
  for (auto [slot, v] : llvm::enumerate(frontier))
    if (values[v].lastUse > n) {
      next.push_back(v);
      keptSlots.push_back(slot);
    }
  SmallVector<unsigned> newResults;
  for (auto [r, v] : llvm::enumerate(node.resultValues))
    if (v >= 0 && !values[v].uses.empty()) {
      next.push_back(v);
      newResults.push_back(r);
    }

  // Conversion costs of each operand, per distinct distribution it has in
  // some state and per choice.
  size_t numChoices = node.choices.size();
  SmallVector<std::vector<double>, 4> tables(operandSlot.size());
  SmallVector<std::vector<uint32_t>, 4> rows(operandSlot.size());
  for (auto [k, slot] : llvm::enumerate(operandSlot)) {
    if (slot < 0)
      continue;
    llvm::DenseMap<uint32_t, uint32_t> rowOf;
    rows[k].resize(states.size());
    for (size_t s = 0; s < states.size(); ++s) {
      uint32_t dist = states.getKey(s)[slot];
      auto [it, inserted] = rowOf.try_emplace(dist, rowOf.size());
      if (inserted)
        for (const ProblemChoice &choice : node.choices)
          tables[k].push_back(problem.getEdgeCost(node.operandValues[k], dist,
                                                  choice.operands[k]));
      rows[k][s] = it->second;
    }
  }
  // Carried results: the cost of moving each to its argument's
  // distribution (found in the key), per distinct distribution and choice.
  struct Carry {
    unsigned slot, result;
    std::vector<double> table;
    std::vector<uint32_t> rows;
  };
  SmallVector<Carry, 2> carries;
  for (auto [r, v] : llvm::enumerate(node.resultValues)) {
    if (v < 0 || values[v].carriedTo < 0)
      continue;
    auto *it = llvm::find(frontier, values[v].carriedTo);
    if (it == frontier.end())
      continue; // not read before: nothing to keep it in
    Carry carry{unsigned(it - frontier.begin()), unsigned(r), {}, {}};
    llvm::DenseMap<uint32_t, uint32_t> rowOf;
    carry.rows.resize(states.size());
    for (size_t s = 0; s < states.size(); ++s) {
      uint32_t dist = states.getKey(s)[carry.slot];
      auto [row, inserted] = rowOf.try_emplace(dist, rowOf.size());
      if (inserted)
        for (const ProblemChoice &choice : node.choices)
          carry.table.push_back(
              problem.getEdgeCost(v, choice.results[r], dist));
      carry.rows[s] = row->second;
    }
    carries.push_back(std::move(carry));
  }
  SmallVector<double, 64> base(numChoices);
  for (auto [c, choice] : llvm::enumerate(node.choices))
    base[c] = choice.time + options.lambda * choice.memoryBytes;

  StateSet expanded(next.size());
  SmallVector<uint32_t, 16> key(next.size());
  for (size_t s = 0; s < states.size(); ++s) {
    ArrayRef<uint32_t> old = states.getKey(s);
    for (auto [slot, from] : llvm::enumerate(keptSlots))
      key[slot] = old[from];
    for (size_t c = 0; c < numChoices; ++c) {
      double cost = states.getCost(s) + base[c];
      for (auto [k, slot] : llvm::enumerate(operandSlot))
        if (slot >= 0)
          cost += tables[k][size_t(rows[k][s]) * numChoices + c];
      for (const Carry &carry : carries)
        cost += carry.table[size_t(carry.rows[s]) * numChoices + c];
      for (auto [i, r] : llvm::enumerate(newResults))
        key[keptSlots.size() + i] = node.choices[c].results[r];
      expanded.relax(key, cost, uint32_t(s), uint32_t(c));
    }
  }
  frontier.assign(next.begin(), next.end());
  newSlotsBegin = keptSlots.size();
  return expanded;
}

/// Keeps the `beam` most promising states (cost so far plus cost to go)
/// and, for every value the node just produced and every distribution it has
/// in some state, the most promising state with it. (Keeping the best state
/// per distribution of the newest values makes the search exact on chains
/// and trees; older values had their turn when they were produced.)
StateSet FrontierSearch::prune(const StateSet &states, unsigned n,
                               ArrayRef<int> frontier, unsigned firstNewSlot) {
  if (options.beam == 0 || states.size() <= options.beam)
    return states;
  std::vector<double> rank(states.size());
  for (size_t s = 0; s < states.size(); ++s) {
    rank[s] = states.getCost(s);
    ArrayRef<uint32_t> key = states.getKey(s);
    for (auto [slot, v] : llvm::enumerate(frontier))
      rank[s] += costToGo.get(v, key[slot], n);
  }
  auto better = [&](size_t a, size_t b) {
    return std::make_pair(rank[a], a) < std::make_pair(rank[b], b);
  };
  std::vector<bool> wanted(states.size(), false);
  std::vector<size_t> order(states.size());
  std::iota(order.begin(), order.end(), 0);
  std::nth_element(order.begin(), order.begin() + options.beam, order.end(),
                   better);
  for (unsigned i = 0; i < options.beam; ++i)
    wanted[order[i]] = true;
  unsigned width = states.getWidth();
  for (unsigned slot = std::min(firstNewSlot, width); slot < width; ++slot) {
    llvm::DenseMap<uint32_t, size_t> best;
    for (size_t s = 0; s < states.size(); ++s) {
      auto [it, inserted] = best.try_emplace(states.getKey(s)[slot], s);
      if (!inserted && better(s, it->second))
        it->second = s;
    }
    for (auto &entry : best)
      wanted[entry.second] = true;
  }
  std::vector<size_t> keep;
  for (size_t s = 0; s < states.size(); ++s)
    if (wanted[s])
      keep.push_back(s);
  if (keep.size() < states.size())
    result.pruned = true;
  return states.select(keep);
}

SearchResult FrontierSearch::run() {
  ArrayRef<ProblemNode> nodes = problem.getNodes();
  SmallVector<int> frontier;
  StateSet states(0);
  states.relax({}, 0.0, 0, 0);
  history.reserve(nodes.size());
  for (unsigned n = 0; n < nodes.size(); ++n) {
    StateSet expanded = step(n, states, frontier);
    states = prune(expanded, n, frontier, newSlotsBegin);
    result.maxStates = std::max(result.maxStates, states.size());
    auto &record = history.emplace_back();
    record.reserve(states.size());
    for (size_t s = 0; s < states.size(); ++s)
      record.push_back({states.getParent(s), states.getChoice(s)});
  }
  size_t best = 0;
  for (size_t s = 1; s < states.size(); ++s)
    if (states.getCost(s) < states.getCost(best))
      best = s;
  result.cost = states.size() ? states.getCost(best) : 0;
  result.plan.assign(nodes.size(), 0);
  for (int n = int(nodes.size()) - 1; n >= 0; --n) {
    result.plan[n] = history[n][best].second;
    best = history[n][best].first;
  }
  return result;
}

SearchResult plan::searchPlan(PlanProblem &problem,
                              const SearchOptions &options) {
  SearchResult best = FrontierSearch(problem, options).run();
  // The estimate of the cost to go cannot see a carry (a weight's update
  // written in other tiles than the weight is read in) before its argument
  // has a distribution, so a pruned search may settle the update's inputs
  // too early. Searching again with the carries of the best plan so far
  // charged in the estimate steers them; the best plan wins.
  ArrayRef<ProblemValue> values = problem.getValues();
  if (!best.pruned || llvm::none_of(values, [](const ProblemValue &v) {
        return v.carriedTo >= 0;
      }))
    return best;
  for (unsigned round = 0; round < 3; ++round) {
    std::vector<unsigned> carried(values.size(), 0);
    for (auto [id, v] : llvm::enumerate(values))
      if (v.carriedTo >= 0)
        carried[id] = problem.getValueDist(v.carriedTo, best.plan);
    SearchResult next = FrontierSearch(problem, options, carried).run();
    next.maxStates = std::max(next.maxStates, best.maxStates);
    if (next.cost >= best.cost)
      break;
    best = std::move(next);
  }
  return best;
}

//===----------------------------------------------------------------------===//
// Exhaustive enumeration
//===----------------------------------------------------------------------===//

namespace {
/// Depth-first enumeration with the cost accumulated node by node, cut when
/// it reaches the best complete plan (costs are never negative).
class Enumerator {
public:
  Enumerator(PlanProblem &problem, double lambda)
      : problem(problem), lambda(lambda), plan(problem.getNodes().size(), 0) {}

  void run(unsigned n, double cost) {
    if (cost >= best.cost)
      return;
    ArrayRef<ProblemNode> nodes = problem.getNodes();
    if (n == nodes.size()) {
      best.cost = cost;
      best.plan = plan;
      return;
    }
    const ProblemNode &node = nodes[n];
    for (auto [c, choice] : llvm::enumerate(node.choices)) {
      plan[n] = c;
      double total = cost + choice.time + lambda * choice.memoryBytes;
      for (auto [k, v] : llvm::enumerate(node.operandValues)) {
        if (v < 0 || problem.getValues()[v].producer < 0)
          continue;
        total += problem.getEdgeCost(v, problem.getValueDist(v, plan),
                                     choice.operands[k]);
      }
      for (auto [r, v] : llvm::enumerate(node.resultValues))
        if (v >= 0 && problem.getValues()[v].carriedTo >= 0)
          total += problem.getEdgeCost(
              v, choice.results[r],
              problem.getValueDist(problem.getValues()[v].carriedTo, plan));
      run(n + 1, total);
    }
  }

  SearchResult best{{}, std::numeric_limits<double>::infinity(), false, 0};

private:
  PlanProblem &problem;
  double lambda;
  std::vector<unsigned> plan;
};
} // namespace

std::optional<SearchResult> plan::searchExhaustive(PlanProblem &problem,
                                                   double lambda,
                                                   double maxCombinations) {
  double combinations = 1;
  for (const ProblemNode &node : problem.getNodes())
    combinations *= double(std::max<size_t>(1, node.choices.size()));
  if (combinations > maxCombinations)
    return std::nullopt;
  Enumerator enumerator(problem, lambda);
  enumerator.run(0, 0.0);
  return enumerator.best;
}
