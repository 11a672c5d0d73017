"""Gradients built by tra-autodiff, run on the reference interpreter, against
PyTorch autograd in float64 (max relative error <= 1e-5 in f64, <= 1e-3 in
f32) and, for map bodies, against central finite differences.

Every case is a loss `sum(OP(inputs) * r)` with a fixed random cotangent r,
so each element of OP's gradient is weighted differently. Run by
gradients.test (pytest).
"""
import numpy as np
import pytest
import torch

import tra

RNG = np.random.default_rng(7)

TOL = {"f64": 1e-5, "f32": 1e-3}


def rel_err(got, want):
    got = np.asarray(got, dtype=np.float64)
    want = np.asarray(want, dtype=np.float64)
    assert got.shape == want.shape, (got.shape, want.shape)
    scale = max(np.max(np.abs(want)), 1e-30)
    return float(np.max(np.abs(got - want)) / scale)


def tensor_type(shape, dtype):
    return "tensor<%s>" % "x".join([str(d) for d in shape] + [dtype])


def loss_module(args, op_lines, y, y_shape, dtype):
    """A module with @loss(args..., r) = sum(y * r); `op_lines` compute %y."""
    params = ", ".join('%%%s: %s {tra.name = "%s"}' % (n, t, n)
                       for n, t in args)
    rt = tensor_type(y_shape, dtype)
    letters = "abcdefgh"[:len(y_shape)]
    return """
func.func @loss(%s, %%r: %s {tra.name = "r"}) -> tensor<%s> {
%s
  %%l = tra.einsum "%s,%s->" mul (%%%s, %%r) : (%s, %s) -> tensor<%s>
  return %%l : tensor<%s>
}
""" % (params, rt, dtype, op_lines, letters, letters, y, rt, rt, dtype, dtype)


def run_case(ir, inputs, torch_fn, wrt, dtype):
    """tra's loss and gradients vs torch's (float64) for `wrt`."""
    model = tra.parse(ir)
    name = model.gradient("loss", wrt)
    assert name == "loss_grad"
    out = model.interpret(name, inputs)
    tensors = {k: torch.tensor(np.asarray(v, dtype=np.float64)
                               if np.asarray(v).dtype.kind == "f"
                               else np.asarray(v),
                               requires_grad=(k in wrt))
               for k, v in inputs.items()}
    ref = torch_fn(tensors)
    loss = (ref * tensors["r"]).sum()
    loss.backward()
    tol = TOL[dtype]
    assert rel_err(out["result0"], loss.detach().numpy()) <= tol
    for k in wrt:
        err = rel_err(out["grad_" + k], tensors[k].grad.numpy())
        assert err <= tol, "gradient of %s: relative error %g" % (k, err)
    return out


def rand(*shape, low=-1.0, high=1.0):
    return RNG.uniform(low, high, size=shape)


# --- einsum: contractions, joins, broadcasts --------------------------------

CONTRACTIONS = [
    ("ij,jk->ik", [(3, 4), (4, 5)], lambda a, b: a @ b),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)], lambda a, b: a @ b),
    ("ij,jk->i", [(3, 4), (4, 5)], lambda a, b: (a @ b).sum(1)),
    ("ij,j,jk->ik", [(3, 4), (4,), (4, 5)], lambda a, v, b: (a * v) @ b),
    ("sd,ed->se", [(3, 6), (5, 6)], lambda x, w: x @ w.T),
    ("ij->ji", [(3, 4)], lambda a: a.T),
    ("ij->", [(3, 4)], lambda a: a.sum()),
    ("i,j->ij", [(3,), (4,)], lambda a, b: torch.outer(a, b)),
    ("hqd,hkd->hqk", [(2, 3, 4), (2, 5, 4)],
     lambda q, k: q @ k.transpose(1, 2)),
]


@pytest.mark.parametrize("dtype", ["f64", "f32"])
@pytest.mark.parametrize("spec,shapes,fn", CONTRACTIONS,
                         ids=[c[0] for c in CONTRACTIONS])
def test_einsum_mul(spec, shapes, fn, dtype):
    names = ["a", "b", "c"][:len(shapes)]
    args = [(n, tensor_type(s, dtype)) for n, s in zip(names, shapes)]
    inputs = {n: rand(*s) for n, s in zip(names, shapes)}
    yshape = tuple(fn(*[torch.tensor(inputs[n]) for n in names]).shape)
    op = '  %%y = tra.einsum "%s" mul (%s) : (%s) -> %s' % (
        spec, ", ".join("%" + n for n in names),
        ", ".join(t for _, t in args), tensor_type(yshape, dtype))
    inputs["r"] = rand(*yshape)
    run_case(loss_module(args, op, "y", yshape, dtype), inputs,
             lambda t: fn(*[t[n] for n in names]), names, dtype)


