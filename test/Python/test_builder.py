"""tra.Builder: models written in Python, traced map bodies, the IR text
they give, and the round trip build -> tra.compile -> run, checked against
float64 NumPy references; mistakes raise ValueError at the Python line.

Run by builder.test (pytest).
"""
import math
import os
import re

import numpy as np
import pytest

import tra
from tra import builder as tb


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory):
    return str(tmp_path_factory.mktemp("tra-cache"))


def assert_close(actual, expected, rtol=1e-5):
    """Element-wise within rtol of the largest |expected| (f32 sums)."""
    expected = np.asarray(expected, dtype=np.float64)
    scale = max(1.0, float(np.abs(expected).max()))
    err = float(np.abs(actual.astype(np.float64) - expected).max())
    assert err <= rtol * scale, "max abs error %g > %g" % (err, rtol * scale)


def f32(a):
    """`a` rounded to float32, as float64: what the program computes on."""
    return np.asarray(a, dtype=np.float32).astype(np.float64)


# -- the IR text -------------------------------------------------------------


def test_text_is_the_dialects():
    b = tra.Builder()
    f = b.function("scale")
    x = f.arg("x", (4, 8))
    s = f.arg("s", (8,), dtype=np.float32)
    y = f.map(lambda a, c: tb.maximum(a * c, 0.0), x, s, spec="sd,d->sd")
    r = f.einsum("sd->s", y, combiner="square", reduce="max")
    f.returns(y=y, r=r)
    assert b.text() == """\
func.func @scale(%arg0: tensor<4x8xf32> {tra.name = "x"}, \
%arg1: tensor<8xf32> {tra.name = "s"}) -> \
(tensor<4x8xf32> {tra.name = "y"}, tensor<4xf32> {tra.name = "r"}) {
  %0 = tra.map "sd,d->sd" (%arg0, %arg1) : \
(tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32> {
  ^bb0(%m0_a0: f32, %m0_a1: f32):
    %m0_v0 = arith.mulf %m0_a0, %m0_a1 : f32
    %m0_v1 = arith.constant 0.0 : f32
    %m0_v2 = arith.maximumf %m0_v0, %m0_v1 : f32
    tra.yield %m0_v2 : f32
  }
  %1 = tra.einsum "sd->s" square (%0) reduce max : \
(tensor<4x8xf32>) -> tensor<4xf32>
  return %0, %1 : tensor<4x8xf32>, tensor<4xf32>
}
"""
    # The text parses and verifies, and prints back as tra-opt prints it.
    model = b.model()
    assert model.functions() == ["scale"]
    assert model.signature("scale")["results"][1] == {
        "name": "r", "shape": [4], "dtype": "f32"}
    assert 'tra.einsum "sd->s" square' in model.text()


def test_locations_point_to_python():
    b = tra.Builder()
    f = b.function("g")
    x = f.arg("x", (2,))
    f.returns(y=f.map(lambda v: tb.exp(v), x))  # the line of this test
    text = b.text(locations=True)
    line = [i + 1 for i, l in enumerate(open(__file__).read().splitlines())
            if "# the line of this test" in l and "text" not in l][0]
    here = os.path.abspath(__file__)
    assert 'math.exp %%m0_a0 : f32 loc("%s":%d:' % (here, line) in text
    assert "loc(" not in b.text()


def test_constants_and_literals():
    b = tra.Builder()
    f = b.function("c")
    x = f.arg("x", (2,))
    y = f.map(lambda v: tb.where(v > 1e-5, v * 1e20, -math.inf), x)
    z = f.fill(-math.inf, (2,))
    i = f.fill(3, (), "i64")
    t = f.fill(True, (2,), "i1")
    f.returns(y=y, z=z, i=i, t=t)
    text = b.text()
    assert "arith.constant 1.0e-05 : f32" in text
    assert "arith.constant 1.0e+20 : f32" in text
    assert "arith.constant 0xFF800000 : f32" in text
    assert "tra.fill -inf : tensor<2xf32>" in text
    assert "tra.fill 3 : tensor<i64>" in text
    assert "tra.fill true : tensor<2xi1>" in text
    out = b.model().interpret("c", {"x": np.array([0.0, 2.0])})
    np.testing.assert_array_equal(out["y"], np.float32([-np.inf, 2e20]))
    assert out["i"] == 3 and out["t"].tolist() == [True, True]


