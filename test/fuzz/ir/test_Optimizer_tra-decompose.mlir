// RUN: tra-opt %s --tra-decompose="hw=%tra_src/hw/dgx-8.json" | FileCheck %s --check-prefix=DGX
// RUN: tra-opt %s --tra-decompose="hw=%tra_src/hw/gpu-4.json" | FileCheck %s --check-prefix=PCIE
// RUN: tra-opt %s --tra-decompose="hw=%tra_src/hw/gpu-1.json" | FileCheck %s --check-prefix=ONE
// RUN: tra-opt %s --tra-decompose="hw=%tra_src/hw/dgx-8.json" --tra-verify-plan -o /dev/null

// Two LLaMA-65B SwiGLU feed-forward blocks on 64 tokens. On several GPUs
// the optimizer finds Megatron's tensor-parallel plan by itself: the norm
// is computed on every GPU, w1 and w3 are cut along the hidden dimension f
// (columns of the product), w2 along its input dimension f (rows), and the
// partial sums of the first block meet in one all-reduce. On one GPU
// nothing is split and nothing moves.

// DGX-LABEL: func.func @ffn2
// DGX-SAME: %{{[a-z0-9]+}}: tensor<22016x8192xbf16> {tra_plan.dist = #tra_plan.dist<[8, 1] on [0, 1, 2, 3, 4, 5, 6, 7]>}
// DGX-SAME: %{{[a-z0-9]+}}: tensor<8192x22016xbf16> {tra_plan.dist = #tra_plan.dist<[1, 8] on [0, 1, 2, 3, 4, 5, 6, 7]>}
// DGX-SAME: %{{[a-z0-9]+}}: tensor<22016x8192xbf16> {tra_plan.dist = #tra_plan.dist<[8, 1] on [0, 1, 2, 3, 4, 5, 6, 7]>}
// DGX: tra.map "sd,s,d->sd" {{.*}}tra_plan.split = #tra_plan.split<replicas = 8>
// DGX: tra.einsum "sd,fd->sf" {{.*}}tra_plan.split = #tra_plan.split<f = 8>
// DGX: tra.einsum "sd,fd->sf" {{.*}}tra_plan.split = #tra_plan.split<f = 8>
// DGX: %[[F:.*]] = tra.einsum "sf,df->sd" {{.*}}tra_plan.results = [#tra_plan.dist<[1, 1] partial sum on {{\[\[}}0, 1, 2, 3, 4, 5, 6, 7]]>], tra_plan.split = #tra_plan.split<f = 8>
// DGX-NEXT: %[[R:.*]] = tra_plan.all_reduce %[[F]]
// DGX-NEXT: tra.einsum "sd,sd->sd" add (%{{.*}}, %[[R]])
// DGX-NOT: tra_plan.repartition
// DGX: tra.einsum "sd,fd->sf" {{.*}}tra_plan.split = #tra_plan.split<f = 8>

// PCIE-LABEL: func.func @ffn2
// PCIE: tra.einsum "sd,fd->sf" {{.*}}tra_plan.split = #tra_plan.split<f = 4>
// PCIE: tra.einsum "sd,fd->sf" {{.*}}tra_plan.split = #tra_plan.split<f = 4>
// PCIE: tra.einsum "sf,df->sd" {{.*}}tra_plan.split = #tra_plan.split<f = 4>
// PCIE-NEXT: tra_plan.all_reduce

