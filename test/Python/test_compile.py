"""tra.compile: models planned with tra-compile's pipeline, compiled into a
shared library (through a test-local library cache), loaded and run in
process on NumPy arrays; checked against float64 NumPy references, the
EXPLAIN report against `tra-compile --emit=plan --explain`, a plan for
several devices run as one MPI job, and every error as a ValueError with a
useful message.

Run by compile.test (pytest).
"""
import math
import os
import re
import shutil
import subprocess
import threading

import numpy as np
import pytest

import tra
from tra import builder as tb

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
BLOCK = os.path.join(ROOT, "examples", "llama_block.mlir")
HW = os.path.join(ROOT, "hw")


def tra_compile_binary():
    """build/bin/tra-compile next to the package, else the one on PATH."""
    here = os.path.join(os.path.dirname(tra.__file__), "..", "..", "bin",
                        "tra-compile")
    return here if os.path.exists(here) else shutil.which("tra-compile")


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory):
    return str(tmp_path_factory.mktemp("tra-cache"))


@pytest.fixture(scope="module")
def block_text():
    with open(BLOCK) as f:
        return f.read()


@pytest.fixture(scope="module")
def ffn(block_text, cache_dir):
    return tra.compile(block_text, hw="local", entry="ffn",
                       cache_dir=cache_dir)


def ffn_inputs(seed=0):
    rng = np.random.default_rng(seed)
    return {
        "h": rng.standard_normal((4, 64)),
        "ffn_norm": 1.0 + 0.1 * rng.standard_normal(64),
        "w1": 0.1 * rng.standard_normal((172, 64)),
        "w2": 0.1 * rng.standard_normal((64, 172)),
        "w3": 0.1 * rng.standard_normal((172, 64)),
    }


def ffn_reference(h, ffn_norm, w1, w2, w3):
    """The @ffn of llama_block.mlir in float64, on the float32-rounded
    inputs the program sees."""
    h, ffn_norm, w1, w2, w3 = (np.float32(a).astype(np.float64)
                               for a in (h, ffn_norm, w1, w2, w3))
    hn = h / np.sqrt(np.mean(h * h, axis=1, keepdims=True) + 1e-5) * ffn_norm
    a, b = hn @ w1.T, hn @ w3.T
    g = a / (1.0 + np.exp(-a)) * b
    return h + g @ w2.T


def assert_close(actual, expected, rtol=1e-5):
    """Element-wise within rtol of the largest |expected| (f32 sums)."""
    expected = np.asarray(expected, dtype=np.float64)
    scale = max(1.0, float(np.abs(expected).max()))
    err = float(np.abs(actual.astype(np.float64) - expected).max())
    assert err <= rtol * scale, "max abs error %g > %g" % (err, rtol * scale)


# -- llama_block's ffn -------------------------------------------------------


def test_ffn_matches_numpy(ffn):
    inputs = ffn_inputs()
    out = ffn(**inputs)
    assert list(out) == ["out"]
    assert out["out"].shape == (4, 64) and out["out"].dtype == np.float32
    assert_close(out["out"], ffn_reference(**inputs))


def test_ffn_dict_call_and_repeated_runs(ffn):
    for seed in (1, 2):
        inputs = ffn_inputs(seed)
        out = ffn(inputs)["out"]
        assert_close(out, ffn_reference(**inputs))


def test_ffn_runs_from_threads(ffn):
    """Calls release the GIL; concurrent calls from threads stay correct."""
    inputs = [ffn_inputs(seed) for seed in range(4)]
    outs = [None] * 4

    def work(i):
        outs[i] = ffn(**inputs[i])["out"]

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i in range(4):
        assert_close(outs[i], ffn_reference(**inputs[i]))


def test_ffn_signature(ffn):
    sig = ffn.signature
    assert [(t.name, t.shape, t.dtype) for t in sig.inputs] == [
        ("h", (4, 64), "f32"), ("ffn_norm", (64,), "f32"),
        ("w1", (172, 64), "f32"), ("w2", (64, 172), "f32"),
        ("w3", (172, 64), "f32")]
    assert [(t.name, t.shape, t.dtype) for t in sig.outputs] == [
        ("out", (4, 64), "f32")]
    assert ffn.entry == "ffn" and ffn.devices == 1 and ffn.runnable
    assert "tra.Program @ffn(h: f32[4, 64]" in repr(ffn)