BINARY = [
    ("add", "ij,j->ij", [(3, 4), (4,)], lambda a, b: a + b),
    ("sub", "ij,ij->ij", [(3, 4), (3, 4)], lambda a, b: a - b),
    ("div", "ij,j->ij", [(3, 4), (4,)], lambda a, b: a / b),
    ("max", "ij,ij->ij", [(3, 4), (3, 4)], torch.maximum),
    ("min", "ij,ij->ij", [(3, 4), (3, 4)], torch.minimum),
    ("add", "ij,jk->ik", [(3, 4), (4, 5)],
     lambda a, b: (a[:, :, None] + b[None]).sum(1)),
    ("sub", "ij,jk->ik", [(3, 4), (4, 5)],
     lambda a, b: (a[:, :, None] - b[None]).sum(1)),
    ("div", "ij,jk->ik", [(3, 4), (4, 5)],
     lambda a, b: (a[:, :, None] / b[None]).sum(1)),
    ("max", "ij,jk->ik", [(3, 4), (4, 5)],
     lambda a, b: torch.maximum(a[:, :, None], b[None]).sum(1)),
    ("add", "ij,k->i", [(3, 4), (5,)],
     lambda a, b: (a[:, :, None] + b[None, None]).sum((1, 2))),
    ("mul", "ij,k->i", [(3, 4), (5,)],
     lambda a, b: (a[:, :, None] * b[None, None]).sum((1, 2))),
]


@pytest.mark.parametrize("dtype", ["f64", "f32"])
@pytest.mark.parametrize("comb,spec,shapes,fn", BINARY,
                         ids=["%s:%s" % (c[0], c[1]) for c in BINARY])
def test_einsum_binary_combiners(comb, spec, shapes, fn, dtype):
    args = [("a", tensor_type(shapes[0], dtype)),
            ("b", tensor_type(shapes[1], dtype))]
    # Divisors away from zero.
    inputs = {"a": rand(*shapes[0]), "b": rand(*shapes[1], low=0.5, high=2.0)}
    yshape = tuple(fn(torch.tensor(inputs["a"]),
                      torch.tensor(inputs["b"])).shape)
    op = '  %%y = tra.einsum "%s" %s (%%a, %%b) : (%s, %s) -> %s' % (
        spec, comb, args[0][1], args[1][1], tensor_type(yshape, dtype))
    inputs["r"] = rand(*yshape)
    run_case(loss_module(args, op, "y", yshape, dtype), inputs,
             lambda t: fn(t["a"], t["b"]), ["a", "b"], dtype)


UNARY = [
    ("id", lambda x: x, (-1, 1)),
    ("neg", lambda x: -x, (-1, 1)),
    ("exp", torch.exp, (-1, 1)),
    ("silu", torch.nn.functional.silu, (-3, 3)),
    ("rsqrt", torch.rsqrt, (0.5, 2)),
    ("sqrt", torch.sqrt, (0.5, 2)),
    ("square", torch.square, (-1, 1)),
    ("tanh", torch.tanh, (-2, 2)),
    ("abs", torch.abs, (-1, 1)),
    ("recip", torch.reciprocal, (0.5, 2)),
    ("relu", torch.relu, (-1, 1)),
    ("sigmoid", torch.sigmoid, (-3, 3)),
]


@pytest.mark.parametrize("dtype", ["f64", "f32"])
@pytest.mark.parametrize("reduce", [False, True])
@pytest.mark.parametrize("comb,fn,domain", UNARY, ids=[u[0] for u in UNARY])
def test_einsum_unary_combiners(comb, fn, domain, reduce, dtype):
    spec, yshape = ("ij->i", (3,)) if reduce else ("ij->ji", (4, 3))
    args = [("x", tensor_type((3, 4), dtype))]
    inputs = {"x": rand(3, 4, low=domain[0], high=domain[1])}
    op = '  %%y = tra.einsum "%s" %s (%%x) : (%s) -> %s' % (
        spec, comb, args[0][1], tensor_type(yshape, dtype))
    inputs["r"] = rand(*yshape)
    ref = (lambda t: fn(t["x"]).sum(1)) if reduce else \
        (lambda t: fn(t["x"]).T)
    run_case(loss_module(args, op, "y", yshape, dtype), inputs, ref, ["x"],
             dtype)


