"""tra.Llama: a checkpoint compiled for one device and run by tra's engine,
checked against the independent float64 NumPy reference of
test/Frontend/Inputs/llama2c_reference.py.

Run by llama.test (pytest); TRA_MODELS names ../shared/models.
"""
import os
import sys

import numpy as np
import pytest

import tra

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "Frontend",
                                "Inputs"))
import llama2c_reference as ref  # noqa: E402

MODEL = os.path.join(os.environ.get("TRA_MODELS", ""), "stories260K.bin")
# llama2.c's greedy continuation of BOS with stories260K (shared/models).
LLAMA2C_IDS = [461, 461, 401, 401, 401, 461, 378, 455, 473, 456]


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory):
    return str(tmp_path_factory.mktemp("tra-cache"))


@pytest.fixture(scope="module")
def llm(cache_dir):
    return tra.Llama(MODEL, cache_dir=cache_dir, max_seq_len=64)


@pytest.fixture(scope="module")
def reference():
    cfg, w = ref.load(MODEL)
    return cfg, w


def test_params(llm):
    p = llm.params
    assert (p["dim"], p["n_layers"], p["n_heads"], p["n_kv_heads"]) == \
        (64, 5, 8, 4)
    assert p["vocab_size"] == 512 and p["max_seq_len"] == 64


def test_greedy_ids_match_llama2c_and_numpy(llm, reference):
    ids = llm.generate([1], steps=20)
    assert ids[:10] == LLAMA2C_IDS
    # Each of the 20 positions yields the next token.
    want, _ = ref.generate(*reference, steps=20)
    assert ids == want
    timings = llm.last_timings
    assert timings["prefill_seconds"] > 0 and timings["decode_seconds"] > 0


def test_forward_logits_match_numpy(llm, reference):
    tokens = [1, 461, 401, 37, 300, 2]
    llm.reset()
    prefill = llm.forward(tokens, pos=0)
    assert prefill.shape == (6, 512) and prefill.dtype == np.float32
    nxt = llm.forward([99], pos=6)
    got = np.concatenate([prefill, nxt])
    # The reference feeds BOS at position 0, then forced[pos] after it.
    _, want = ref.generate(*reference, steps=7, forced=tokens[1:] + [99, 0])
    err = float(np.abs(got - want).max())
    assert err < 1e-3, f"max abs logit error {err:.3e}"
    # The logits are not all alike: a broken step would not pass by chance.
    assert float(np.abs(want[1:] - want[:-1]).max()) > 1.0


def test_prefill_and_token_by_token_agree(llm):
    prompt = [1, 461, 401, 401]
    assert llm.generate(prompt, steps=16, prefill=True) == \
        llm.generate(prompt, steps=16, prefill=False)


def test_sampling_is_seeded(llm):
    a = llm.generate([1], steps=24, temperature=1.0, top_p=0.9, seed=42)
    b = llm.generate([1], steps=24, temperature=1.0, top_p=0.9, seed=42)
    c = llm.generate([1], steps=24, temperature=1.0, top_p=0.9, seed=7)
    assert a == b and len(a) == 24
    assert a != c


def test_second_instance_loads_from_the_cache(cache_dir):
    other = tra.Llama(MODEL, cache_dir=cache_dir, max_seq_len=64)
    assert other.generate([1], steps=10) == LLAMA2C_IDS


def test_gguf_checkpoint(cache_dir, tmp_path):
    """The same weights as a GGUF file (llama.cpp's format, written by
    gguf_write.py), Q8_0 as well: read by tra.Llama like any checkpoint."""
    import subprocess
    inputs = os.path.join(os.path.dirname(__file__), "..", "Frontend", "Inputs")
    subprocess.run([sys.executable, os.path.join(inputs, "gguf_write.py"), MODEL,
                    os.path.join(os.path.dirname(MODEL), "llama2-tokenizer.bin"),
                    str(tmp_path)], check=True)
    f32 = tra.Llama(str(tmp_path / "f32.gguf"), cache_dir=cache_dir, max_seq_len=64)
    assert f32.generate([1], steps=10) == LLAMA2C_IDS
    q8 = tra.Llama(str(tmp_path / "q8_0.gguf"), cache_dir=cache_dir, max_seq_len=64)
    assert not q8.params["shared_classifier"]
    assert len(q8.generate([1], steps=10)) == 10
    # Q8_0 kept 8-bit (the default) computes what its dequantised f32 copy
    # computes (nothing rounds the activations; F32 ffn_down here).
    eight = tra.Llama(str(tmp_path / "q8_0-f32.gguf"), cache_dir=cache_dir,
                      max_seq_len=64)
    wide = tra.Llama(str(tmp_path / "q8_0-f32.gguf"), cache_dir=cache_dir,
                     max_seq_len=64, weight_dtype="f32")
    assert eight.params["q8_0_weights"] and not eight.params["sixteen_bit_weights"]
    assert not wide.params["q8_0_weights"]
    assert q8.params["q8_0_weights"] and q8.params["sixteen_bit_weights"]
    tokens = [1, 461, 401, 378, 455]
    got, want = eight.forward(tokens, pos=0), wide.forward(tokens, pos=0)
    assert got.shape == want.shape == (5, 512)
    assert np.max(np.abs(got - want)) < 1e-4
    assert eight.generate([1], steps=10) == wide.generate([1], steps=10)


