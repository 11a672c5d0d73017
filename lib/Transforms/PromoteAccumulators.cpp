//===- PromoteAccumulators.cpp - Reduction accumulators into registers ----===//
//
// `convert-linalg-to-loops` lowers a reduction to a loop that loads the
// output element, combines it with the next input and stores it back on
// every iteration. LLVM cannot keep that element in a register: the output
// and input pointers may alias as far as it knows (inside an OpenMP outlined
// function they arrive through a struct), so it keeps the store in the loop,
// which also stops the loop vectorizer. This pass does what LLVM's LICM
// would do with alias information: the element is loaded once before the
// loop, carried through it as an `iter_args` value and stored once after.
//
// The combiner of a promoted `arith.addf`/`arith.mulf` accumulator is marked
// `reassoc` so that LLVM may vectorize the reduction (a sum of partial sums;
// floating-point sums in another order, as every vectorized BLAS or PyTorch
// reduction computes them). `arith.maximumf`/`minimumf` need no flag.
//
// With `disable-unroll` (CPU code), the loop also gets LLVM loop metadata
// that disables unrolling unless it runs fewer than kMinVectorTrips
// iterations: LLVM unrolls a loop of a constant trip count (64 keys of an
// attention block) fully before its loop vectorizer runs, and then
// vectorizes the enclosing loop instead, across the rows, with a gather for
// every element (reductions along the contiguous dimension ran several
// times slower that way).
//
//===----------------------------------------------------------------------===//

#include "tra/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMAttrs.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir {
namespace tra {
#define GEN_PASS_DEF_PROMOTEACCUMULATORSPASS
#include "tra/Transforms/Passes.h.inc"
} // namespace tra
} // namespace mlir

using namespace mlir;

/// Returns the buffer `memref` is a view of (through subviews, casts and
/// reshapes), or `memref` itself.
static Value getRootBuffer(Value memref) {
  while (Operation *def = memref.getDefiningOp()) {
    if (auto view = dyn_cast<ViewLikeOpInterface>(def))
      memref = view.getViewSource();
    else if (auto cast = dyn_cast<memref::CastOp>(def))
      memref = cast.getSource();
    else
      break;
  }
  return memref;
}

namespace {
/// One element of a buffer that a loop reads and writes at loop-invariant
/// indices: every `load` precedes the one `store`.
struct Accumulator {
  memref::StoreOp store;
  SmallVector<memref::LoadOp> loads;
};
} // namespace

/// Returns the accumulators of the innermost loop `loop` that can be kept in
/// a register, or nothing if its body does something the analysis does not
/// follow (nested regions, writes other than plain stores, ops with unknown
/// memory effects).
static SmallVector<Accumulator> findAccumulators(scf::ForOp loop) {
  Block *body = loop.getBody();
  SmallVector<memref::LoadOp> loads;
  SmallVector<memref::StoreOp> stores;
  for (Operation &op : body->without_terminator()) {
    if (auto load = dyn_cast<memref::LoadOp>(op)) {
      loads.push_back(load);
      continue;
    }
    if (auto store = dyn_cast<memref::StoreOp>(op)) {
      stores.push_back(store);
      continue;
    }
    if (op.getNumRegions() != 0 || !isMemoryEffectFree(&op))
      return {};
  }
  auto invariant = [&](ValueRange values) {
    return llvm::all_of(values, [&](Value v) {
      return !loop->isAncestor(v.getParentBlock()->getParentOp());
    });
  };
  SmallVector<Accumulator> result;
  for (memref::StoreOp store : stores) {
    Value root = getRootBuffer(store.getMemref());
    if (!invariant(store.getIndices()) || !invariant(store.getMemref()))
      continue;
    // The only access to this buffer in the loop besides loads of the same
    // element before the store.
    bool promotable = true;
    Accumulator acc{store, {}};
    for (memref::StoreOp other : stores)
      if (other != store && getRootBuffer(other.getMemref()) == root)
        promotable = false;
    for (memref::LoadOp load : loads) {
      if (getRootBuffer(load.getMemref()) != root)
        continue;
      if (load.getMemref() != store.getMemref() ||
          load.getIndices() != store.getIndices() ||
          !load->isBeforeInBlock(store)) {
        promotable = false;
        break;
      }
      acc.loads.push_back(load);
    }
    if (promotable)
      result.push_back(std::move(acc));
  }
  return result;
}

/// Marks the combiner of the promoted accumulator `iterArg` reassociable if
/// it is an add or a multiply of the accumulator with something else whose
/// result is what the loop yields.
static void allowReassociation(BlockArgument iterArg, Value yielded) {
  if (!iterArg.hasOneUse())
    return;
  Operation *user = *iterArg.getUsers().begin();
  if (user->getNumResults() != 1 || user->getResult(0) != yielded)
    return;
  if (!isa<arith::AddFOp, arith::MulFOp>(user))
    return;
  auto fastmath = cast<arith::ArithFastMathInterface>(user);
  arith::FastMathFlags flags = fastmath.getFastMathFlagsAttr().getValue();
  user->setAttr(fastmath.getFastMathAttrName(),
                arith::FastMathFlagsAttr::get(
                    user->getContext(), flags | arith::FastMathFlags::reassoc));
}