# -- round trips: build, compile for this machine, run -----------------------


@pytest.fixture(scope="module")
def mlp(cache_dir):
    """Two layers with a tanh-approximated GELU and a bias."""
    b = tra.Builder()
    f = b.function("mlp")
    x = f.arg("x", (8, 32))
    w1 = f.arg("w1", (32, 48))
    b1 = f.arg("b1", (48,))
    w2 = f.arg("w2", (48, 16))

    def gelu(v, bias):
        u = v + bias
        return 0.5 * u * (1.0 + tb.tanh(0.7978845608 * (u + 0.044715 * u ** 3)))

    h = f.map(gelu, f.einsum("sd,df->sf", x, w1), b1, spec="sf,f->sf")
    f.returns(y=f.einsum("sf,fo->so", h, w2))
    return tra.compile(b, cache_dir=cache_dir)


def test_mlp_matches_numpy(mlp):
    rng = np.random.default_rng(0)
    x, w1 = rng.standard_normal((8, 32)), 0.3 * rng.standard_normal((32, 48))
    b1, w2 = rng.standard_normal(48), 0.3 * rng.standard_normal((48, 16))
    y = mlp(x=x, w1=w1, b1=b1, w2=w2)["y"]
    u = f32(x) @ f32(w1) + f32(b1)
    h = 0.5 * u * (1 + np.tanh(0.7978845608 * (u + 0.044715 * u ** 3)))
    assert_close(y, h @ f32(w2))


def test_mlp_signature_and_explain(mlp):
    assert [(t.name, t.shape) for t in mlp.signature.inputs] == [
        ("x", (8, 32)), ("w1", (32, 48)), ("b1", (48,)), ("w2", (48, 16))]
    assert mlp.explain().startswith("EXPLAIN @mlp on local")


@pytest.fixture(scope="module")
def norm_attention(cache_dir):
    """RMSNorm, a projection, scores and a numerically stable softmax."""
    b = tra.Builder()
    f = b.function("norm_softmax")
    x = f.arg("x", (6, 16))
    g = f.arg("g", (16,))
    wq = f.arg("wq", (16, 16))
    k = f.arg("k", (10, 16))
    ss = f.einsum("sd->s", x, combiner="square")
    xn = f.map(lambda v, s, w: v * tb.rsqrt(s / 16.0 + 1e-5) * w, x, ss, g,
               spec="sd,s,d->sd")
    q = f.einsum("sd,ed->se", xn, wq)
    scores = f.einsum("se,te->st", q, k)
    m = f.einsum("st->s", scores, reduce="max")
    e = f.map(lambda a, b: tb.exp(a - b), scores, m, spec="st,s->st")
    z = f.einsum("st->s", e)
    p = f.einsum("st,s->st", e, z, combiner="div")
    f.returns(p=p, xn=xn)
    return b, tra.compile(b, cache_dir=cache_dir)


def norm_softmax_reference(x, g, wq, k):
    x, g, wq, k = f32(x), f32(g), f32(wq), f32(k)
    xn = x / np.sqrt(np.mean(x * x, axis=1, keepdims=True) + 1e-5) * g
    s = (xn @ wq.T) @ k.T
    e = np.exp(s - s.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True), xn


