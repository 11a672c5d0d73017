//===- Llama.cpp - LLaMA model front end ----------------------------------===//

#include "tra/Frontend/Llama.h"
#include "ModelBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Builders.h"

#include <cmath>
#include <functional>

using namespace mlir;
using namespace mlir::tra;
using namespace mlir::tra::frontend;
using ::tra::rt::LlamaParams;

namespace {

/// One transformer layer over x [S, D]; returns the new x and caches.
std::tuple<Value, Value, Value>
buildLayer(ModelBuilder &m, const LlamaParams &p, int64_t s, Value x, Value pos,
           Value rot, Value kCache, Value vCache, const LayerWeights &w) {
  const int64_t D = p.dim, NH = p.nHeads, NKV = p.nKvHeads, G = NH / NKV,
                HD = p.headDim(), P = HD / 2, T = p.maxSeqLen, F = p.hiddenDim,
                KVD = p.kvDim();
  Value xn = rmsNorm(m, x, w.attnNorm, "s", {s}, D, p.normEps);
  Value q = m.project("sd,ed->se", xn, w.wq, {s, D});
  Value k = m.project("sd,ed->se", xn, w.wk, {s, KVD});
  Value v = m.project("sd,ed->se", xn, w.wv, {s, KVD});

  // Rotary embedding: a 2x2 rotation per (token, pair).
  Value q4 = m.reshape(q, {s, NH, P, 2});
  Value k4 = m.reshape(k, {s, NKV, P, 2});
  Value qr =
      m.einsum("sptu,shpu->shpt", CombinerKind::mul, {rot, q4}, {s, NH, P, 2});
  Value kr =
      m.einsum("sptu,shpu->shpt", CombinerKind::mul, {rot, k4}, {s, NKV, P, 2});

  // KV cache update at pos.
  Value k3 = m.reshape(kr, {s, NKV, HD});
  Value v3 = m.reshape(v, {s, NKV, HD});
  Value kc =
      UpdateSliceOp::create(m.b, m.loc, kCache.getType(), k3, kCache, 0, pos);
  Value vc =
      UpdateSliceOp::create(m.b, m.loc, vCache.getType(), v3, vCache, 0, pos);

  // Grouped-query attention: query head h = g * G + r reads KV head g.
  Value qg = m.reshape(qr, {s, NKV, G, HD});
  Value scores =
      m.einsum("sgrd,tgd->grst", CombinerKind::mul, {qg, kc}, {NKV, G, s, T});
  double scale = 1.0 / std::sqrt(double(HD));
  Value masked = m.map(
      "grst,->grst", {scores, pos}, m.f32({NKV, G, s, T}),
      [&](OpBuilder &ib, Location loc, ValueRange a) -> Value {
        Value si = arith::IndexCastOp::create(ib, loc, ib.getI64Type(),
                                              IndexOp::create(ib, loc, 2));
        Value ti = arith::IndexCastOp::create(ib, loc, ib.getI64Type(),
                                              IndexOp::create(ib, loc, 3));
        Value last = arith::AddIOp::create(ib, loc, a[1], si);
        Value visible =
            arith::CmpIOp::create(ib, loc, arith::CmpIPredicate::sle, ti, last);
        Value scaled =
            arith::MulFOp::create(ib, loc, a[0], m.constF32(ib, scale));
        Value ninf = m.constF32(ib, -std::numeric_limits<double>::infinity());
        return arith::SelectOp::create(ib, loc, visible, scaled, ninf);
      });
  Value mx = m.einsum("grst->grs", CombinerKind::id, {masked}, {NKV, G, s},
                      AggregationKind::max);
  Value e = m.map("grst,grs->grst", {masked, mx}, m.f32({NKV, G, s, T}),
                  [&](OpBuilder &ib, Location loc, ValueRange a) -> Value {
                    Value d = arith::SubFOp::create(ib, loc, a[0], a[1]);
                    return math::ExpOp::create(ib, loc, d);
                  });
  Value z = m.einsum("grst->grs", CombinerKind::id, {e}, {NKV, G, s});
  Value probs =
      m.einsum("grst,grs->grst", CombinerKind::div, {e, z}, {NKV, G, s, T});
  Value attn = m.einsum("grst,tgd->sgrd", CombinerKind::mul, {probs, vc},
                        {s, NKV, G, HD});
  Value attn2 = m.reshape(attn, {s, D});
  Value o = m.project("sd,ed->se", attn2, w.wo, {s, D});
  Value h = m.einsum("sd,sd->sd", CombinerKind::add, {x, o}, {s, D});

  // SwiGLU feed-forward.
  Value hn = rmsNorm(m, h, w.ffnNorm, "s", {s}, D, p.normEps);
  Value a = m.project("sd,fd->sf", hn, w.w1, {s, F});
  Value bb = m.project("sd,fd->sf", hn, w.w3, {s, F});
  Value g = m.map("", {a, bb}, m.f32({s, F}),
                  [&](OpBuilder &ib, Location loc, ValueRange v) -> Value {
                    return swiGluGate(m, ib, loc, v[0], v[1]);
                  });
  Value f = m.project("sf,df->sd", g, w.w2, {s, D});
  Value out = m.einsum("sd,sd->sd", CombinerKind::add, {h, f}, {s, D});
  return {out, kc, vc};
}

} // namespace

