// One LLaMA transformer block in model-level tra IR, written by hand.
//
// Shapes (small, with grouped-query attention as in stories260K):
//   S = 4 tokens in this step, D = 64 model dim, NH = 8 query heads,
//   NKV = 4 key/value heads (G = NH / NKV = 2 query heads share one), HD = 8
//   head dim (P = HD / 2 = 4 rotary pairs), T = 16 KV-cache length,
//   F = 172 FFN hidden dim. Weights are [out][in] as in Meta's checkpoints.
//
// The step processes tokens at absolute positions pos .. pos+S-1: it writes
// their keys/values into the caches at `pos` and attends causally over
// cache positions t <= pos + s. Cache entries past pos+S-1 may hold
// anything: the mask removes them.
//
// @llama_block = @attention then @ffn, each with a residual connection:
//   h   = x + Attention(RMSNorm(x, attn_norm))
//   out = h + W2 (silu(W1 RMSNorm(h)) * W3 RMSNorm(h))
//
// Run it with the reference interpreter:
//   tra-interpret examples/llama_block.mlir --entry llama_block \
//     --input x=x.npy --input pos=pos.npy ... --output out=out.npy

// RMSNorm over the model dim: x * rsqrt(mean(x^2) + 1e-5) * w.
func.func private @rmsnorm(%x: tensor<4x64xf32>, %w: tensor<64xf32>) -> tensor<4x64xf32> {
  %ss = tra.einsum "sd->s" square (%x) : (tensor<4x64xf32>) -> tensor<4xf32>
  %y = tra.map "sd,s,d->sd" (%x, %ss, %w) : (tensor<4x64xf32>, tensor<4xf32>, tensor<64xf32>) -> tensor<4x64xf32> {
  ^bb0(%xv: f32, %s: f32, %wv: f32):
    %n = arith.constant 64.0 : f32
    %eps = arith.constant 1.0e-05 : f32
    %mean = arith.divf %s, %n : f32
    %t = arith.addf %mean, %eps : f32
    %r = math.rsqrt %t : f32
    %xn = arith.mulf %xv, %r : f32
    %o = arith.mulf %xn, %wv : f32
    tra.yield %o : f32
  }
  return %y : tensor<4x64xf32>
}

