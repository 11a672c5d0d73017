//===- LlamaTraining.cpp - LLaMA training loss in tra ---------------------===//
//
// The same layer as the inference step (Llama.cpp) with a batch index `b`
// and keys from the sequence itself: scores "bsgrd,btgd->bgrst" masked to
// t <= s, then the next-token cross-entropy
//   loss = mean_{b,s} (log sum_v exp(logits[b,s,v]) - logits[b,s,target]).
//
//===----------------------------------------------------------------------===//

#include "tra/Frontend/LlamaTraining.h"
#include "ModelBuilder.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::tra;
using namespace mlir::tra::frontend;
using ::tra::rt::LlamaParams;

/// Over the last index of x [rows..., n] (`rows` the letters of the other
/// dimensions, `last` the reduced one's): the maximum m, e = exp(x - m) and
/// z = sum e, the pieces of a softmax (e / z) and of a logsumexp
/// (log z + m).
struct ExpRows {
  Value max, exp, sum;
};
static ExpRows expRows(ModelBuilder &m, Value x, const std::string &rows,
                       char last, ArrayRef<int64_t> rowShape) {
  std::string full = rows + last;
  Value mx = m.einsum(full + "->" + rows, CombinerKind::id, {x}, rowShape,
                      AggregationKind::max);
  auto xType = llvm::cast<RankedTensorType>(x.getType());
  Value e = m.map(full + "," + rows + "->" + full, {x, mx}, xType,
                  [&](OpBuilder &ib, Location loc, ValueRange a) -> Value {
                    Value d = arith::SubFOp::create(ib, loc, a[0], a[1]);
                    return math::ExpOp::create(ib, loc, d);
                  });
  Value z = m.einsum(full + "->" + rows, CombinerKind::id, {e}, rowShape);
  return {mx, e, z};
}

/// One layer over x [B, S, D].
static Value buildTrainingLayer(ModelBuilder &m, const LlamaParams &p,
                                int64_t B, int64_t S, Value x, Value rot,
                                const LayerWeights &w) {
  const int64_t D = p.dim, NH = p.nHeads, NKV = p.nKvHeads, G = NH / NKV,
                HD = p.headDim(), P = HD / 2, F = p.hiddenDim, KVD = p.kvDim();
  Value xn = rmsNorm(m, x, w.attnNorm, "bs", {B, S}, D, p.normEps);
  Value q = m.project("bsd,ed->bse", xn, w.wq, {B, S, D});
  Value k = m.project("bsd,ed->bse", xn, w.wk, {B, S, KVD});
  Value v = m.project("bsd,ed->bse", xn, w.wv, {B, S, KVD});

  Value q5 = m.reshape(q, {B, S, NH, P, 2});
  Value k5 = m.reshape(k, {B, S, NKV, P, 2});
  Value qr = m.einsum("sptu,bshpu->bshpt", CombinerKind::mul, {rot, q5},
                      {B, S, NH, P, 2});
  Value kr = m.einsum("sptu,bshpu->bshpt", CombinerKind::mul, {rot, k5},
                      {B, S, NKV, P, 2});

  Value qg = m.reshape(qr, {B, S, NKV, G, HD});
  Value k4 = m.reshape(kr, {B, S, NKV, HD});
  Value v4 = m.reshape(v, {B, S, NKV, HD});
  Value scores = m.einsum("bsgrd,btgd->bgrst", CombinerKind::mul, {qg, k4},
                          {B, NKV, G, S, S});
  double scale = 1.0 / std::sqrt(double(HD));
  Value masked = m.map(
      "bgrst->bgrst", {scores}, m.f32({B, NKV, G, S, S}),
      [&](OpBuilder &ib, Location loc, ValueRange a) -> Value {
        Value si = IndexOp::create(ib, loc, 3);
        Value ti = IndexOp::create(ib, loc, 4);
        Value visible =
            arith::CmpIOp::create(ib, loc, arith::CmpIPredicate::ule, ti, si);
        Value scaled =
            arith::MulFOp::create(ib, loc, a[0], m.constF32(ib, scale));
        Value ninf = m.constF32(ib, -std::numeric_limits<double>::infinity());
        return arith::SelectOp::create(ib, loc, visible, scaled, ninf);
      });
  ExpRows sm = expRows(m, masked, "bgrs", 't', {B, NKV, G, S});
  Value probs = m.einsum("bgrst,bgrs->bgrst", CombinerKind::div,
                         {sm.exp, sm.sum}, {B, NKV, G, S, S});
  Value attn = m.einsum("bgrst,btgd->bsgrd", CombinerKind::mul, {probs, v4},
                        {B, S, NKV, G, HD});
  Value o =
      m.project("bsd,ed->bse", m.reshape(attn, {B, S, D}), w.wo, {B, S, D});
  Value h = m.einsum("bsd,bsd->bsd", CombinerKind::add, {x, o}, {B, S, D});

  Value hn = rmsNorm(m, h, w.ffnNorm, "bs", {B, S}, D, p.normEps);
  Value a = m.project("bsd,fd->bsf", hn, w.w1, {B, S, F});
  Value b3 = m.project("bsd,fd->bsf", hn, w.w3, {B, S, F});
  Value gate = m.map("", {a, b3}, m.f32({B, S, F}),
                     [&](OpBuilder &ib, Location loc, ValueRange v) -> Value {
                       return swiGluGate(m, ib, loc, v[0], v[1]);
                     });
  Value f = m.project("bsf,df->bsd", gate, w.w2, {B, S, D});
  return m.einsum("bsd,bsd->bsd", CombinerKind::add, {h, f}, {B, S, D});
}