def test_ffn_cached(ffn, block_text, cache_dir):
    assert ffn.cache_path.startswith(cache_dir)
    again = tra.compile(block_text, entry="ffn", cache_dir=cache_dir)
    assert again.from_cache and again.cache_path == ffn.cache_path
    inputs = ffn_inputs(3)
    assert_close(again(**inputs)["out"], ffn_reference(**inputs))


def test_explain_is_tra_compiles(ffn, tmp_path):
    text = ffn.explain()
    assert text.startswith("EXPLAIN @ffn on local")
    for part in ('tra.einsum "sd,fd->sf" mul', "tra.map", "TOTAL",
                 "estimated step time", "peak memory per device"):
        assert part in text
    binary = tra_compile_binary()
    if binary is None:
        pytest.skip("tra-compile not found")
    tool = subprocess.run(
        [binary, BLOCK, "--entry", "ffn", "--hw", "local", "--emit=plan",
         "--explain"], check=True, capture_output=True, text=True).stdout

    def strip_time(s):  # the one field that differs between two plannings
        return re.sub(r"planned in [^\n]*", "planned in T", s)

    assert strip_time(text) == strip_time(tool)


def test_plan_is_planned_ir(ffn):
    text = ffn.plan()
    assert "func.func @ffn" in text and "tra_plan." in text


# -- element types -----------------------------------------------------------


@pytest.fixture(scope="module")
def typed(cache_dir):
    b = tra.Builder()
    f = b.function("types")
    xb = f.arg("xb", (4,), "bf16")
    xh = f.arg("xh", (4,), "f16")
    n = f.arg("n", (4,), "i64")
    k = f.arg("k", (4,), "i32")
    m = f.arg("m", (4,), "i1")
    a = f.arg("a", (2, 2))
    f.result("b2", f.map(lambda v: v * 2.0, xb))
    f.result("h1", f.map(lambda v: v + 1.0, xh))
    f.result("nk", f.map(lambda p, q: p + q.astype("i64"), n, k))
    f.result("k3", f.map(lambda q: q * 3, k))
    f.result("sel", f.map(lambda c, p: tb.where(c, p, -p), m, n))
    f.result("notm", f.map(lambda c: ~c, m))
    # A matmul: see test_program_without_matmul_loads.
    f.result("aa", f.einsum("ij,jk->ik", a, a))
    return tra.compile(b, cache_dir=cache_dir)


def typed_inputs():
    return dict(
        # 1 + 2^-8 and 1 + 3 * 2^-8 are ties in bf16: to even.
        xb=[1.0, 1.0 + 2.0 ** -8, 1.0 + 3 * 2.0 ** -8, math.pi],
        xh=np.array([0.5, -1.25, 3.0, 1e-3]),
        n=np.array([1, -2, 3, 2 ** 40]),
        k=np.array([5, 6, -7, 8], dtype=np.int32),
        m=np.array([True, False, True, False]),
        a=np.eye(2))


def test_element_types_convert(typed):
    assert [t.dtype for t in typed.signature.inputs] == [
        "bf16", "f16", "i64", "i32", "i1", "f32"]
    out = typed(**typed_inputs())
    # bf16 comes back as float32: 2 * the input rounded to bf16.
    assert out["b2"].dtype == np.float32
    np.testing.assert_array_equal(
        out["b2"], [2.0, 2.0, 2.0 + 2.0 ** -5, 6.28125])
    assert out["h1"].dtype == np.float16
    np.testing.assert_array_equal(
        out["h1"], np.float16([0.5, -1.25, 3.0, 1e-3]) + np.float16(1))
    assert out["nk"].dtype == np.int64
    np.testing.assert_array_equal(out["nk"], [6, 4, -4, 2 ** 40 + 8])
    assert out["k3"].dtype == np.int32
    np.testing.assert_array_equal(out["k3"], [15, 18, -21, 24])
    np.testing.assert_array_equal(out["sel"], [1, 2, 3, -2 ** 40])
    assert out["notm"].dtype == np.bool_
    np.testing.assert_array_equal(out["notm"], [False, True, False, True])
    np.testing.assert_array_equal(out["aa"], np.eye(2))


def test_element_types_accept_integers_for_i1(typed):
    inputs = typed_inputs()
    inputs["m"] = [1, 0, 0, 1]
    np.testing.assert_array_equal(typed(**inputs)["notm"],
                                  [False, True, True, False])


