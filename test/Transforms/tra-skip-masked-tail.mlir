// RUN: tra-opt %s --tra-skip-masked-tail=block-size=4 --split-input-file | FileCheck %s

// Causal attention of 3 queries (s) over a cache of 16 positions (t): the
// mask hides t > pos + s, so blocks of 4 positions from ceil((pos + 3) / 4)
// on add nothing. Every op of the chain (the scores' producer, the mask,
// max, exp, sum, the division and the product with the values) runs over
// the first blocks only; the fill of the scores moves into the loop.
#qk = affine_map<(s, t, d) -> (s, d)>
#kk = affine_map<(s, t, d) -> (t, d)>
#st3 = affine_map<(s, t, d) -> (s, t)>
#st = affine_map<(s, t) -> (s, t)>
#sc = affine_map<(s, t) -> ()>
#sr = affine_map<(s, t) -> (s)>
#pv = affine_map<(s, t, d) -> (s, t)>
#vv = affine_map<(s, t, d) -> (t, d)>
#ov = affine_map<(s, t, d) -> (s, d)>
// CHECK-LABEL: func.func @attention
// CHECK-SAME: (%[[Q:.*]]: tensor<3x8xf32>, %[[K:.*]]: tensor<16x8xf32>, %[[V:.*]]: tensor<16x8xf32>, %[[POS:.*]]: tensor<i64>)
// CHECK: %[[P:.*]] = tensor.extract %[[POS]][]
// CHECK: %[[LO:.*]] = arith.maxsi %[[P]], %{{.*}} : i64
// CHECK: %[[HI:.*]] = arith.minsi %[[LO]], %{{.*}} : i64
// CHECK: %[[END:.*]] = arith.addi %[[HI]], %c3_i64 : i64
// CHECK: %[[DIV:.*]] = arith.ceildivsi %[[END]], %c4_i64 : i64
// CHECK: %[[N:.*]] = arith.index_cast %{{.*}} : i64 to index
// CHECK: %[[SCORES:.*]] = scf.for %[[B:.*]] = %{{.*}} to %[[N]]
// CHECK:   %[[OFF:.*]] = arith.muli %[[B]], %c4
// CHECK:   tensor.extract_slice %[[K]][%[[OFF]], 0] [4, 8] [1, 1]
// CHECK:   linalg.fill
// CHECK:   linalg.generic
// CHECK:   tensor.insert_slice {{.*}}[0, %[[OFF]]] [3, 4] [1, 1] : tensor<3x4xf32> into tensor<3x16xf32>
// CHECK: scf.for %[[B2:.*]] = %{{.*}} to %[[N]]
// CHECK:   %[[OFF2:.*]] = arith.muli %[[B2]], %c4
// CHECK:   linalg.generic
// CHECK:     %[[T:.*]] = linalg.index 1
// CHECK:     arith.addi %[[T]], %[[OFF2]] : index
// CHECK: scf.for {{.*}} to %[[N]] {{.*}} -> (tensor<3xf32>)
// CHECK: scf.for {{.*}} to %[[N]] {{.*}} -> (tensor<3x16xf32>)
// CHECK: scf.for {{.*}} to %[[N]] {{.*}} -> (tensor<3xf32>)
// CHECK: scf.for {{.*}} to %[[N]] {{.*}} -> (tensor<3x16xf32>)
// CHECK: scf.for {{.*}} to %[[N]] {{.*}} -> (tensor<3x8xf32>)
// CHECK-NOT: scf.for
// CHECK: return
func.func @attention(%q: tensor<3x8xf32>, %k: tensor<16x8xf32>,
                     %v: tensor<16x8xf32>, %pos: tensor<i64>)
    -> (tensor<3x8xf32>, tensor<3xf32>) {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<3x16xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<3x16xf32>) -> tensor<3x16xf32>
  %scores = linalg.generic {indexing_maps = [#qk, #kk, #st3],
      iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<3x8xf32>, tensor<16x8xf32>) outs(%z : tensor<3x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<3x16xf32>
  %masked = linalg.generic {indexing_maps = [#st, #sc, #st],
      iterator_types = ["parallel", "parallel"]}
      ins(%scores, %pos : tensor<3x16xf32>, tensor<i64>) outs(%e : tensor<3x16xf32>) {
  ^bb0(%x: f32, %p: i64, %o: f32):
    %s = linalg.index 0 : index
    %t = linalg.index 1 : index
    %si = arith.index_cast %s : index to i64
    %ti = arith.index_cast %t : index to i64
    %last = arith.addi %p, %si : i64
    %vis = arith.cmpi sle, %ti, %last : i64
    %r = arith.select %vis, %x, %ninf : f32
    linalg.yield %r : f32
  } -> tensor<3x16xf32>
  %er = tensor.empty() : tensor<3xf32>
  %mi = linalg.fill ins(%ninf : f32) outs(%er : tensor<3xf32>) -> tensor<3xf32>
  %mx = linalg.generic {indexing_maps = [#st, #sr],
      iterator_types = ["parallel", "reduction"]}
      ins(%masked : tensor<3x16xf32>) outs(%mi : tensor<3xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.maximumf %acc, %x : f32
    linalg.yield %r : f32
  } -> tensor<3xf32>
  %ex = linalg.generic {indexing_maps = [#st, #sr, #st],
      iterator_types = ["parallel", "parallel"]}
      ins(%masked, %mx : tensor<3x16xf32>, tensor<3xf32>) outs(%e : tensor<3x16xf32>) {
  ^bb0(%x: f32, %m: f32, %o: f32):
    %d = arith.subf %x, %m : f32
    %r = math.exp %d : f32
    linalg.yield %r : f32
  } -> tensor<3x16xf32>
  %zi = linalg.fill ins(%zero : f32) outs(%er : tensor<3xf32>) -> tensor<3xf32>
  %sum = linalg.generic {indexing_maps = [#st, #sr],
      iterator_types = ["parallel", "reduction"]}
      ins(%ex : tensor<3x16xf32>) outs(%zi : tensor<3xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.addf %acc, %x : f32
    linalg.yield %r : f32
  } -> tensor<3xf32>
  %probs = linalg.generic {indexing_maps = [#st, #sr, #st],
      iterator_types = ["parallel", "parallel"]}
      ins(%ex, %sum : tensor<3x16xf32>, tensor<3xf32>) outs(%e : tensor<3x16xf32>) {
  ^bb0(%x: f32, %s: f32, %o: f32):
    %r = arith.divf %x, %s : f32
    linalg.yield %r : f32
  } -> tensor<3x16xf32>
  %eo = tensor.empty() : tensor<3x8xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<3x8xf32>) -> tensor<3x8xf32>
  %out = linalg.contract indexing_maps = [#pv, #vv, #ov]
      ins(%probs, %v : tensor<3x16xf32>, tensor<16x8xf32>)
      outs(%zo : tensor<3x8xf32>) -> tensor<3x8xf32>
  return %out, %sum : tensor<3x8xf32>, tensor<3xf32>
}

// -----

// Masked to 0, not -inf: max(acc, 0) is not acc, so the max must see every
// position. Nothing changes.
#st = affine_map<(s, t) -> (s, t)>
#sc = affine_map<(s, t) -> ()>
#sr = affine_map<(s, t) -> (s)>
// CHECK-LABEL: func.func @zero_mask_then_max
// CHECK-NOT: scf.for
func.func @zero_mask_then_max(%x: tensor<1x16xf32>, %pos: tensor<i64>) -> tensor<1xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<1x16xf32>
  %masked = linalg.generic {indexing_maps = [#st, #sc, #st],
      iterator_types = ["parallel", "parallel"]}
      ins(%x, %pos : tensor<1x16xf32>, tensor<i64>) outs(%e : tensor<1x16xf32>) {
  ^bb0(%a: f32, %p: i64, %o: f32):
    %t = linalg.index 1 : index
    %ti = arith.index_cast %t : index to i64
    %vis = arith.cmpi sle, %ti, %p : i64
    %r = arith.select %vis, %a, %zero : f32
    linalg.yield %r : f32
  } -> tensor<1x16xf32>
  %er = tensor.empty() : tensor<1xf32>
  %mi = linalg.fill ins(%ninf : f32) outs(%er : tensor<1xf32>) -> tensor<1xf32>
  %mx = linalg.generic {indexing_maps = [#st, #sr],
      iterator_types = ["parallel", "reduction"]}
      ins(%masked : tensor<1x16xf32>) outs(%mi : tensor<1xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.maximumf %acc, %a : f32
    linalg.yield %r : f32
  } -> tensor<1xf32>
  return %mx : tensor<1xf32>
}

// -----

// The same mask summed directly: acc + -inf is not acc. Nothing changes.
#st = affine_map<(s, t) -> (s, t)>
#sc = affine_map<(s, t) -> ()>
#sr = affine_map<(s, t) -> (s)>
// CHECK-LABEL: func.func @sum_of_masked
// CHECK-NOT: scf.for
func.func @sum_of_masked(%x: tensor<1x16xf32>, %pos: tensor<i64>) -> tensor<1xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<1x16xf32>
  %masked = linalg.generic {indexing_maps = [#st, #sc, #st],
      iterator_types = ["parallel", "parallel"]}
      ins(%x, %pos : tensor<1x16xf32>, tensor<i64>) outs(%e : tensor<1x16xf32>) {
  ^bb0(%a: f32, %p: i64, %o: f32):
    %t = linalg.index 1 : index
    %ti = arith.index_cast %t : index to i64
    %vis = arith.cmpi slt, %ti, %p : i64
    %r = arith.select %vis, %a, %ninf : f32
    linalg.yield %r : f32
  } -> tensor<1x16xf32>
  %er = tensor.empty() : tensor<1xf32>
  %zi = linalg.fill ins(%zero : f32) outs(%er : tensor<1xf32>) -> tensor<1xf32>
  %sum = linalg.generic {indexing_maps = [#st, #sr],
      iterator_types = ["parallel", "reduction"]}
      ins(%masked : tensor<1x16xf32>) outs(%zi : tensor<1xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %acc, %a : f32
    linalg.yield %r : f32
  } -> tensor<1xf32>
  return %sum : tensor<1xf32>
}

// -----

// The masked tensor itself is returned: its masked elements escape the
// chain. Nothing changes.
#st = affine_map<(s, t) -> (s, t)>
#sc = affine_map<(s, t) -> ()>
#sr = affine_map<(s, t) -> (s)>
// CHECK-LABEL: func.func @escapes
// CHECK-NOT: scf.for
func.func @escapes(%x: tensor<1x16xf32>, %pos: tensor<i64>) -> (tensor<1xf32>, tensor<1x16xf32>) {
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<1x16xf32>
  %masked = linalg.generic {indexing_maps = [#st, #sc, #st],
      iterator_types = ["parallel", "parallel"]}
      ins(%x, %pos : tensor<1x16xf32>, tensor<i64>) outs(%e : tensor<1x16xf32>) {
  ^bb0(%a: f32, %p: i64, %o: f32):
    %t = linalg.index 1 : index
    %ti = arith.index_cast %t : index to i64
    %vis = arith.cmpi sle, %ti, %p : i64
    %r = arith.select %vis, %a, %ninf : f32
    linalg.yield %r : f32
  } -> tensor<1x16xf32>
  %er = tensor.empty() : tensor<1xf32>
  %mi = linalg.fill ins(%ninf : f32) outs(%er : tensor<1xf32>) -> tensor<1xf32>
  %mx = linalg.generic {indexing_maps = [#st, #sr],
      iterator_types = ["parallel", "reduction"]}
      ins(%masked : tensor<1x16xf32>) outs(%mi : tensor<1xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.maximumf %acc, %a : f32
    linalg.yield %r : f32
  } -> tensor<1xf32>
  return %mx, %masked : tensor<1xf32>, tensor<1x16xf32>
}

// -----

// 18 positions do not split into blocks of 4; a mask by a constant has no
// run-time bound. Nothing changes.
#st = affine_map<(s, t) -> (s, t)>
#sc = affine_map<(s, t) -> ()>
#sr = affine_map<(s, t) -> (s)>
// CHECK-LABEL: func.func @not_blocked
// CHECK-NOT: scf.for
// CHECK: return
func.func @not_blocked(%x: tensor<1x18xf32>, %y: tensor<1x16xf32>, %pos: tensor<i64>) -> (tensor<1xf32>, tensor<1xf32>) {
  %ninf = arith.constant 0xFF800000 : f32
  %c5 = arith.constant 5 : i64
  %e = tensor.empty() : tensor<1x18xf32>
  %masked = linalg.generic {indexing_maps = [#st, #sc, #st],
      iterator_types = ["parallel", "parallel"]}
      ins(%x, %pos : tensor<1x18xf32>, tensor<i64>) outs(%e : tensor<1x18xf32>) {
  ^bb0(%a: f32, %p: i64, %o: f32):
    %t = linalg.index 1 : index
    %ti = arith.index_cast %t : index to i64
    %vis = arith.cmpi sle, %ti, %p : i64
    %r = arith.select %vis, %a, %ninf : f32
    linalg.yield %r : f32
  } -> tensor<1x18xf32>
  %er = tensor.empty() : tensor<1xf32>
  %mi = linalg.fill ins(%ninf : f32) outs(%er : tensor<1xf32>) -> tensor<1xf32>
  %mx = linalg.generic {indexing_maps = [#st, #sr],
      iterator_types = ["parallel", "reduction"]}
      ins(%masked : tensor<1x18xf32>) outs(%mi : tensor<1xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.maximumf %acc, %a : f32
    linalg.yield %r : f32
  } -> tensor<1xf32>
  %e2 = tensor.empty() : tensor<1x16xf32>
  %masked2 = linalg.generic {indexing_maps = [#st, #st],
      iterator_types = ["parallel", "parallel"]}
      ins(%y : tensor<1x16xf32>) outs(%e2 : tensor<1x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = linalg.index 1 : index
    %ti = arith.index_cast %t : index to i64
    %vis = arith.cmpi sle, %ti, %c5 : i64
    %r = arith.select %vis, %a, %ninf : f32
    linalg.yield %r : f32
  } -> tensor<1x16xf32>
  %mi2 = linalg.fill ins(%ninf : f32) outs(%er : tensor<1xf32>) -> tensor<1xf32>
  %mx2 = linalg.generic {indexing_maps = [#st, #sr],
      iterator_types = ["parallel", "reduction"]}
      ins(%masked2 : tensor<1x16xf32>) outs(%mi2 : tensor<1xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.maximumf %acc, %a : f32
    linalg.yield %r : f32
  } -> tensor<1xf32>
  return %mx, %mx2 : tensor<1xf32>, tensor<1xf32>
}
