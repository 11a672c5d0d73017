// Ops whose loops tra-parallelize-loops distributes over OpenMP threads
// (elementwise map, row reductions of softmax and RMSNorm, gather) and one
// too small to (test/Integration/threads.test).
func.func @main(%x: tensor<256x2048xf32> {tra.name = "x"},
                %b: tensor<2048xf32> {tra.name = "b"},
                %w: tensor<2048xf32> {tra.name = "w"},
                %table: tensor<1000x512xf32> {tra.name = "table"},
                %ids: tensor<128xi64> {tra.name = "ids"},
                %small: tensor<8x8xf32> {tra.name = "small"})
    -> (tensor<256x2048xf32> {tra.name = "relu"},
        tensor<256x2048xf32> {tra.name = "softmax"},
        tensor<256x2048xf32> {tra.name = "rmsnorm"},
        tensor<128x512xf32> {tra.name = "gathered"},
        tensor<8x8xf32> {tra.name = "small_exp"}) {
  %relu = tra.map "bo,o->bo" (%x, %b) : (tensor<256x2048xf32>, tensor<2048xf32>) -> tensor<256x2048xf32> {
  ^bb0(%s: f32, %c: f32):
    %zero = arith.constant 0.0 : f32
    %t = arith.addf %s, %c : f32
    %r = arith.maximumf %t, %zero : f32
    tra.yield %r : f32
  }
  %m = tra.einsum "rk->r" id (%x) reduce max : (tensor<256x2048xf32>) -> tensor<256xf32>
  %e = tra.map "rk,r->rk" (%x, %m) : (tensor<256x2048xf32>, tensor<256xf32>) -> tensor<256x2048xf32> {
  ^bb0(%v: f32, %mv: f32):
    %d = arith.subf %v, %mv : f32
    %r = math.exp %d : f32
    tra.yield %r : f32
  }
  %z = tra.einsum "rk->r" id (%e) : (tensor<256x2048xf32>) -> tensor<256xf32>
  %softmax = tra.einsum "rk,r->rk" div (%e, %z) : (tensor<256x2048xf32>, tensor<256xf32>) -> tensor<256x2048xf32>
  %ss = tra.einsum "sd->s" square (%x) : (tensor<256x2048xf32>) -> tensor<256xf32>
  %inv_n = tra.fill 0.00048828125 : tensor<f32>
  %eps = tra.fill 1.0e-05 : tensor<f32>
  %mean = tra.einsum "s,->s" mul (%ss, %inv_n) : (tensor<256xf32>, tensor<f32>) -> tensor<256xf32>
  %t = tra.einsum "s,->s" add (%mean, %eps) : (tensor<256xf32>, tensor<f32>) -> tensor<256xf32>
  %rs = tra.einsum "s->s" rsqrt (%t) : (tensor<256xf32>) -> tensor<256xf32>
  %rmsnorm = tra.einsum "sd,s,d->sd" mul (%x, %rs, %w) : (tensor<256x2048xf32>, tensor<256xf32>, tensor<2048xf32>) -> tensor<256x2048xf32>
  %gathered = tra.gather %table[%ids] : tensor<1000x512xf32>, tensor<128xi64> -> tensor<128x512xf32>
  %small_exp = tra.map "ij->ij" (%small) : (tensor<8x8xf32>) -> tensor<8x8xf32> {
  ^bb0(%v: f32):
    %r = math.exp %v : f32
    tra.yield %r : f32
  }
  return %relu, %softmax, %rmsnorm, %gathered, %small_exp
      : tensor<256x2048xf32>, tensor<256x2048xf32>, tensor<256x2048xf32>,
        tensor<128x512xf32>, tensor<8x8xf32>
}