@pytest.mark.parametrize("name,value,message", [
    ("n", [1.5, 2, 3, 4], "input 'n' is i64: expected integers, got float64"),
    ("k", [2 ** 31, 0, 0, 0], "input 'k' is i32: its values do not fit"),
    ("m", [0, 2, 0, 1], "input 'm' is i1: expected booleans"),
    ("xh", ["a", "b", "c", "d"], "input 'xh' is f16: expected real numbers"),
    ("a", np.eye(3), "input 'a' has the wrong shape: (3, 3), expected (2, 2)"),
])
def test_element_type_errors(typed, name, value, message):
    inputs = typed_inputs()
    inputs[name] = value
    with pytest.raises(ValueError, match=re.escape(message)):
        typed(**inputs)


# A model of maps alone (no BLAS call) links and loads.
def test_program_without_matmul_loads(cache_dir):
    b = tra.Builder()
    f = b.function("twice")
    f.returns(y=f.map(lambda v: v * 2.0, f.arg("x", (3,))))
    out = tra.compile(b, cache_dir=cache_dir)(x=[1.0, 2.0, 3.0])["y"]
    np.testing.assert_array_equal(out, [2.0, 4.0, 6.0])


# -- errors ------------------------------------------------------------------


def test_missing_input(ffn):
    inputs = ffn_inputs()
    del inputs["w3"]
    with pytest.raises(ValueError, match="no array for input 'w3' of @ffn"):
        ffn(**inputs)


def test_unknown_input(ffn):
    with pytest.raises(ValueError,
                       match="@ffn has no input named 'w4' \\(inputs: h, "
                             "ffn_norm, w1, w2, w3\\)"):
        ffn(w4=np.zeros(3), **ffn_inputs())


def test_wrong_shape(ffn):
    inputs = ffn_inputs()
    inputs["h"] = np.zeros((4, 65))
    with pytest.raises(ValueError, match=re.escape(
            "input 'h' has the wrong shape: (4, 65), expected (4, 64)")):
        ffn(**inputs)


def test_bad_call_forms(ffn):
    with pytest.raises(ValueError, match="keyword arrays or one dict"):
        ffn(np.zeros((4, 64)))
    inputs = ffn_inputs()
    with pytest.raises(ValueError, match="input 'h' given twice"):
        ffn(inputs, h=inputs["h"])


def test_bad_ir():
    with pytest.raises(ValueError, match="<python>:2:26: custom op "
                                         "'tra.einsum' expected valid keyword"):
        tra.compile("func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
                    "  %0 = tra.einsum \"i->i\" (%a) : (tensor<2xf32>) -> "
                    "tensor<2xf32>\n  return %0 : tensor<2xf32>\n}\n")


def test_ir_nested_too_deep():
    text = ("func.func @f() attributes {x = " + "[" * 50000 + "]" * 50000 +
            "} { return }")
    with pytest.raises(ValueError, match="<python>:1:287: the IR nests "
                                         "brackets, braces, parentheses or "
                                         "angle brackets more than 256"):
        tra.compile(text)
    with pytest.raises(ValueError, match="more than 256 levels deep"):
        tra.parse(text)


# A run-time check that fails (an index out of range) raises a ValueError
# naming it and returns no results; the program stays usable.
def test_failed_check_raises(cache_dir):
    program = tra.compile(
        "func.func @rows(%t: tensor<4x2xf32> {tra.name = \"t\"},\n"
        "                %i: tensor<3xi64> {tra.name = \"i\"})\n"
        "    -> (tensor<3x2xf32> {tra.name = \"r\"}) {\n"
        "  %r = tra.gather %t[%i] : tensor<4x2xf32>, tensor<3xi64> "
        "-> tensor<3x2xf32>\n"
        "  return %r : tensor<3x2xf32>\n}\n", cache_dir=cache_dir)
    table = np.arange(8, dtype=np.float32).reshape(4, 2)
    with pytest.raises(ValueError, match=re.escape(
            "tra.gather at <python>:4:8: index out of range [0, 4)")):
        program(t=table, i=np.array([0, 4, 1]))
    with pytest.raises(ValueError, match="index out of range"):
        program(t=table, i=np.array([0, -1, 1]))
    out = program(t=table, i=np.array([3, 0, 1]))["r"]
    np.testing.assert_array_equal(out, table[[3, 0, 1]])


def test_ir_that_does_not_verify():
    with pytest.raises(ValueError, match="<python>:2:8: 'tra.einsum' op"):
        tra.compile("func.func @f(%a: tensor<2x3xf32>) -> tensor<3xf32> {\n"
                    "  %0 = tra.einsum \"ij,ij->i\" mul (%a, %a) : "
                    "(tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<3xf32>\n"
                    "  return %0 : tensor<3xf32>\n}\n")