/// Fewer iterations than this: LLVM may unroll the reduction loop (it is
/// shorter than one AVX-512 vector of f32).
static constexpr int64_t kMinVectorTrips = 16;

/// Keeps LLVM from unrolling the reduction loop `loop` (unless it is short),
/// so that its loop vectorizer vectorizes this loop, not the one around it.
static void keepForVectorizer(scf::ForOp loop) {
  std::optional<APInt> trips = loop.getStaticTripCount();
  if (trips && trips->getSExtValue() < kMinVectorTrips)
    return;
  MLIRContext *context = loop.getContext();
  auto unroll = LLVM::LoopUnrollAttr::get(
      context, /*disable=*/BoolAttr::get(context, true), /*count=*/{},
      /*runtimeDisable=*/{}, /*full=*/{}, /*followupUnrolled=*/{},
      /*followupRemainder=*/{}, /*followupAll=*/{});
  auto annotation = LLVM::LoopAnnotationAttr::get(
      context, /*disableNonforced=*/{}, /*vectorize=*/{}, /*interleave=*/{},
      unroll, /*unrollAndJam=*/{}, /*licm=*/{}, /*distribute=*/{},
      /*pipeline=*/{}, /*peeled=*/{}, /*unswitch=*/{}, /*mustProgress=*/{},
      /*isVectorized=*/{}, /*startLoc=*/{}, /*endLoc=*/{},
      /*parallelAccesses=*/{});
  // scf-to-cf moves the LLVM dialect's attributes of the loop onto its
  // latch branch, which becomes the loop's !llvm.loop metadata.
  loop->setAttr(LLVM::LoopAnnotationAttr::name, annotation);
}

/// Carries the accumulators of `loop` in registers.
static void promote(RewriterBase &rewriter, scf::ForOp loop,
                    MutableArrayRef<Accumulator> accumulators,
                    bool disableUnroll) {
  rewriter.setInsertionPoint(loop);
  SmallVector<Value> inits;
  for (Accumulator &acc : accumulators)
    inits.push_back(memref::LoadOp::create(rewriter, acc.store.getLoc(),
                                           acc.store.getMemref(),
                                           acc.store.getIndices()));
  unsigned firstNew = loop.getNumRegionIterArgs();
  FailureOr<LoopLikeOpInterface> replaced =
      cast<LoopLikeOpInterface>(loop.getOperation())
          .replaceWithAdditionalYields(
              rewriter, inits, /*replaceInitOperandUsesInLoop=*/false,
              [&](OpBuilder &, Location, ArrayRef<BlockArgument>) {
                SmallVector<Value> yields;
                for (Accumulator &acc : accumulators)
                  yields.push_back(acc.store.getValueToStore());
                return yields;
              });
  if (failed(replaced))
    return;
  auto newLoop = cast<scf::ForOp>(replaced->getOperation());
  if (disableUnroll)
    keepForVectorizer(newLoop);
  rewriter.setInsertionPointAfter(newLoop);
  for (auto [i, acc] : llvm::enumerate(accumulators)) {
    BlockArgument iterArg = newLoop.getRegionIterArgs()[firstNew + i];
    for (memref::LoadOp load : acc.loads)
      rewriter.replaceOp(load, iterArg);
    memref::StoreOp::create(rewriter, acc.store.getLoc(),
                            newLoop.getResult(firstNew + i),
                            acc.store.getMemref(), acc.store.getIndices());
    allowReassociation(iterArg, acc.store.getValueToStore());
    rewriter.eraseOp(acc.store);
  }
}

namespace {
struct PromoteAccumulatorsPass
    : public tra::impl::PromoteAccumulatorsPassBase<PromoteAccumulatorsPass> {
  using PromoteAccumulatorsPassBase::PromoteAccumulatorsPassBase;

  void runOnOperation() override {
    SmallVector<scf::ForOp> innermost;
    getOperation()->walk([&](scf::ForOp loop) {
      bool hasNestedLoop = false;
      loop.getBody()->walk([&](LoopLikeOpInterface) { hasNestedLoop = true; });
      if (!hasNestedLoop)
        innermost.push_back(loop);
    });
    IRRewriter rewriter(&getContext());
    for (scf::ForOp loop : innermost) {
      SmallVector<Accumulator> accumulators = findAccumulators(loop);
      if (!accumulators.empty())
        promote(rewriter, loop, accumulators, disableUnroll);
    }
  }
};
} // namespace