// Attention sub-block with RoPE, KV-cache update and grouped-query heads.
func.func @attention(
    %x: tensor<4x64xf32> {tra.name = "x"},
    %pos: tensor<i64> {tra.name = "pos"},
    %k_cache: tensor<16x4x8xf32> {tra.name = "k_cache"},
    %v_cache: tensor<16x4x8xf32> {tra.name = "v_cache"},
    %attn_norm: tensor<64xf32> {tra.name = "attn_norm"},
    %wq: tensor<64x64xf32> {tra.name = "wq"},
    %wk: tensor<32x64xf32> {tra.name = "wk"},
    %wv: tensor<32x64xf32> {tra.name = "wv"},
    %wo: tensor<64x64xf32> {tra.name = "wo"},
    %freqs_cos: tensor<16x4xf32> {tra.name = "freqs_cos"},
    %freqs_sin: tensor<16x4xf32> {tra.name = "freqs_sin"})
    -> (tensor<4x64xf32> {tra.name = "h"},
        tensor<16x4x8xf32> {tra.name = "k_cache_out"},
        tensor<16x4x8xf32> {tra.name = "v_cache_out"}) {
  %xn = func.call @rmsnorm(%x, %attn_norm) : (tensor<4x64xf32>, tensor<64xf32>) -> tensor<4x64xf32>

  // Projections: q = xn Wq^T, k = xn Wk^T, v = xn Wv^T.
  %q = tra.einsum "sd,ed->se" mul (%xn, %wq) : (tensor<4x64xf32>, tensor<64x64xf32>) -> tensor<4x64xf32>
  %k = tra.einsum "sd,ed->se" mul (%xn, %wk) : (tensor<4x64xf32>, tensor<32x64xf32>) -> tensor<4x32xf32>
  %v = tra.einsum "sd,ed->se" mul (%xn, %wv) : (tensor<4x64xf32>, tensor<32x64xf32>) -> tensor<4x32xf32>

  // Rotary embedding of adjacent pairs (Meta's layout). The rows of the
  // frequency tables at positions pos..pos+3 give, per token s and pair p, a
  // 2x2 rotation R[s,p] = [[cos, -sin], [sin, cos]]; rotating is an einsum.
  %positions = tra.map "->s" (%pos) : (tensor<i64>) -> tensor<4xi64> {
  ^bb0(%p: i64):
    %i = tra.index 0
    %ii = arith.index_cast %i : index to i64
    %r = arith.addi %p, %ii : i64
    tra.yield %r : i64
  }
  %cos = tra.gather %freqs_cos[%positions] : tensor<16x4xf32>, tensor<4xi64> -> tensor<4x4xf32>
  %sin = tra.gather %freqs_sin[%positions] : tensor<16x4xf32>, tensor<4xi64> -> tensor<4x4xf32>
  %rot = tra.map "sp,sp->sptu" (%cos, %sin) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4x2x2xf32> {
  ^bb0(%c: f32, %s: f32):
    %t = tra.index 2
    %u = tra.index 3
    %zero = arith.constant 0 : index
    %diag = arith.cmpi eq, %t, %u : index
    %first = arith.cmpi eq, %t, %zero : index
    %ns = arith.negf %s : f32
    %off = arith.select %first, %ns, %s : f32
    %r = arith.select %diag, %c, %off : f32
    tra.yield %r : f32
  }
  %q4 = tra.reshape %q : tensor<4x64xf32> -> tensor<4x8x4x2xf32>
  %k4 = tra.reshape %k : tensor<4x32xf32> -> tensor<4x4x4x2xf32>
  %qr = tra.einsum "sptu,shpu->shpt" mul (%rot, %q4) : (tensor<4x4x2x2xf32>, tensor<4x8x4x2xf32>) -> tensor<4x8x4x2xf32>
  %kr = tra.einsum "sptu,shpu->shpt" mul (%rot, %k4) : (tensor<4x4x2x2xf32>, tensor<4x4x4x2xf32>) -> tensor<4x4x4x2xf32>

  // KV cache: write this step's keys and values at pos.
  %k3 = tra.reshape %kr : tensor<4x4x4x2xf32> -> tensor<4x4x8xf32>
  %v3 = tra.reshape %v : tensor<4x32xf32> -> tensor<4x4x8xf32>
  %kc = tra.update_slice %k3 into %k_cache dim 0 at %pos : tensor<4x4x8xf32> into tensor<16x4x8xf32> at tensor<i64>
  %vc = tra.update_slice %v3 into %v_cache dim 0 at %pos : tensor<4x4x8xf32> into tensor<16x4x8xf32> at tensor<i64>

  // Grouped-query attention: query head h = g * G + r reads KV head g.
  %qg = tra.reshape %qr : tensor<4x8x4x2xf32> -> tensor<4x4x2x8xf32>
  %scores = tra.einsum "sgrd,tgd->grst" mul (%qg, %kc) : (tensor<4x4x2x8xf32>, tensor<16x4x8xf32>) -> tensor<4x2x4x16xf32>
  // Scale by 1/sqrt(HD) and mask causally: key t is visible to query s
  // when t <= pos + s.
  %masked = tra.map "grst,->grst" (%scores, %pos) : (tensor<4x2x4x16xf32>, tensor<i64>) -> tensor<4x2x4x16xf32> {
  ^bb0(%sc: f32, %p: i64):
    %s = tra.index 2
    %t = tra.index 3
    %si = arith.index_cast %s : index to i64
    %ti = arith.index_cast %t : index to i64
    %last = arith.addi %p, %si : i64
    %visible = arith.cmpi sle, %ti, %last : i64
    %scale = arith.constant 0.353553390593 : f32
    %scaled = arith.mulf %sc, %scale : f32
    %ninf = arith.constant 0xFF800000 : f32
    %r = arith.select %visible, %scaled, %ninf : f32
    tra.yield %r : f32
  }
  // Softmax over t: subtract the row max, exponentiate, normalize.
  %mx = tra.einsum "grst->grs" id (%masked) reduce max : (tensor<4x2x4x16xf32>) -> tensor<4x2x4xf32>
  %e = tra.map "grst,grs->grst" (%masked, %mx) : (tensor<4x2x4x16xf32>, tensor<4x2x4xf32>) -> tensor<4x2x4x16xf32> {
  ^bb0(%a: f32, %m: f32):
    %d = arith.subf %a, %m : f32
    %x2 = math.exp %d : f32
    tra.yield %x2 : f32
  }
  %z = tra.einsum "grst->grs" id (%e) : (tensor<4x2x4x16xf32>) -> tensor<4x2x4xf32>
  %probs = tra.einsum "grst,grs->grst" div (%e, %z) : (tensor<4x2x4x16xf32>, tensor<4x2x4xf32>) -> tensor<4x2x4x16xf32>
  %attn = tra.einsum "grst,tgd->sgrd" mul (%probs, %vc) : (tensor<4x2x4x16xf32>, tensor<16x4x8xf32>) -> tensor<4x4x2x8xf32>
  %attn2 = tra.reshape %attn : tensor<4x4x2x8xf32> -> tensor<4x64xf32>

  // Output projection and residual.
  %o = tra.einsum "sd,ed->se" mul (%attn2, %wo) : (tensor<4x64xf32>, tensor<64x64xf32>) -> tensor<4x64xf32>
  %h = tra.einsum "sd,sd->sd" add (%x, %o) : (tensor<4x64xf32>, tensor<4x64xf32>) -> tensor<4x64xf32>
  return %h, %kc, %vc : tensor<4x64xf32>, tensor<16x4x8xf32>, tensor<16x4x8xf32>
}