/// mean_{b,s} (logsumexp_v logits[b,s,v] - logits[b,s,targets[b,s]]).
static Value crossEntropy(ModelBuilder &m, Value logits, Value targets,
                          int64_t B, int64_t S, int64_t V) {
  ExpRows rows = expRows(m, logits, "bs", 'v', {B, S});
  // The target's logit: a one-hot join with the logits.
  Value onehot = m.map(
      "bs->bsv", {targets}, m.f32({B, S, V}),
      [&](OpBuilder &ib, Location loc, ValueRange a) -> Value {
        Value vi = arith::IndexCastOp::create(ib, loc, ib.getI64Type(),
                                              IndexOp::create(ib, loc, 2));
        Value hit =
            arith::CmpIOp::create(ib, loc, arith::CmpIPredicate::eq, vi, a[0]);
        return arith::SelectOp::create(ib, loc, hit, m.constF32(ib, 1.0),
                                       m.constF32(ib, 0.0));
      });
  Value picked =
      m.einsum("bsv,bsv->bs", CombinerKind::mul, {logits, onehot}, {B, S});
  Value nll = m.map("bs,bs,bs->bs", {rows.sum, rows.max, picked}, m.f32({B, S}),
                    [&](OpBuilder &ib, Location loc, ValueRange a) -> Value {
                      Value lse = arith::AddFOp::create(
                          ib, loc, math::LogOp::create(ib, loc, a[0]), a[1]);
                      return arith::SubFOp::create(ib, loc, lse, a[2]);
                    });
  Value total = m.einsum("bs->", CombinerKind::id, {nll}, {});
  return m.map("", {total}, m.f32({}),
               [&](OpBuilder &ib, Location loc, ValueRange a) -> Value {
                 return arith::MulFOp::create(
                     ib, loc, a[0], m.constF32(ib, 1.0 / double(B * S)));
               });
}

OwningOpRef<ModuleOp> mlir::tra::buildLlamaTrainingModule(MLIRContext *context,
                                                          const LlamaParams &p,
                                                          int64_t B,
                                                          int64_t S) {
  OpBuilder b(context);
  OwningOpRef<ModuleOp> module = createModelModule(context, b);
  Location loc = module->getLoc();
  ModelBuilder m(b, loc);

  const int64_t T = p.maxSeqLen, P = p.headDim() / 2, V = p.vocabSize,
                D = p.dim;
  ModelSignature sig;
  sig.add("tokens", RankedTensorType::get({B, S}, b.getI64Type()));
  sig.add("targets", RankedTensorType::get({B, S}, b.getI64Type()));
  sig.add("freqs_cos", m.f32({T, P}));
  sig.add("freqs_sin", m.f32({T, P}));
  unsigned firstWeight = sig.types.size();
  for (auto &[name, shape] : ::tra::rt::llamaWeightShapes(p))
    sig.add(name, m.f32(shape));

  func::FuncOp func = sig.create(b, loc, "loss", {m.f32({})}, {"loss"});
  for (unsigned i = firstWeight; i < sig.types.size(); ++i)
    func.setArgAttr(i, "tra.wrt", b.getUnitAttr());
  Block *entry = &func.getBody().front();
  auto arg = [&](unsigned i) { return entry->getArgument(i); };

  Value tokens = arg(0), targets = arg(1);
  Value cos = SliceOp::create(b, loc, m.f32({S, P}), arg(2), 0, 0, S);
  Value sin = SliceOp::create(b, loc, m.f32({S, P}), arg(3), 0, 0, S);
  Value rot = rotaryMatrices(m, cos, sin, S, P);
  unsigned w = firstWeight;
  Value emb = arg(w++);
  Value x = GatherOp::create(b, loc, m.f32({B, S, D}), emb, tokens);
  for (int64_t l = 0; l < p.nLayers; ++l) {
    x = buildTrainingLayer(m, p, B, S, x, rot, LayerWeights::take(entry, w));
  }
  Value norm = arg(w++);
  Value cls = p.sharedClassifier ? emb : arg(w++);
  Value xn = rmsNorm(m, x, norm, "bs", {B, S}, D, p.normEps);
  Value logits = m.project("bsd,vd->bsv", xn, cls, {B, S, V});
  func::ReturnOp::create(b, loc, crossEntropy(m, logits, targets, B, S, V));
  return module;
}