def test_rmsnorm_matmul_softmax_matches_numpy(norm_attention):
    b, program = norm_attention
    rng = np.random.default_rng(1)
    inputs = dict(x=rng.standard_normal((6, 16)),
                  g=1 + 0.1 * rng.standard_normal(16),
                  wq=rng.standard_normal((16, 16)),
                  k=rng.standard_normal((10, 16)))
    out = program(**inputs)
    p, xn = norm_softmax_reference(**inputs)
    assert_close(out["xn"], xn)
    assert_close(out["p"], p, rtol=1e-4)  # exp of scores of size ~10
    np.testing.assert_allclose(out["p"].sum(axis=1), 1.0, rtol=1e-5)
    # The reference interpreter on the same model agrees.
    ref = b.model().interpret("norm_softmax", inputs)
    assert_close(out["p"], ref["p"], rtol=1e-4)


@pytest.fixture(scope="module")
def data_movement(cache_dir):
    b = tra.Builder()
    f = b.function("moves")
    x = f.arg("x", (4, 6))
    table = f.arg("table", (5, 3))
    ids = f.arg("ids", (2,), "i64")
    pos = f.arg("pos", (), "i64")
    r = f.reshape(x, (4, 2, 3))
    s = f.slice(r, dim=-1, offset=1, size=2)
    c = f.concat([f.reshape(s, (4, 4)), f.fill(0.5, (4, 2))], dim=1)
    gathered = f.gather(table, ids)
    upd = f.update_slice(gathered, f.fill(0.0, (5, 3)), 0, pos)
    idx = f.map(lambda v: v + tb.index(0).astype("f32") * 100, c)
    half = f.convert(idx, "f16")
    mm = f.einsum("ij,kj->ik", x, x)
    f.returns(c=idx, upd=upd, half=half, mm=mm)
    return tra.compile(b, cache_dir=cache_dir)


def test_reshape_slice_concat_fill_gather_match_numpy(data_movement):
    x = np.arange(24.0).reshape(4, 6)
    table = np.arange(15.0).reshape(5, 3)
    out = data_movement(x=x, table=table, ids=[4, 1], pos=2)
    c = np.concatenate([x.reshape(4, 2, 3)[:, :, 1:3].reshape(4, 4),
                        np.full((4, 2), 0.5)], axis=1)
    c = c + 100 * np.arange(4)[:, None]
    np.testing.assert_array_equal(out["c"], c)
    upd = np.zeros((5, 3))
    upd[2:4] = table[[4, 1]]
    np.testing.assert_array_equal(out["upd"], upd)
    assert out["half"].dtype == np.float16
    np.testing.assert_array_equal(out["half"], c.astype(np.float16))
    assert_close(out["mm"], x @ x.T)