AGGREGATIONS = [
    ("ij->i", "id", "max", [(3, 5)], lambda a: a.amax(1)),
    ("ij->i", "id", "min", [(3, 5)], lambda a: a.amin(1)),
    ("ij->j", "id", "max", [(3, 5)], lambda a: a.amax(0)),
    ("ij->i", "id", "prod", [(3, 5)], lambda a: a.prod(1)),
    ("ij,ij->i", "mul", "max", [(3, 5), (3, 5)], lambda a, b: (a * b).amax(1)),
    ("ij,jk->ik", "mul", "max", [(3, 4), (4, 5)],
     lambda a, b: (a[:, :, None] * b[None]).amax(1)),
    ("ij,jk->ik", "add", "min", [(3, 4), (4, 5)],
     lambda a, b: (a[:, :, None] + b[None]).amin(1)),
    ("ij,jk->ik", "mul", "prod", [(3, 4), (4, 5)],
     lambda a, b: (a[:, :, None] * b[None]).prod(1)),
    ("ij->i", "exp", "max", [(3, 5)], lambda a: torch.exp(a).amax(1)),
]


@pytest.mark.parametrize("dtype", ["f64", "f32"])
@pytest.mark.parametrize("spec,comb,agg,shapes,fn", AGGREGATIONS,
                         ids=["%s:%s:%s" % a[:3] for a in AGGREGATIONS])
def test_einsum_aggregations(spec, comb, agg, shapes, fn, dtype):
    names = ["a", "b"][:len(shapes)]
    args = [(n, tensor_type(s, dtype)) for n, s in zip(names, shapes)]
    inputs = {n: rand(*s, low=0.5, high=1.5) * RNG.choice([-1, 1], size=s)
              for n, s in zip(names, shapes)}
    yshape = tuple(fn(*[torch.tensor(inputs[n]) for n in names]).shape)
    op = '  %%y = tra.einsum "%s" %s (%s) reduce %s : (%s) -> %s' % (
        spec, comb, ", ".join("%" + n for n in names), agg,
        ", ".join(t for _, t in args), tensor_type(yshape, dtype))
    inputs["r"] = rand(*yshape)
    run_case(loss_module(args, op, "y", yshape, dtype), inputs,
             lambda t: fn(*[t[n] for n in names]), names, dtype)


def test_max_splits_ties_evenly():
    """Two maxima of a row share its gradient, as torch.amax does."""
    x = np.array([[1.0, 3.0, 3.0, 0.0], [2.0, -1.0, 0.5, 2.0],
                  [4.0, 4.0, 4.0, 1.0]])
    op = '  %y = tra.einsum "ij->i" id (%x) reduce max ' \
         ': (tensor<3x4xf64>) -> tensor<3xf64>'
    run_case(loss_module([("x", "tensor<3x4xf64>")], op, "y", (3,), "f64"),
             {"x": x, "r": rand(3)}, lambda t: t["x"].amax(1), ["x"], "f64")


def test_prod_with_zeros():
    """prod's gradient is exact with one zero in a group and with two."""
    x = rand(4, 5, low=0.5, high=1.5)
    x[1, 2] = 0.0
    x[2, 0] = x[2, 3] = 0.0
    op = '  %y = tra.einsum "ij->i" id (%x) reduce prod ' \
         ': (tensor<4x5xf64>) -> tensor<4xf64>'
    out = run_case(
        loss_module([("x", "tensor<4x5xf64>")], op, "y", (4,), "f64"),
        {"x": x, "r": rand(4)}, lambda t: t["x"].prod(1), ["x"], "f64")
    assert out["grad_x"][1, 2] != 0.0
    assert np.all(out["grad_x"][2] == 0.0)


# --- map: symbolic derivatives of scalar bodies -----------------------------