// ONE-LABEL: func.func @ffn2
// ONE-NOT: tra_plan.split<{{[a-z]}}
// ONE-NOT: tra_plan.all_reduce
// ONE-NOT: tra_plan.reduce_scatter
// ONE-NOT: tra_plan.repartition
// ONE: return
func.func @ffn2(%h: tensor<64x8192xbf16>, %norm: tensor<8192xbf16>,
               %w1: tensor<22016x8192xbf16>, %w2: tensor<8192x22016xbf16>,
               %w3: tensor<22016x8192xbf16>, %norm2: tensor<8192xbf16>,
               %v1: tensor<22016x8192xbf16>, %v2: tensor<8192x22016xbf16>,
               %v3: tensor<22016x8192xbf16>) -> tensor<64x8192xbf16> {
  %ss = tra.einsum "sd->s" square (%h) : (tensor<64x8192xbf16>) -> tensor<64xbf16>
  %hn = tra.map "sd,s,d->sd" (%h, %ss, %norm) : (tensor<64x8192xbf16>, tensor<64xbf16>, tensor<8192xbf16>) -> tensor<64x8192xbf16> {
  ^bb0(%x: bf16, %s: bf16, %w: bf16):
    %n = arith.constant 8192.0 : bf16
    %eps = arith.constant 1.0e-05 : bf16
    %mean = arith.divf %s, %n : bf16
    %t = arith.addf %mean, %eps : bf16
    %r = math.rsqrt %t : bf16
    %xn = arith.mulf %x, %r : bf16
    %o = arith.mulf %xn, %w : bf16
    tra.yield %o : bf16
  }
  %a = tra.einsum "sd,fd->sf" mul (%hn, %w1) : (tensor<64x8192xbf16>, tensor<22016x8192xbf16>) -> tensor<64x22016xbf16>
  %b = tra.einsum "sd,fd->sf" mul (%hn, %w3) : (tensor<64x8192xbf16>, tensor<22016x8192xbf16>) -> tensor<64x22016xbf16>
  %g = tra.map (%a, %b) : (tensor<64x22016xbf16>, tensor<64x22016xbf16>) -> tensor<64x22016xbf16> {
  ^bb0(%av: bf16, %bv: bf16):
    %one = arith.constant 1.0 : bf16
    %na = arith.negf %av : bf16
    %en = math.exp %na : bf16
    %den = arith.addf %one, %en : bf16
    %silu = arith.divf %av, %den : bf16
    %r = arith.mulf %silu, %bv : bf16
    tra.yield %r : bf16
  }
  %f = tra.einsum "sf,df->sd" mul (%g, %w2) : (tensor<64x22016xbf16>, tensor<8192x22016xbf16>) -> tensor<64x8192xbf16>
  %out = tra.einsum "sd,sd->sd" add (%h, %f) : (tensor<64x8192xbf16>, tensor<64x8192xbf16>) -> tensor<64x8192xbf16>
  %ss2 = tra.einsum "sd->s" square (%out) : (tensor<64x8192xbf16>) -> tensor<64xbf16>
  %hn2 = tra.map "sd,s,d->sd" (%out, %ss2, %norm2) : (tensor<64x8192xbf16>, tensor<64xbf16>, tensor<8192xbf16>) -> tensor<64x8192xbf16> {
  ^bb0(%x: bf16, %s: bf16, %w: bf16):
    %n = arith.constant 8192.0 : bf16
    %eps = arith.constant 1.0e-05 : bf16
    %mean = arith.divf %s, %n : bf16
    %t = arith.addf %mean, %eps : bf16
    %r = math.rsqrt %t : bf16
    %xn = arith.mulf %x, %r : bf16
    %o = arith.mulf %xn, %w : bf16
    tra.yield %o : bf16
  }
  %a2 = tra.einsum "sd,fd->sf" mul (%hn2, %v1) : (tensor<64x8192xbf16>, tensor<22016x8192xbf16>) -> tensor<64x22016xbf16>
  %b2 = tra.einsum "sd,fd->sf" mul (%hn2, %v3) : (tensor<64x8192xbf16>, tensor<22016x8192xbf16>) -> tensor<64x22016xbf16>
  %g2 = tra.map (%a2, %b2) : (tensor<64x22016xbf16>, tensor<64x22016xbf16>) -> tensor<64x22016xbf16> {
  ^bb0(%av: bf16, %bv: bf16):
    %one = arith.constant 1.0 : bf16
    %na = arith.negf %av : bf16
    %en = math.exp %na : bf16
    %den = arith.addf %one, %en : bf16
    %silu = arith.divf %av, %den : bf16
    %r = arith.mulf %silu, %bv : bf16
    tra.yield %r : bf16
  }
  %f2 = tra.einsum "sf,df->sd" mul (%g2, %v2) : (tensor<64x22016xbf16>, tensor<8192x22016xbf16>) -> tensor<64x8192xbf16>
  %out2 = tra.einsum "sd,sd->sd" add (%out, %f2) : (tensor<64x8192xbf16>, tensor<64x8192xbf16>) -> tensor<64x8192xbf16>
  return %out2 : tensor<64x8192xbf16>
}
