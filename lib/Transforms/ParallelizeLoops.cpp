//===- ParallelizeLoops.cpp - Large linalg ops to scf.parallel loops ------===//
//
// Lowers every linalg op on buffers that has enough work to a loop nest whose
// outer parallel dimensions are one `scf.parallel` and whose other
// dimensions are `scf.for` loops inside it; `convert-scf-to-openmp` then
// turns the `scf.parallel` into an OpenMP worksharing loop. Small ops, ops
// whose outermost non-unit dimension is a reduction, and ops already inside a
// parallel region are left to `convert-linalg-to-loops` (serial).
//
// The innermost dimension stays a sequential loop whenever there are others
// to distribute, so that LLVM's loop vectorizer sees the same inner loop as
// in a serial loop nest (collapsed OpenMP loops compute their indices with a
// division, which defeats vectorization).
//
//===----------------------------------------------------------------------===//

#include "tra/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace tra {
#define GEN_PASS_DEF_PARALLELIZELOOPSPASS
#include "tra/Transforms/Passes.h.inc"
} // namespace tra
} // namespace mlir

using namespace mlir;

/// Fewer iterations than this in the distributed dims: distribute the next
/// dim too (when it is parallel and not the innermost).
static constexpr int64_t kMinDistributedIterations = 64;

/// Returns true if `op` is inside a region that runs in parallel.
static bool isInParallelRegion(Operation *op) {
  for (Operation *parent = op->getParentOp(); parent;
       parent = parent->getParentOp())
    if (parent->hasTrait<OpTrait::HasParallelRegion>())
      return true;
  return false;
}

/// Returns the operations one iteration of `op` executes (at least 1).
static int64_t getBodyCost(linalg::LinalgOp op) {
  int64_t cost = 0;
  op->getRegion(0).walk([&](Operation *nested) {
    if (!nested->hasTrait<OpTrait::IsTerminator>())
      ++cost;
  });
  return std::max<int64_t>(cost, 1);
}

namespace {
/// The loops of a linalg op to distribute: dims [begin, end) of its
/// iteration space, after `begin` leading unit dims.
struct Distribution {
  unsigned begin = 0;
  unsigned end = 0;
};
} // namespace

/// Chooses the dims of `op` to run in parallel, or returns nothing if it has
/// too little work or none of its outer dims can be distributed.
static std::optional<Distribution> chooseDistribution(linalg::LinalgOp op,
                                                      int64_t minWork) {
  if (!op.hasPureBufferSemantics() || op.getNumLoops() == 0)
    return std::nullopt;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic))
    return std::nullopt;
  int64_t iterations = 1;
  for (int64_t range : ranges)
    iterations *= range;
  if (iterations * getBodyCost(op) < minWork)
    return std::nullopt;

  // Leading unit dims stay (one-trip) loops; the first other dim must be
  // parallel.
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  unsigned numLoops = ranges.size();
  Distribution dist;
  while (dist.begin < numLoops && ranges[dist.begin] == 1)
    ++dist.begin;
  if (dist.begin == numLoops ||
      iterators[dist.begin] != utils::IteratorType::parallel)
    return std::nullopt;
  dist.end = dist.begin + 1;
  int64_t distributed = ranges[dist.begin];
  while (distributed < kMinDistributedIterations && dist.end + 1 < numLoops &&
         iterators[dist.end] == utils::IteratorType::parallel) {
    distributed *= ranges[dist.end];
    ++dist.end;
  }

  // Distinct values of a distributed dim must write distinct output
  // elements: each distributed dim is a result of every output's map.
  for (OpOperand &init : op.getDpsInitsMutable()) {
    AffineMap map = op.getMatchingIndexingMap(&init);
    for (unsigned d = dist.begin; d < dist.end; ++d)
      if (!llvm::is_contained(map.getResults(),
                              getAffineDimExpr(d, op.getContext())))
        return std::nullopt;
  }
  // An input that is also an output must be read exactly where it is
  // written; otherwise another iteration may read what one writes.
  for (OpOperand &init : op.getDpsInitsMutable())
    for (OpOperand *input : op.getDpsInputOperands())
      if (input->get() == init.get() &&
          op.getMatchingIndexingMap(input) != op.getMatchingIndexingMap(&init))
        return std::nullopt;
  return dist;
}

/// Replaces the perfectly nested `scf.for` loops `loops[begin..end)` by one
/// `scf.parallel` with the same bounds.
static LogicalResult makeParallel(RewriterBase &rewriter,
                                  ArrayRef<scf::ForOp> loops, unsigned begin,
                                  unsigned end) {
  scf::ForOp outer = loops[begin], inner = loops[end - 1];
  SmallVector<Value> lbs, ubs, steps;
  for (scf::ForOp loop : loops.slice(begin, end - begin)) {
    if (loop.getNumRegionIterArgs() != 0)
      return failure();
    // The bounds of the inner loops must be defined outside the nest.
    for (Value bound :
         {loop.getLowerBound(), loop.getUpperBound(), loop.getStep()}) {
      Operation *owner = isa<BlockArgument>(bound)
                             ? bound.getParentBlock()->getParentOp()
                             : bound.getDefiningOp();
      if (outer->isAncestor(owner))
        return failure();
    }
    lbs.push_back(loop.getLowerBound());
    ubs.push_back(loop.getUpperBound());
    steps.push_back(loop.getStep());
  }
  rewriter.setInsertionPoint(outer);
  auto parallel =
      scf::ParallelOp::create(rewriter, outer.getLoc(), lbs, ubs, steps);
  Block *body = parallel.getBody();
  for (unsigned i = begin; i + 1 < end; ++i)
    rewriter.replaceAllUsesWith(scf::ForOp(loops[i]).getInductionVar(),
                                body->getArgument(i - begin));
  Block *innerBody = inner.getBody();
  rewriter.eraseOp(innerBody->getTerminator());
  rewriter.inlineBlockBefore(innerBody, body->getTerminator(),
                             {body->getArgument(end - 1 - begin)});
  rewriter.eraseOp(outer);
  return success();
}

namespace {
struct ParallelizeLoopsPass
    : public tra::impl::ParallelizeLoopsPassBase<ParallelizeLoopsPass> {
  using ParallelizeLoopsPassBase::ParallelizeLoopsPassBase;

  void runOnOperation() override {
    SmallVector<std::pair<linalg::LinalgOp, Distribution>> work;
    getOperation()->walk([&](linalg::LinalgOp op) {
      if (isInParallelRegion(op))
        return;
      if (std::optional<Distribution> dist = chooseDistribution(op, minWork))
        work.emplace_back(op, *dist);
    });
    IRRewriter rewriter(&getContext());
    for (auto [op, dist] : work) {
      unsigned numLoops = op.getNumLoops();
      rewriter.setInsertionPoint(op);
      FailureOr<linalg::LinalgLoops> loops =
          linalg::linalgOpToLoops(rewriter, op);
      // Ops that do not lower are left to convert-linalg-to-loops, which
      // reports them.
      if (failed(loops))
        continue;
      rewriter.eraseOp(op);
      SmallVector<scf::ForOp> forLoops;
      for (Operation *loop : *loops)
        if (auto forOp = dyn_cast<scf::ForOp>(loop))
          forLoops.push_back(forOp);
      // The loops are correct serial loops already; keep them as they are if
      // they are not the expected nest.
      if (forLoops.size() != loops->size() || forLoops.size() != numLoops)
        continue;
      (void)makeParallel(rewriter, forLoops, dist.begin, dist.end);
    }
  }
};
} // namespace