MAP_BODY = """
  %y = tra.map "sd,d->sd" (%x, %w) : (tensor<3x4xT>, tensor<4xT>)
      -> tensor<3x4xT> {
  ^bb0(%a: T, %b: T):
    %one = arith.constant 1.0 : T
    %half = arith.constant 0.5 : T
    %e = math.exp %a : T
    %s = math.sin %b : T
    %p = arith.mulf %e, %s : T
    %a2 = arith.mulf %a, %a : T
    %den = arith.addf %a2, %one : T
    %q = arith.divf %p, %den : T
    %t = math.tanh %b : T
    %u = arith.subf %q, %t : T
    %l = math.log %den : T
    %l2 = math.log2 %den : T
    %v = arith.addf %u, %l : T
    %v2 = arith.subf %v, %l2 : T
    %sq = math.sqrt %den : T
    %rs = math.rsqrt %den : T
    %w1 = arith.mulf %sq, %rs : T
    %w2 = arith.addf %v2, %w1 : T
    %pw = math.powf %den, %b : T
    %w3 = arith.addf %w2, %pw : T
    %c = math.cos %a : T
    %ab = math.absf %a : T
    %er = math.erf %b : T
    %mx = arith.maximumf %c, %ab : T
    %mn = arith.minimumf %er, %half : T
    %w4 = arith.addf %w3, %mx : T
    %w5 = arith.subf %w4, %mn : T
    %e2 = math.exp2 %b : T
    %ng = arith.negf %e2 : T
    %pos = arith.cmpf ogt, %a, %b : T
    %sel = arith.select %pos, %ng, %a2 : T
    %w6 = arith.addf %w5, %sel : T
    %fl = math.floor %a : T
    %w7 = arith.addf %w6, %fl : T
    tra.yield %w7 : T
  }"""


def map_ref(t):
    a, b = t["x"], t["w"][None, :]
    den = a * a + 1
    v = torch.exp(a) * torch.sin(b) / den - torch.tanh(b) + torch.log(den) \
        - torch.log2(den) + torch.sqrt(den) * torch.rsqrt(den) + den ** b
    v = v + torch.maximum(torch.cos(a), torch.abs(a)) \
        - torch.minimum(torch.erf(b), torch.tensor(0.5, dtype=a.dtype))
    v = v + torch.where(a > b, -torch.exp2(b), a * a) + torch.floor(a)
    return v


@pytest.mark.parametrize("dtype", ["f64", "f32"])
def test_map_body(dtype):
    args = [("x", "tensor<3x4x%s>" % dtype), ("w", "tensor<4x%s>" % dtype)]
    ir = loss_module(args, MAP_BODY.replace("xT>", "x%s>" % dtype)
                     .replace(": T", ": " + dtype), "y", (3, 4), dtype)
    inputs = {"x": rand(3, 4), "w": rand(4, low=0.2, high=1.0), "r": rand(3, 4)}
    run_case(ir, inputs, map_ref, ["x", "w"], dtype)


def test_map_body_finite_differences():
    """The same body's gradient against central differences of the
    interpreter's own loss (float64)."""
    args = [("x", "tensor<3x4xf64>"), ("w", "tensor<4xf64>")]
    ir = loss_module(args, MAP_BODY.replace("xT>", "xf64>")
                     .replace(": T", ": f64"), "y", (3, 4), "f64")
    model = tra.parse(ir)
    model.gradient("loss", ["x", "w"])
    inputs = {"x": rand(3, 4), "w": rand(4, low=0.2, high=1.0), "r": rand(3, 4)}
    grads = model.interpret("loss_grad", inputs)
    h = 1e-6
    for name in ["x", "w"]:
        fd = np.zeros_like(inputs[name])
        for idx in np.ndindex(*inputs[name].shape):
            plus, minus = dict(inputs), dict(inputs)
            plus[name] = inputs[name].copy()
            minus[name] = inputs[name].copy()
            plus[name][idx] += h
            minus[name][idx] -= h
            fd[idx] = (model.interpret("loss", plus)["result0"] -
                       model.interpret("loss", minus)["result0"]) / (2 * h)
        # floor is flat almost everywhere, so differences see the same.
        assert rel_err(grads["grad_" + name], fd) <= 1e-6


def test_map_index_mask():
    """A causal mask reading tra.index and a position: no gradient where
    the mask wrote -1e9."""
    op = """
  %y = tra.map "qk,->qk" (%s, %p) : (tensor<3x5xf64>, tensor<i64>)
      -> tensor<3x5xf64> {
  ^bb0(%v: f64, %pp: i64):
    %q = tra.index 0
    %k = tra.index 1
    %qi = arith.index_cast %q : index to i64
    %ki = arith.index_cast %k : index to i64
    %abs = arith.addi %pp, %qi : i64
    %keep = arith.cmpi sle, %ki, %abs : i64
    %big = arith.constant -1.0e9 : f64
    %m = arith.select %keep, %v, %big : f64
    %e = math.exp %m : f64
    tra.yield %e : f64
  }"""
    args = [("s", "tensor<3x5xf64>"), ("p", "tensor<i64>")]
    mask = torch.tensor([[k <= 1 + q for k in range(5)] for q in range(3)])
    run_case(loss_module(args, op, "y", (3, 5), "f64"),
             {"s": rand(3, 5), "p": np.array(1), "r": rand(3, 5)},
             lambda t: torch.exp(torch.where(mask, t["s"],
                                             torch.tensor(-1e9,
                                                          dtype=torch.float64))),
             ["s"], "f64")