def test_entry_errors(block_text):
    with pytest.raises(ValueError, match="no function @nope with a body"):
        tra.compile(block_text, entry="nope")
    with pytest.raises(ValueError, match="several public functions"):
        tra.compile(block_text)


def test_not_a_model():
    with pytest.raises(ValueError, match="tra IR text or a model"):
        tra.compile(42)


def test_unknown_hardware_file(block_text):
    with pytest.raises(ValueError, match="no-such-hw.json"):
        tra.compile(block_text, entry="ffn", hw="no-such-hw.json")


def test_several_devices_plan(block_text):
    program = tra.compile(block_text, entry="ffn",
                          hw=os.path.join(HW, "cpu-8nodes.json"))
    assert program.devices == 8 and program.mpi and not program.runnable
    assert program.explain().startswith("EXPLAIN @ffn on cpu-8nodes")
    assert "tra_plan.dist" in program.plan()


def test_several_devices_run_as_one_mpi_job(block_text):
    """gpu-4's plan (w2 and the output cut in 4) run as 4 MPI ranks of CPU
    code on this machine, outputs gathered: the same numbers."""
    program = tra.compile(block_text, entry="ffn",
                          hw=os.path.join(HW, "gpu-4.json"),
                          emulate_on_cpu=True)
    assert program.mpi and program.devices == 4
    assert "[1, 4] on 0-3" in program.explain()
    inputs = ffn_inputs(5)
    if shutil.which("mpirun") is None:
        with pytest.raises(ValueError, match="needs mpirun"):
            program(**inputs)
        return
    out = program(**inputs)
    assert out["out"].dtype == np.float32
    assert_close(out["out"], ffn_reference(**inputs))


def test_several_devices_without_mpirun(block_text, monkeypatch):
    program = tra.compile(block_text, entry="ffn",
                          hw=os.path.join(HW, "cpu-8nodes.json"))
    monkeypatch.setenv("PATH", "")
    with pytest.raises(ValueError, match="cpu-8nodes has 8 devices: running "
                                         "its plan needs mpirun"):
        program(**ffn_inputs())


def test_gpu_devices_need_emulation(block_text):
    program = tra.compile(block_text, entry="ffn",
                          hw=os.path.join(HW, "dgx-8.json"))
    assert not program.mpi and not program.runnable
    with pytest.raises(ValueError) as error:
        program(**ffn_inputs())
    message = str(error.value)
    assert "dgx-8 has 8 GPU devices" in message
    assert "emulate_on_cpu=True" in message
    assert "tra-compile MODEL.mlir --entry ffn --hw " in message
    assert "/dgx-8.json --emit=exe -o OUT" in message
    assert "mpirun -np 8 OUT" in message
    assert "one rank per GPU, NCCL between them" in message
    one = tra.compile(block_text, entry="ffn", hw=os.path.join(HW, "gpu-1.json"))
    with pytest.raises(ValueError, match="emulate_on_cpu=True"):
        one(**ffn_inputs())


# -- recomputing activations on one device -----------------------------------


def test_one_device_recomputes_what_its_plan_recomputes(cache_dir, tmp_path):
    """A device too small to keep every activation of
    test/Optimizer/recompute.mlir: the plan recomputes two, and the program
    compiled in process does too and still equals the float64 reference."""
    import importlib.util
    import json
    check_path = os.path.join(ROOT, "test", "Optimizer", "Inputs",
                              "recompute_check.py")
    spec = importlib.util.spec_from_file_location("recompute_check",
                                                  check_path)
    check = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(check)
    with open(os.path.join(HW, "cpu-1node.json")) as f:
        hw = json.load(f)
    hw["name"] = "tight"
    hw["nodes"][0]["devices"][0]["memory_bytes"] = 1900000
    hw_path = tmp_path / "tight.json"
    hw_path.write_text(json.dumps(hw))
    with open(os.path.join(ROOT, "test", "Optimizer", "recompute.mlir")) as f:
        text = f.read()
    program = tra.compile(text, hw=str(hw_path), cache_dir=cache_dir)
    assert program.explain().count("(recomputed)") == 2
    rng = np.random.default_rng(3)
    x = (0.1 * rng.standard_normal((256, 256))).astype(np.float32)
    w = (0.1 * rng.standard_normal((256, 256))).astype(np.float32)
    out = program(x=x, w=w)
    want = check.reference(x.astype(np.float64), w.astype(np.float64))
    for name in ("dw2", "dw1", "d1"):
        assert_close(out[name], want[name])
