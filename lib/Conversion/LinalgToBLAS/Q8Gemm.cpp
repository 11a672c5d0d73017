//===- Q8Gemm.cpp - Products by Q8_0 weights to a runtime call ------------===//
//
// tra multiplies by weights quantised as llama.cpp's Q8_0 with the einsum
// "sBJ,eBJ,eB->se" (ModelBuilder::projectQ8): f32 activations [.., K/32,
// 32], i8 values [N, K/32, 32] and f16 scales [N, K/32]. Lowered to linalg
// on buffers it is a generic of three inputs whose body widens the value
// (sitofp) and the scale (extf), multiplies the three and adds the product
// to the output. Where the operands' layouts allow, it becomes one call of
// the CPU runtime's `tra_exec_gemm_q8` (runtime/exec/ABI.h), which reads
// each weight byte once and dequantises it in registers; anything else
// stays a loop nest, which computes the same.
//
//===----------------------------------------------------------------------===//

#include "Contraction.h"

#include "tra/Transforms/MemRefAddress.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mlir::tra::blas;

static constexpr llvm::StringLiteral kQ8GemmName = "tra_exec_gemm_q8";
/// The values of one Q8_0 block.
static constexpr int64_t kBlock = 32;

/// Whether `body` (of a generic with inputs a, q, s and output c) yields
/// c + a * sitofp(q) * extf(s), the product in any order, each factor once.
static bool isQ8ProductBody(Block &body) {
  if (body.getNumArguments() != 4)
    return false;
  auto yield = dyn_cast<linalg::YieldOp>(body.getTerminator());
  if (!yield || yield.getValues().size() != 1)
    return false;
  auto add = yield.getValues()[0].getDefiningOp<arith::AddFOp>();
  if (!add)
    return false;
  Value out = body.getArgument(3), product;
  if (add.getLhs() == out)
    product = add.getRhs();
  else if (add.getRhs() == out)
    product = add.getLhs();
  else
    return false;
  // The leaves of the tree of multiplications under `product`.
  SmallVector<Value> leaves;
  SmallVector<Value> work = {product};
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (auto mul = v.getDefiningOp<arith::MulFOp>();
        mul && mul->getBlock() == &body) {
      work.push_back(mul.getLhs());
      work.push_back(mul.getRhs());
      continue;
    }
    leaves.push_back(v);
  }
  if (leaves.size() != 3)
    return false;
  bool a = false, q = false, s = false;
  for (Value leaf : leaves) {
    if (leaf == body.getArgument(0)) {
      a = true;
    } else if (auto toFloat = leaf.getDefiningOp<arith::SIToFPOp>()) {
      q |= toFloat.getIn() == body.getArgument(1);
    } else if (auto ext = leaf.getDefiningOp<arith::ExtFOp>()) {
      s |= ext.getIn() == body.getArgument(2);
    }
  }
  // Nothing else in the body: two conversions, two multiplications, the add.
  return a && q && s && body.getOperations().size() == 6;
}

