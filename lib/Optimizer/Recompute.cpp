//===- Recompute.cpp - Recomputing activations instead of storing ---------===//

#include "tra/Optimizer/Recompute.h"
#include "tra/Dialect/TRA/IR/TRAOps.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"

using namespace mlir;
using namespace mlir::tra;

/// Whether computing `op` again costs one elementwise pass over its result.
static bool isElementwise(Operation *op) {
  if (op->getNumResults() != 1 || op->getNumRegions() > 1)
    return false;
  if (llvm::isa<MapOp, ConvertOp>(op))
    return true;
  if (auto einsum = llvm::dyn_cast<EinsumOp>(op))
    return einsum.getParsedSpec().getReducedIndices().empty();
  return false;
}

unsigned plan::recomputeActivations(func::FuncOp func, unsigned minGap) {
  if (func.getBody().empty())
    return 0;
  Block &block = func.getBody().front();
  DenseMap<Operation *, unsigned> position;
  for (auto [i, op] : llvm::enumerate(block))
    position[&op] = i;
  Operation *terminator = block.getTerminator();
  // The position of the last read of `value` (arguments and fills: never
  // freed).
  auto lastRead = [&](Value value) -> unsigned {
    Operation *def = value.getDefiningOp();
    if (!def || llvm::isa<FillOp>(def))
      return ~0u;
    unsigned last = position.lookup(def);
    for (Operation *user : value.getUsers()) {
      while (user && user->getBlock() != &block)
        user = user->getParentOp();
      if (user)
        last = std::max(last, position.lookup(user));
    }
    return last;
  };

  SmallVector<Operation *> candidates;
  for (Operation &op : block.without_terminator())
    if (isElementwise(&op))
      candidates.push_back(&op);
  unsigned added = 0;
  for (Operation *op : candidates) {
    Value result = op->getResult(0);
    // The users in program order (a user reading it twice counts once).
    SmallVector<Operation *> users;
    bool returned = false;
    for (Operation *user : result.getUsers()) {
      while (user && user->getBlock() != &block)
        user = user->getParentOp();
      if (!user || user == terminator) {
        returned = true;
        break;
      }
      if (!llvm::is_contained(users, user))
        users.push_back(user);
    }
    if (returned || users.size() < 1)
      continue;
    llvm::sort(users, [&](Operation *a, Operation *b) {
      return position.lookup(a) < position.lookup(b);
    });
    // The widest stretch without a read: before the first (only for
    // values made long before their first read, which is a matter of
    // order, not of memory: skipped) or between two reads.
    unsigned split = 0, widest = 0;
    for (unsigned i = 1; i < users.size(); ++i) {
      unsigned gap = position.lookup(users[i]) - position.lookup(users[i - 1]);
      if (gap > widest) {
        widest = gap;
        split = i;
      }
    }
    if (split == 0 || widest < minGap)
      continue;
    unsigned late = position.lookup(users[split]);
    if (!llvm::all_of(op->getOperands(),
                      [&](Value operand) { return lastRead(operand) >= late; }))
      continue;
    OpBuilder builder(users[split]);
    Operation *copy = builder.clone(*op);
    copy->setAttr(kRecomputedAttrName, builder.getUnitAttr());
    // The copy sits just before the first late reader: it takes that
    // reader's position for later candidates' liveness checks.
    position[copy] = late;
    SmallPtrSet<Operation *, 8> lateUsers(users.begin() + split, users.end());
    result.replaceUsesWithIf(copy->getResult(0), [&](OpOperand &use) {
      Operation *user = use.getOwner();
      while (user && user->getBlock() != &block)
        user = user->getParentOp();
      return user && lateUsers.contains(user);
    });
    ++added;
  }
  return added;
}