@pytest.mark.parametrize("call, message", [
    (lambda l: l.generate([1, 512], steps=4),
     "prompt token 512 is not in [0, 512)"),
    (lambda l: l.generate([], steps=4), "the prompt has no tokens"),
    (lambda l: l.generate([1], steps=65), "steps 65 must be in [1, 64]"),
    (lambda l: l.generate([1], steps=8, temperature=-1.0), "temperature"),
    (lambda l: l.forward([1], pos=64), "outside the KV cache of 64"),
    (lambda l: l.forward([1], pos=-1), "outside the KV cache of 64"),
    (lambda l: l.forward([], pos=0), "a step of 0 tokens"),
])
def test_errors_are_value_errors(llm, call, message):
    with pytest.raises(ValueError, match=None) as info:
        call(llm)
    assert message in str(info.value)


def test_bad_construction(tmp_path):
    with pytest.raises(ValueError) as info:
        tra.Llama(str(tmp_path / "missing.bin"))
    assert "missing.bin" in str(info.value)
    bad = tmp_path / "short.bin"
    bad.write_bytes(b"\0" * 10)
    with pytest.raises(ValueError) as info:
        tra.Llama(str(bad))
    assert "short.bin" in str(info.value)
    hw = os.path.join(os.path.dirname(__file__), "..", "..", "hw",
                      "dgx-8.json")
    with pytest.raises(ValueError) as info:
        tra.Llama(MODEL, hw=hw)
    assert "8 devices" in str(info.value) and "tra-llama run" in str(info.value)
    with pytest.raises(ValueError) as info:
        tra.Llama(MODEL, max_seq_len=513)
    assert "max_seq_len 513" in str(info.value)


GPU1 = os.path.join(os.path.dirname(__file__), "..", "..", "hw", "gpu-1.json")


def run_python(code, **env):
    """`code` in a fresh interpreter (the CUDA runtime reads its
    environment once per process); returns its stdout and stderr."""
    import subprocess
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True,
                          text=True, env=dict(os.environ, **env))
    return proc.stdout + proc.stderr


def test_gpu_without_a_gpu_names_what_is_missing():
    out = run_python(
        "import tra\n"
        "try:\n"
        f"    tra.Llama({MODEL!r}, hw={GPU1!r}, cache_dir='')\n"
        "except ValueError as e:\n"
        "    print('ValueError:', e)\n",
        TRA_CUDA_DRIVER="/nonexistent/libcuda.so.1")
    assert "ValueError: gpu-1 is a GPU; running on it needs an NVIDIA GPU" in out
    assert "emulate_on_cpu=True" in out


@pytest.mark.skipif(not os.environ.get("TRA_FAKE_CUDA"),
                    reason="no fake CUDA driver (TRA_FAKE_CUDA)")
def test_gpu_steps_on_the_fake_driver(cache_dir):
    # The fake driver loads no real kernels: the GPU step compiles and gets
    # its device buffers (weights, caches), the first launch is refused.
    driver, cublas = os.environ["TRA_FAKE_CUDA"].split(":")
    out = run_python(
        "import tra\n"
        f"llm = tra.Llama({MODEL!r}, hw={GPU1!r}, cache_dir={cache_dir!r}, max_seq_len=64)\n"
        "print('on_gpu', llm.params['on_gpu'])\n"
        "try:\n"
        "    llm.generate([1], steps=4)\n"
        "except ValueError as e:\n"
        "    print('ValueError:', e)\n",
        TRA_CUDA_DRIVER=driver, TRA_CUBLAS=cublas)
    assert "on_gpu True" in out
    assert "cannot load the program's GPU kernels" in out


def test_gpu_hardware_emulated(cache_dir):
    llm = tra.Llama(MODEL, hw=GPU1, cache_dir=cache_dir, max_seq_len=64,
                    emulate_on_cpu=True)
    assert not llm.params["on_gpu"]
    assert llm.generate([1], steps=10) == LLAMA2C_IDS


def test_weight_dtype_is_checked():
    with pytest.raises(ValueError) as info:
        tra.Llama(MODEL, weight_dtype="bf8")
    assert "weight_dtype 'bf8' is not auto, f32 or checkpoint" in str(info.value)