// SwiGLU feed-forward sub-block with residual.
func.func @ffn(
    %h: tensor<4x64xf32> {tra.name = "h"},
    %ffn_norm: tensor<64xf32> {tra.name = "ffn_norm"},
    %w1: tensor<172x64xf32> {tra.name = "w1"},
    %w2: tensor<64x172xf32> {tra.name = "w2"},
    %w3: tensor<172x64xf32> {tra.name = "w3"})
    -> (tensor<4x64xf32> {tra.name = "out"}) {
  %hn = func.call @rmsnorm(%h, %ffn_norm) : (tensor<4x64xf32>, tensor<64xf32>) -> tensor<4x64xf32>
  %a = tra.einsum "sd,fd->sf" mul (%hn, %w1) : (tensor<4x64xf32>, tensor<172x64xf32>) -> tensor<4x172xf32>
  %b = tra.einsum "sd,fd->sf" mul (%hn, %w3) : (tensor<4x64xf32>, tensor<172x64xf32>) -> tensor<4x172xf32>
  %g = tra.map (%a, %b) : (tensor<4x172xf32>, tensor<4x172xf32>) -> tensor<4x172xf32> {
  ^bb0(%av: f32, %bv: f32):
    %one = arith.constant 1.0 : f32
    %na = arith.negf %av : f32
    %en = math.exp %na : f32
    %den = arith.addf %one, %en : f32
    %silu = arith.divf %av, %den : f32
    %r = arith.mulf %silu, %bv : f32
    tra.yield %r : f32
  }
  %f = tra.einsum "sf,df->sd" mul (%g, %w2) : (tensor<4x172xf32>, tensor<64x172xf32>) -> tensor<4x64xf32>
  %out = tra.einsum "sd,sd->sd" add (%h, %f) : (tensor<4x64xf32>, tensor<4x64xf32>) -> tensor<4x64xf32>
  return %out : tensor<4x64xf32>
}

// The whole block.
func.func @llama_block(
    %x: tensor<4x64xf32> {tra.name = "x"},
    %pos: tensor<i64> {tra.name = "pos"},
    %k_cache: tensor<16x4x8xf32> {tra.name = "k_cache"},
    %v_cache: tensor<16x4x8xf32> {tra.name = "v_cache"},
    %attn_norm: tensor<64xf32> {tra.name = "attn_norm"},
    %wq: tensor<64x64xf32> {tra.name = "wq"},
    %wk: tensor<32x64xf32> {tra.name = "wk"},
    %wv: tensor<32x64xf32> {tra.name = "wv"},
    %wo: tensor<64x64xf32> {tra.name = "wo"},
    %freqs_cos: tensor<16x4xf32> {tra.name = "freqs_cos"},
    %freqs_sin: tensor<16x4xf32> {tra.name = "freqs_sin"},
    %ffn_norm: tensor<64xf32> {tra.name = "ffn_norm"},
    %w1: tensor<172x64xf32> {tra.name = "w1"},
    %w2: tensor<64x172xf32> {tra.name = "w2"},
    %w3: tensor<172x64xf32> {tra.name = "w3"})
    -> (tensor<4x64xf32> {tra.name = "out"},
        tensor<16x4x8xf32> {tra.name = "k_cache_out"},
        tensor<16x4x8xf32> {tra.name = "v_cache_out"}) {
  %h, %kc, %vc = func.call @attention(%x, %pos, %k_cache, %v_cache, %attn_norm, %wq, %wk, %wv, %wo, %freqs_cos, %freqs_sin)
      : (tensor<4x64xf32>, tensor<i64>, tensor<16x4x8xf32>, tensor<16x4x8xf32>, tensor<64xf32>, tensor<64x64xf32>, tensor<32x64xf32>, tensor<32x64xf32>, tensor<64x64xf32>, tensor<16x4xf32>, tensor<16x4xf32>)
      -> (tensor<4x64xf32>, tensor<16x4x8xf32>, tensor<16x4x8xf32>)
  %out = func.call @ffn(%h, %ffn_norm, %w1, %w2, %w3)
      : (tensor<4x64xf32>, tensor<64xf32>, tensor<172x64xf32>, tensor<64x172xf32>, tensor<172x64xf32>) -> tensor<4x64xf32>
  return %out, %kc, %vc : tensor<4x64xf32>, tensor<16x4x8xf32>, tensor<16x4x8xf32>
}
