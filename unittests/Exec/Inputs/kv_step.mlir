// The KV-cache traffic of one decoding step, for AliasTest.cpp: the new key
// and value rows are written into their caches at `pos`, and the scores of
// the query against every row of the updated key cache are returned. Both
// updated caches may share their buffer with the input caches.
func.func @main(%q: tensor<4xf32> {tra.name = "q"},
                %k: tensor<2x4xf32> {tra.name = "k"},
                %v: tensor<2x4xf32> {tra.name = "v"},
                %kcache: tensor<16x4xf32> {tra.name = "k_cache"},
                %vcache: tensor<16x4xf32> {tra.name = "v_cache"},
                %pos: tensor<i64> {tra.name = "pos"})
    -> (tensor<16xf32> {tra.name = "scores"},
        tensor<16x4xf32> {tra.name = "k_cache_out"},
        tensor<16x4xf32> {tra.name = "v_cache_out"}) {
  %kc = tra.update_slice %k into %kcache dim 0 at %pos
      : tensor<2x4xf32> into tensor<16x4xf32> at tensor<i64>
  %vc = tra.update_slice %v into %vcache dim 0 at %pos
      : tensor<2x4xf32> into tensor<16x4xf32> at tensor<i64>
  %s = tra.einsum "td,d->t" mul (%kc, %q)
      : (tensor<16x4xf32>, tensor<4xf32>) -> tensor<16xf32>
  return %s, %kc, %vc : tensor<16xf32>, tensor<16x4xf32>, tensor<16x4xf32>
}
