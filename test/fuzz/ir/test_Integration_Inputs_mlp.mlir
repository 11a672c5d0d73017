// A three-layer MLP (batch 64, width 256): h = relu(h W^T + b) per layer,
// as in bench/aot_bench.py.
func.func @main(%x: tensor<64x256xf32> {tra.name = "x"}, %w0: tensor<256x256xf32> {tra.name = "w0"}, %b0: tensor<256xf32> {tra.name = "b0"}, %w1: tensor<256x256xf32> {tra.name = "w1"}, %b1: tensor<256xf32> {tra.name = "b1"}, %w2: tensor<256x256xf32> {tra.name = "w2"}, %b2: tensor<256xf32> {tra.name = "b2"}) -> (tensor<64x256xf32> {tra.name = "y"}) {
  %p0 = tra.einsum "bi,oi->bo" mul (%x, %w0) : (tensor<64x256xf32>, tensor<256x256xf32>) -> tensor<64x256xf32>
  %h0 = tra.map "bo,o->bo" (%p0, %b0) : (tensor<64x256xf32>, tensor<256xf32>) -> tensor<64x256xf32> {
  ^bb0(%s: f32, %c: f32):
    %zero = arith.constant 0.0 : f32
    %t = arith.addf %s, %c : f32
    %r = arith.maximumf %t, %zero : f32
    tra.yield %r : f32
  }
  %p1 = tra.einsum "bi,oi->bo" mul (%h0, %w1) : (tensor<64x256xf32>, tensor<256x256xf32>) -> tensor<64x256xf32>
  %h1 = tra.map "bo,o->bo" (%p1, %b1) : (tensor<64x256xf32>, tensor<256xf32>) -> tensor<64x256xf32> {
  ^bb0(%s: f32, %c: f32):
    %zero = arith.constant 0.0 : f32
    %t = arith.addf %s, %c : f32
    %r = arith.maximumf %t, %zero : f32
    tra.yield %r : f32
  }
  %p2 = tra.einsum "bi,oi->bo" mul (%h1, %w2) : (tensor<64x256xf32>, tensor<256x256xf32>) -> tensor<64x256xf32>
  %h2 = tra.map "bo,o->bo" (%p2, %b2) : (tensor<64x256xf32>, tensor<256xf32>) -> tensor<64x256xf32> {
  ^bb0(%s: f32, %c: f32):
    %zero = arith.constant 0.0 : f32
    %t = arith.addf %s, %c : f32
    %r = arith.maximumf %t, %zero : f32
    tra.yield %r : f32
  }
  return %h2 : tensor<64x256xf32>
}