# --- data movement ----------------------------------------------------------

def movement_case(op, args, inputs, yshape, fn, wrt):
    inputs = dict(inputs)
    inputs["r"] = rand(*yshape)
    run_case(loss_module(args, op, "y", yshape, "f64"), inputs, fn, wrt,
             "f64")


def test_reshape():
    movement_case(
        "  %y = tra.reshape %x : tensor<4x6xf64> -> tensor<4x2x3xf64>",
        [("x", "tensor<4x6xf64>")], {"x": rand(4, 6)}, (4, 2, 3),
        lambda t: t["x"].reshape(4, 2, 3), ["x"])


def test_slice():
    movement_case(
        "  %y = tra.slice %x dim 1 offset 2 size 3 "
        ": tensor<4x6xf64> -> tensor<4x3xf64>",
        [("x", "tensor<4x6xf64>")], {"x": rand(4, 6)}, (4, 3),
        lambda t: t["x"][:, 2:5], ["x"])


def test_concat():
    movement_case(
        "  %y = tra.concat dim 0 (%a, %b, %a) : (tensor<2x3xf64>, "
        "tensor<4x3xf64>, tensor<2x3xf64>) -> tensor<8x3xf64>",
        [("a", "tensor<2x3xf64>"), ("b", "tensor<4x3xf64>")],
        {"a": rand(2, 3), "b": rand(4, 3)}, (8, 3),
        lambda t: torch.cat([t["a"], t["b"], t["a"]], 0), ["a", "b"])


@pytest.mark.parametrize("dim,pos", [(0, 2), (1, 1), (1, 0)])
def test_update_slice(dim, pos):
    ushape = [5, 4]
    ushape[dim] = 2
    ut = tensor_type(ushape, "f64")
    op = ("  %%y = tra.update_slice %%u into %%d dim %d at %%p : %s into "
          "tensor<5x4xf64> at tensor<i64>" % (dim, ut))

    def ref(t):
        out = t["d"].clone()
        index = [slice(None), slice(None)]
        index[dim] = slice(pos, pos + 2)
        out[tuple(index)] = t["u"]
        return out
    movement_case(op, [("u", ut), ("d", "tensor<5x4xf64>"),
                       ("p", "tensor<i64>")],
                  {"u": rand(*ushape), "d": rand(5, 4), "p": np.array(pos)},
                  (5, 4), ref, ["u", "d"])


def test_gather_repeated_indices():
    idx = np.array([[3, 1, 3], [0, 3, 5]])
    movement_case(
        "  %y = tra.gather %e[%i] : tensor<6x4xf64>, tensor<2x3xi64> "
        "-> tensor<2x3x4xf64>",
        [("e", "tensor<6x4xf64>"), ("i", "tensor<2x3xi64>")],
        {"e": rand(6, 4), "i": idx}, (2, 3, 4),
        lambda t: t["e"][t["i"]], ["e"])


def test_convert_and_fill():
    op = """
  %h = tra.convert %x : tensor<3x4xf64> to tensor<3x4xf32>
  %two = tra.fill 2.0 : tensor<3x4xf32>
  %m = tra.einsum "ij,ij->ij" mul (%h, %two)
      : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  %y = tra.convert %m : tensor<3x4xf32> to tensor<3x4xf64>"""
    x = rand(3, 4).astype(np.float32).astype(np.float64)  # exact in f32
    movement_case(op, [("x", "tensor<3x4xf64>")], {"x": x}, (3, 4),
                  lambda t: t["x"] * 2, ["x"])


# --- a composite: RMSNorm, attention with softmax, SwiGLU -------------------