@pytest.fixture(scope="module")
def scalar_ops(cache_dir):
    """Every operation a traced map function can use, in one program."""
    ops = {
        "exp": (tb.exp, np.exp),
        "exp2": (tb.exp2, np.exp2),
        "log": (tb.log, np.log),
        "log2": (tb.log2, np.log2),
        "sqrt": (tb.sqrt, np.sqrt),
        "rsqrt": (tb.rsqrt, lambda v: 1 / np.sqrt(v)),
        "tanh": (tb.tanh, np.tanh),
        "sin": (tb.sin, np.sin),
        "cos": (tb.cos, np.cos),
        "erf": (tb.erf, np.vectorize(math.erf)),
        "sigmoid": (tb.sigmoid, lambda v: 1 / (1 + np.exp(-v))),
        "silu": (tb.silu, lambda v: v / (1 + np.exp(-v))),
        "floor": (lambda v: tb.floor(v * 3), lambda v: np.floor(v * 3)),
        "ceil": (lambda v: tb.ceil(v * 3), lambda v: np.ceil(v * 3)),
        "pow": (lambda v: v ** 1.5 - 2 ** v, lambda v: v ** 1.5 - 2 ** v),
        "arith": (lambda v: (1 - v) / (v + 2) * 3, lambda v: (1 - v) / (v + 2) * 3),
        "rem": (lambda v: (v * 7) % 2.0, lambda v: np.fmod(v * 7, 2.0)),
        "floordiv": (lambda v: (v * 7) // 2.0, lambda v: np.floor(v * 7 / 2)),
        "clip": (lambda v: tb.maximum(tb.minimum(v, 0.7), 0.2),
                 lambda v: np.clip(v, 0.2, 0.7)),
        "where": (lambda v: tb.where((v > 0.5) & (v <= 0.9) | (v == 0.25),
                                     v, -v),
                  lambda v: np.where((v > 0.5) & (v <= 0.9) | (v == 0.25),
                                     v, -v)),
        "abs": (lambda v: abs(v - 0.5), lambda v: np.abs(v - 0.5)),
        "neg": (lambda v: -v + (v != 0.375).astype("f32"),
                lambda v: -v + (v != 0.375)),
        "numpy": (lambda v: np.exp(v) + np.maximum(v, 0.5) * np.sqrt(v),
                  lambda v: np.exp(v) + np.maximum(v, 0.5) * np.sqrt(v)),
        "integers": (lambda v: ((v * 100).astype("i64") // 3
                                + (v * 100).astype("i64") % 7
                                - tb.abs((v * 10).astype("i32")).astype("i64")
                                ).astype("f32"),
                     lambda v: (np.trunc(v * 100) // 3 + np.trunc(v * 100) % 7
                                - np.trunc(v * 10))),
        "not": (lambda v: (~(v > 0.5)).astype("f32"),
                lambda v: (v <= 0.5).astype(np.float64)),
        "index": (lambda v: v + tb.index(0).astype("f32") * 10
                  + tb.index(1).astype("f32"),
                  lambda v: v + 10 * np.arange(4)[:, None]
                  + np.arange(8)[None, :]),
    }
    b = tra.Builder()
    f = b.function("ops")
    x = f.arg("x", (4, 8))
    for name, (fn, _) in ops.items():
        f.result(name, f.map(fn, x))
    f.result("mm", f.einsum("ij,kj->ik", x, x))
    return ops, b, tra.compile(b, cache_dir=cache_dir)


def test_every_scalar_operation_matches_numpy(scalar_ops):
    ops, b, program = scalar_ops
    x = np.random.default_rng(2).random((4, 8)) * 0.9 + 0.05
    x[0, 0], x[0, 1] = 0.25, 0.375
    out = program(x=x)
    interpreted = b.model().interpret("ops", {"x": x})
    for name, (_, ref) in ops.items():
        want = ref(f32(x))
        for got in (out[name], interpreted[name]):
            err = float(np.abs(got - want).max())
            assert err <= 2e-6 * max(1.0, float(np.abs(want).max())), name


def test_module_level_functions_and_several_functions():
    b = tra.Builder()
    helper = b.function("helper", public=False)
    a = helper.arg("a", (2, 2))
    helper.returns(tb.einsum("ij,jk->ik", a, a))
    main = b.function("main")
    x = main.arg("x", (2, 2))
    main.returns(out=tb.map(lambda v: v * 2, x))
    text = b.text()
    assert "func.func private @helper" in text
    assert '-> (tensor<2x2xf32> {tra.name = "result0"})' in text
    assert b.model().functions() == ["helper", "main"]


# -- errors ------------------------------------------------------------------


def traced(fn, *shapes_dtypes, **kwargs):
    """Builds one map over arguments of the given dtypes (shape (2,))."""
    b = tra.Builder()
    f = b.function("f")
    args = [f.arg("a%d" % i, (2,), d) for i, d in enumerate(shapes_dtypes)]
    return f.map(fn, *args, **kwargs)


@pytest.mark.parametrize("fn,message", [
    (lambda v: v if v > 0 else -v, "a traced value has no truth value"),
    (lambda v: math.exp(v), "a traced value is not a number"),
    (lambda v: (v, v), "it returned 2 values"),
    (lambda v: "v", "it returned 'v', not a traced value"),
    (lambda v: np.sort(v), "NumPy functions other than the ufuncs"),
    (lambda v: np.arctan2(v, v), "NumPy's arctan2 has no tra equivalent"),
    (lambda v: v + tb.astype(v, "f16"), "f32 and f16 mixed"),
    (lambda v: tb.index(3), "index\\(3\\) of a rank-1 result"),
    (lambda v: tb.where(v, v, v), "where takes an i1 condition"),
    (lambda v: (v > 0) < (v > 1), "i1 values compare only with"),
])
def test_untraceable_map_function(fn, message):
    with pytest.raises(ValueError, match="map function .* cannot be traced: "
                                         ".*" + message):
        traced(fn, "f32")


def test_integer_division_needs_floor_division():
    with pytest.raises(ValueError, match="/ on i64: use //"):
        traced(lambda n: n / 2, "i64")
    with pytest.raises(ValueError, match="exp takes a float"):
        traced(lambda n: tb.exp(n), "i64")


def test_index_outside_map_function():
    with pytest.raises(ValueError, match="only available inside a map"):
        tb.index(0)


@pytest.mark.parametrize("build,message", [
    (lambda f, x, w: f.einsum("sd,ed->se", x, x, w),
     "einsum spec 'sd,ed->se' has 2 input terms for 3 operands"),
    (lambda f, x, w: f.einsum("sd,dd->s", x, w), "term 'dd' repeats"),
    (lambda f, x, w: f.einsum("sd,df->sf", x, x),
     "index 'd' is 8 in one operand and 4 in operand 1"),
    (lambda f, x, w: f.einsum("sd->sz", x), "output index 'z' is in no"),
    (lambda f, x, w: f.einsum("sd,de->se", x, w, combiner="sub", reduce="avg"),
     "unknown einsum aggregation 'avg'"),
    (lambda f, x, w: f.einsum("s1->s", x), "index '1' is not a letter"),
    (lambda f, x, w: f.einsum("sd->s", x, combiner="exp2"),
     "unknown einsum combiner 'exp2'"),
    (lambda f, x, w: f.einsum("sd,de->se", x, w, combiner="exp"),
     "combiner exp takes one operand"),
    (lambda f, x, w: f.map(lambda a, b: a, x, w), "give a spec to broadcast"),
    (lambda f, x, w: f.map(lambda a: a, x, spec="sd->sdz"),
     "output index 'z' is in no operand; give shape="),
    (lambda f, x, w: f.map(lambda: 1.0, spec="->s", shape=(4,)),
     "map needs at least one operand"),
    (lambda f, x, w: f.reshape(x, (5, 7)), "changes the number of elements"),
    (lambda f, x, w: f.slice(x, 1, 6, 4), "slice \\[6, 10\\) of dimension 1"),
    (lambda f, x, w: f.concat([x, w], 0), "concat along 0"),
    (lambda f, x, w: f.arg("x", (2,)), "two arguments named 'x'"),
    (lambda f, x, w: f.arg("y", (2,), "f64"), "unsupported element type"),
    (lambda f, x, w: f.gather(x, w), "gather indices are i64 or i32"),
    (lambda f, x, w: tra.Builder().function("g").einsum("i->i", x),
     "belongs to @f, not @g"),
])
def test_builder_errors(build, message):
    b = tra.Builder()
    f = b.function("f")
    x = f.arg("x", (4, 8))
    w = f.arg("w", (8, 3))
    with pytest.raises(ValueError, match=message):
        build(f, x, w)


def test_verifier_errors_point_to_the_python_line():
    b = tra.Builder()
    f = b.function("f")
    x = f.arg("x", (2, 3))
    f.returns(y=f.reshape(x, (3, 2)))  # not a grouping: the verifier says no
    line = [i + 1 for i, l in enumerate(open(__file__).read().splitlines())
            if "# not a grouping" in l][0]
    where = re.escape("%s:%d:" % (os.path.abspath(__file__), line))
    with pytest.raises(ValueError, match=where + ".*'tra.reshape' op"):
        b.model()
    with pytest.raises(ValueError, match=where):
        tra.compile(b, cache_dir="")


def test_function_without_results():
    b = tra.Builder()
    b.function("f").arg("x", (2,))
    with pytest.raises(ValueError, match="@f has no results"):
        b.text()