/// The element type of a weight of `dtype`.
static Type weightElementType(OpBuilder &b, ::tra::rt::DType dtype) {
  switch (dtype) {
  case ::tra::rt::DType::F16:
    return b.getF16Type();
  case ::tra::rt::DType::BF16:
    return b.getBF16Type();
  case ::tra::rt::DType::I8:
    return b.getIntegerType(8);
  default:
    return b.getF32Type();
  }
}

OwningOpRef<ModuleOp>
mlir::tra::buildLlamaModule(MLIRContext *context, const LlamaParams &p,
                            int64_t s, const LlamaWeightDTypes &weightDTypes,
                            bool lastRowLogits) {
  OpBuilder b(context);
  OwningOpRef<ModuleOp> module = createModelModule(context, b);
  Location loc = module->getLoc();
  ModelBuilder m(b, loc);

  const int64_t T = p.maxSeqLen, P = p.headDim() / 2, V = p.vocabSize,
                D = p.dim;
  ModelSignature sig;
  sig.add("tokens", RankedTensorType::get({s}, b.getI64Type()));
  sig.add("pos", RankedTensorType::get({}, b.getI64Type()));
  // One row of logits: a one-token step has no other.
  const bool oneRow = lastRowLogits && s > 1;
  if (oneRow)
    sig.add("logits_row", RankedTensorType::get({}, b.getI64Type()));
  const unsigned tables = sig.types.size();
  sig.add("freqs_cos", m.f32({T, P}));
  sig.add("freqs_sin", m.f32({T, P}));
  auto cacheType = m.f32({T, p.nKvHeads, p.headDim()});
  for (int64_t l = 0; l < p.nLayers; ++l) {
    sig.add("layers." + std::to_string(l) + ".k_cache", cacheType);
    sig.add("layers." + std::to_string(l) + ".v_cache", cacheType);
  }
  unsigned firstWeight = sig.types.size();
  // The argument of each Q8_0 weight and the shape of its scales.
  SmallVector<std::pair<unsigned, SmallVector<int64_t>>> quantised;
  for (auto &[name, shape] : ::tra::rt::llamaWeightShapes(p)) {
    auto dtype = weightDTypes.find(name);
    Type elt = dtype == weightDTypes.end()
                   ? b.getF32Type()
                   : weightElementType(b, dtype->second);
    if (elt.isInteger(8)) {
      assert(shape.size() == 2 && shape[1] % ::tra::rt::kQ8BlockValues == 0 &&
             "a Q8_0 weight is a matrix of whole blocks");
      quantised.push_back({unsigned(sig.types.size()),
                           {shape[0], shape[1] / ::tra::rt::kQ8BlockValues}});
    }
    sig.add(name, RankedTensorType::get(shape, elt));
  }
  // Their scales follow the weights, in the same order.
  const unsigned firstScales = sig.types.size();
  for (auto &[index, shape] : quantised)
    sig.add(::tra::rt::q8ScalesName(sig.names[index]),
            RankedTensorType::get(shape, b.getF16Type()));

  SmallVector<Type> resultTypes = {m.f32({oneRow ? 1 : s, V})};
  SmallVector<std::string> resultNames = {"logits"};
  for (int64_t l = 0; l < p.nLayers; ++l) {
    for (const char *kind : {"k", "v"}) {
      resultTypes.push_back(cacheType);
      resultNames.push_back("layers." + std::to_string(l) + "." + kind +
                            "_cache_out");
    }
  }

  func::FuncOp func = sig.create(b, loc, "forward", resultTypes, resultNames);
  Block *entry = &func.getBody().front();
  auto arg = [&](unsigned i) { return entry->getArgument(i); };
  for (auto [i, q] : llvm::enumerate(quantised))
    m.q8Scales[arg(q.first)] = arg(firstScales + i);

  Value tokens = arg(0), pos = arg(1), fcos = arg(tables),
        fsin = arg(tables + 1);
  const unsigned firstCache = tables + 2;
  unsigned w = firstWeight;
  Value emb = arg(w++);
  Type embType = llvm::cast<RankedTensorType>(emb.getType()).getElementType();
  Value x = GatherOp::create(b, loc, RankedTensorType::get({s, D}, embType),
                             emb, tokens);
  if (Value scales = m.q8Scales.lookup(emb)) {
    auto scalesType = llvm::cast<RankedTensorType>(scales.getType());
    x = m.dequantiseRows(
        x, GatherOp::create(b, loc,
                            RankedTensorType::get({s, scalesType.getDimSize(1)},
                                                  scalesType.getElementType()),
                            scales, tokens));
  }
  x = m.convert(x, b.getF32Type());

  // Per-position 2x2 rotations for positions pos .. pos+s-1.
  Value positions =
      m.map("->s", {pos}, RankedTensorType::get({s}, b.getI64Type()),
            [&](OpBuilder &ib, Location l, ValueRange a) -> Value {
              Value i = arith::IndexCastOp::create(ib, l, ib.getI64Type(),
                                                   IndexOp::create(ib, l, 0));
              return arith::AddIOp::create(ib, l, a[0], i);
            });
  Value cos = GatherOp::create(b, loc, m.f32({s, P}), fcos, positions);
  Value sin = GatherOp::create(b, loc, m.f32({s, P}), fsin, positions);
  Value rot = rotaryMatrices(m, cos, sin, s, P);

  SmallVector<Value> results(1);
  for (int64_t l = 0; l < p.nLayers; ++l) {
    LayerWeights lw = LayerWeights::take(entry, w);
    auto [out, kc, vc] =
        buildLayer(m, p, s, x, pos, rot, arg(firstCache + 2 * l),
                   arg(firstCache + 1 + 2 * l), lw);
    x = out;
    results.push_back(kc);
    results.push_back(vc);
  }
  Value norm = arg(w++);
  Value cls = p.sharedClassifier ? emb : arg(w++);
  int64_t rows = s;
  if (oneRow) {
    // The row `logits_row` of the last hidden state, as a one-row gather.
    Value index =
        m.map("->r", {arg(2)}, RankedTensorType::get({1}, b.getI64Type()),
              [&](OpBuilder &, Location, ValueRange a) { return a[0]; });
    x = GatherOp::create(b, loc, m.f32({1, D}), x, index);
    rows = 1;
  }
  Value xn = rmsNorm(m, x, norm, "s", {rows}, D, p.normEps);
  results[0] = m.project("sd,vd->sv", xn, cls, {rows, V});
  func::ReturnOp::create(b, loc, results);
  return module;
}