BLOCK = """
  %ss = tra.einsum "sd->s" square (%x) : (tensor<4x8xf64>) -> tensor<4xf64>
  %inv = tra.map "s->s" (%ss) : (tensor<4xf64>) -> tensor<4xf64> {
  ^bb0(%v: f64):
    %n = arith.constant 8.0 : f64
    %eps = arith.constant 1.0e-5 : f64
    %m = arith.divf %v, %n : f64
    %a = arith.addf %m, %eps : f64
    %res = math.rsqrt %a : f64
    tra.yield %res : f64
  }
  %h = tra.map "sd,s,d->sd" (%x, %inv, %g) : (tensor<4x8xf64>, tensor<4xf64>,
      tensor<8xf64>) -> tensor<4x8xf64> {
  ^bb0(%a: f64, %b: f64, %c: f64):
    %t = arith.mulf %a, %b : f64
    %u = arith.mulf %t, %c : f64
    tra.yield %u : f64
  }
  %q = tra.einsum "sd,ed->se" mul (%h, %wq) : (tensor<4x8xf64>, tensor<8x8xf64>) -> tensor<4x8xf64>
  %k = tra.einsum "sd,ed->se" mul (%h, %wk) : (tensor<4x8xf64>, tensor<8x8xf64>) -> tensor<4x8xf64>
  %s = tra.einsum "qd,kd->qk" mul (%q, %k) : (tensor<4x8xf64>, tensor<4x8xf64>) -> tensor<4x4xf64>
  %mx = tra.einsum "qk->q" id (%s) reduce max : (tensor<4x4xf64>) -> tensor<4xf64>
  %e = tra.map "qk,q->qk" (%s, %mx) : (tensor<4x4xf64>, tensor<4xf64>) -> tensor<4x4xf64> {
  ^bb0(%a: f64, %b: f64):
    %d = arith.subf %a, %b : f64
    %res = math.exp %d : f64
    tra.yield %res : f64
  }
  %z = tra.einsum "qk->q" id (%e) : (tensor<4x4xf64>) -> tensor<4xf64>
  %p = tra.einsum "qk,q->qk" div (%e, %z) : (tensor<4x4xf64>, tensor<4xf64>) -> tensor<4x4xf64>
  %o = tra.einsum "qk,kd->qd" mul (%p, %h) : (tensor<4x4xf64>, tensor<4x8xf64>) -> tensor<4x8xf64>
  %a1 = tra.einsum "sd,fd->sf" mul (%o, %w1) : (tensor<4x8xf64>, tensor<6x8xf64>) -> tensor<4x6xf64>
  %sl = tra.einsum "sf->sf" silu (%a1) : (tensor<4x6xf64>) -> tensor<4x6xf64>
  %y = tra.einsum "sf,df->sd" mul (%sl, %w2) : (tensor<4x6xf64>, tensor<8x6xf64>) -> tensor<4x8xf64>"""


def block_ref(t):
    x = t["x"]
    h = x * torch.rsqrt((x * x).mean(1, keepdim=True) + 1e-5) * t["g"]
    q, k = h @ t["wq"].T, h @ t["wk"].T
    p = torch.softmax(q @ k.T, dim=1)
    o = p @ h
    return torch.nn.functional.silu(o @ t["w1"].T) @ t["w2"].T


def test_block():
    shapes = {"x": (4, 8), "g": (8,), "wq": (8, 8), "wk": (8, 8),
              "w1": (6, 8), "w2": (8, 6)}
    args = [(n, tensor_type(s, "f64")) for n, s in shapes.items()]
    inputs = {n: rand(*s) for n, s in shapes.items()}
    movement_case(BLOCK, args, inputs, (4, 8), block_ref, list(shapes))


# --- what the pass refuses ---------------------------------------------------

def test_errors():
    model = tra.parse(loss_module(
        [("x", "tensor<3xf64>"), ("i", "tensor<3xi64>")],
        '  %y = tra.einsum "i->i" exp (%x) : (tensor<3xf64>) -> tensor<3xf64>',
        "y", (3,), "f64"))
    with pytest.raises(ValueError, match="no argument named 'nope'"):
        model.gradient("loss", ["nope"])
    with pytest.raises(ValueError, match="only floating-point arguments"):
        model.gradient("loss", ["i"])
    # Without wrt: every float argument (x and r).
    assert model.gradient("loss") == "loss_grad"
    sig = model.signature("loss_grad")
    assert [r["name"] for r in sig["results"]] == ["result0", "grad_x",
                                                  "grad_r"]
    with pytest.raises(ValueError, match="already has a symbol named"):
        model.gradient("loss", ["x"])