std::optional<Q8Gemm> mlir::tra::blas::matchQ8Gemm(linalg::LinalgOp op) {
  auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
  if (!generic || !op.hasPureBufferSemantics() || op.getNumDpsInputs() != 3 ||
      op.getNumDpsInits() != 1)
    return std::nullopt;
  SmallVector<MemRefType> types;
  SmallVector<SmallVector<int64_t>> strides;
  for (Value operand : op->getOperands()) {
    auto type = dyn_cast<MemRefType>(operand.getType());
    SmallVector<int64_t> s;
    int64_t offset;
    if (!type || !type.hasStaticShape() ||
        failed(type.getStridesAndOffset(s, offset)) ||
        llvm::any_of(s, ShapedType::isDynamic))
      return std::nullopt;
    types.push_back(type);
    strides.push_back(s);
  }
  if (!types[0].getElementType().isF32() ||
      !types[1].getElementType().isInteger(8) ||
      !types[2].getElementType().isF16() || !types[3].getElementType().isF32())
    return std::nullopt;
  if (!isQ8ProductBody(generic.getRegion().front()))
    return std::nullopt;

  // Loop dimensions: m (A, C), n (Q, S, C), the block b (A, Q, S; reduced)
  // and the value j in it (A, Q; reduced).
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  if (!llvm::all_of(maps,
                    [](AffineMap map) { return map.isProjectedPermutation(); }))
    return std::nullopt;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<unsigned> m, n, b, j;
  for (unsigned d = 0, e = maps[3].getNumDims(); d < e; ++d) {
    bool inA = maps[0].isFunctionOfDim(d), inQ = maps[1].isFunctionOfDim(d),
         inS = maps[2].isFunctionOfDim(d), inC = maps[3].isFunctionOfDim(d);
    if (ranges[d] == 1 && !(inA && inQ && !inC))
      continue; // Selects one element: no part of the matrices.
    if (inA && inC && !inQ && !inS)
      m.push_back(d);
    else if (!inA && inQ && inS && inC)
      n.push_back(d);
    else if (inA && inQ && inS && !inC)
      b.push_back(d);
    else if (inA && inQ && !inS && !inC)
      j.push_back(d);
    else
      return std::nullopt;
  }
  if (b.size() != 1 || j.size() != 1 || ranges[j[0]] != kBlock)
    return std::nullopt;

  auto position = [&](unsigned operand, unsigned d) {
    return *maps[operand].getResultPosition(
        getAffineDimExpr(d, op.getContext()));
  };
  auto stride = [&](unsigned operand, unsigned d) {
    return strides[operand][position(operand, d)];
  };
  // Blocks of 32 contiguous values, one after another, in A and Q; one
  // scale after another in S.
  for (unsigned operand : {0u, 1u})
    if (stride(operand, j[0]) != 1 || stride(operand, b[0]) != kBlock)
      return std::nullopt;
  if (stride(2, b[0]) != 1)
    return std::nullopt;

  // The rows: m (in C's order) in A and C, n in Q, S and C.
  auto ordered = [&](SmallVector<unsigned> dims) {
    llvm::sort(dims, [&](unsigned x, unsigned y) {
      return position(3, x) < position(3, y);
    });
    return dims;
  };
  m = ordered(m);
  n = ordered(n);
  auto group = [&](ArrayRef<unsigned> dims, unsigned operand) {
    return flattenGroup(dims, maps[operand], types[operand].getShape(),
                        strides[operand]);
  };
  std::optional<DimGroup> mA = group(m, 0), mC = group(m, 3), nQ = group(n, 1),
                          nS = group(n, 2), nC = group(n, 3);
  if (!mA || !mC || !nQ || !nS || !nC || n.empty())
    return std::nullopt;
  // C's columns contiguous, the rows apart by at least a row.
  if (nC->stride != 1)
    return std::nullopt;
  Q8Gemm gemm;
  gemm.m = mC->size;
  gemm.n = nC->size;
  gemm.blocks = ranges[b[0]];
  gemm.lda = m.empty() ? gemm.blocks * kBlock : mA->stride;
  gemm.ldq = nQ->stride;
  gemm.lds = nS->stride;
  gemm.ldc = m.empty() ? gemm.n : mC->stride;
  if ((gemm.m > 1 && (gemm.lda < gemm.blocks * kBlock || gemm.ldc < gemm.n)) ||
      (gemm.n > 1 &&
       (gemm.ldq < gemm.blocks * kBlock || gemm.lds < gemm.blocks)))
    return std::nullopt;
  return gemm;
}

LogicalResult mlir::tra::blas::replaceWithQ8Gemm(ModuleOp module,
                                                 linalg::LinalgOp op,
                                                 const Q8Gemm &gemm) {
  MLIRContext *ctx = module.getContext();
  Builder types(ctx);
  Type i64 = types.getI64Type(), f32 = types.getF32Type();
  Type ptr = LLVM::LLVMPointerType::get(ctx);
  FunctionType type = types.getFunctionType(
      {i64, i64, i64, ptr, i64, ptr, i64, ptr, i64, f32, ptr, i64}, {});
  FailureOr<func::FuncOp> callee =
      getOrInsertRuntimeFunction(module, kQ8GemmName, type);
  if (failed(callee))
    return failure();

  OpBuilder b(op);
  Location loc = op.getLoc();
  Value c = op.getDpsInits()[0];
  bool zeroInit = foldZeroFill(op, c);
  auto int64 = [&](int64_t v) -> Value {
    return arith::ConstantIntOp::create(b, loc, v, 64);
  };
  auto pointer = [&](Value memref) {
    return tra::toLLVMPointer(b, loc, tra::getElementAddress(b, loc, memref));
  };
  SmallVector<Value> args = {
      int64(gemm.m),
      int64(gemm.n),
      int64(gemm.blocks),
      pointer(op.getDpsInputs()[0]),
      int64(gemm.lda),
      pointer(op.getDpsInputs()[1]),
      int64(gemm.ldq),
      pointer(op.getDpsInputs()[2]),
      int64(gemm.lds),
      arith::ConstantFloatOp::create(b, loc, types.getF32Type(),
                                     APFloat(zeroInit ? 0.0f : 1.0f)),
      pointer(c),
      int64(gemm.ldc)};
  func::CallOp::create(b, loc, *callee, args);
  op->erase();
  return success();
}
