#!/usr/bin/env python3
"""Inputs and independent references for the interpreter tests.

    reference.py gen CASE DIR     write CASE's inputs as DIR/NAME.npy
    reference.py check CASE DIR   compare DIR/out_*.npy with the reference

References are computed in float64 with NumPy, and the LLaMA parts with
PyTorch following Meta's llama/model.py (complex rotary embedding,
repeat_kv for grouped-query attention, a KV cache sliced to the valid
positions). The tolerance is absolute max error 1e-4 (f32 results).
"""
import os
import sys

import numpy as np

TOL = 1e-4


def rng(case):
    """A generator seeded from the case name, stable across runs."""
    return np.random.default_rng(sum(map(ord, case)))


def f32(a):
    return np.asarray(a, dtype=np.float32)


# --- cases -----------------------------------------------------------------
# Each case: inputs(r) -> dict name -> array; reference(inp) -> dict of
# expected outputs (float64).

def matmul_inputs(r):
    return {"a": f32(r.standard_normal((16, 32))),
            "b": f32(r.standard_normal((32, 24)))}


def matmul_ref(i):
    return {"c": i["a"].astype(np.float64) @ i["b"].astype(np.float64)}


def bmm_inputs(r):
    return {"a": f32(r.standard_normal((3, 8, 16))),
            "b": f32(r.standard_normal((3, 16, 8)))}


def bmm_ref(i):
    return {"c": np.matmul(i["a"].astype(np.float64), i["b"].astype(np.float64))}


def softmax_inputs(r):
    return {"x": f32(3 * r.standard_normal((4, 6, 10)))}


def softmax_ref(i):
    x = i["x"].astype(np.float64)
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return {"y": e / e.sum(axis=-1, keepdims=True)}


def rmsnorm_inputs(r):
    return {"x": f32(r.standard_normal((6, 64))),
            "w": f32(1 + 0.1 * r.standard_normal(64))}


def rmsnorm_ref(i):
    x = i["x"].astype(np.float64)
    n = x / np.sqrt((x * x).mean(-1, keepdims=True) + 1e-5)
    return {"y": n * i["w"]}


def freqs(head_dim, length, theta=10000.0):
    """Meta's precompute_freqs_cis as (cos, sin) tables [length, head_dim/2]."""
    inv = 1.0 / (theta ** (np.arange(0, head_dim, 2)[: head_dim // 2] / head_dim))
    ang = np.outer(np.arange(length), inv)
    return np.cos(ang), np.sin(ang)


def rope_inputs(r):
    cos, sin = freqs(8, 16)
    return {"x": f32(r.standard_normal((5, 4, 8))),
            "pos": np.array(3, dtype=np.int64),
            "freqs_cos": f32(cos), "freqs_sin": f32(sin)}


def apply_rotary(x, cos, sin):
    """Meta's apply_rotary_emb on x [S, H, HD] with freqs for its S rows."""
    import torch
    xc = torch.view_as_complex(torch.from_numpy(
        x.astype(np.float64)).reshape(*x.shape[:-1], -1, 2).contiguous())
    fc = torch.complex(torch.from_numpy(cos), torch.from_numpy(sin))
    out = torch.view_as_real(xc * fc[:, None, :]).flatten(-2)
    return out.numpy()


def rope_ref(i):
    p = int(i["pos"])
    s = i["x"].shape[0]
    cos = i["freqs_cos"].astype(np.float64)[p:p + s]
    sin = i["freqs_sin"].astype(np.float64)[p:p + s]
    return {"y": apply_rotary(i["x"], cos, sin)}


# The LLaMA block of examples/llama_block.mlir: S=4, D=64, NH=8, NKV=4,
# HD=8, T=16, F=172.
S, D, NH, NKV, HD, T, F = 4, 64, 8, 4, 8, 16, 172


def block_weights(r):
    cos, sin = freqs(HD, T)
    s = 1 / np.sqrt(D)
    return {
        "attn_norm": f32(1 + 0.1 * r.standard_normal(D)),
        "wq": f32(s * r.standard_normal((D, D))),
        "wk": f32(s * r.standard_normal((NKV * HD, D))),
        "wv": f32(s * r.standard_normal((NKV * HD, D))),
        "wo": f32(s * r.standard_normal((D, D))),
        "freqs_cos": f32(cos), "freqs_sin": f32(sin),
        "ffn_norm": f32(1 + 0.1 * r.standard_normal(D)),
        "w1": f32(s * r.standard_normal((F, D))),
        "w2": f32(r.standard_normal((D, F)) / np.sqrt(F)),
        "w3": f32(s * r.standard_normal((F, D))),
    }


def attention_inputs(r):
    w = block_weights(r)
    inp = {"x": f32(r.standard_normal((S, D))),
           "pos": np.array(5, dtype=np.int64),
           # Garbage beyond the valid prefix: the causal mask must hide it.
           "k_cache": f32(r.standard_normal((T, NKV, HD))),
           "v_cache": f32(r.standard_normal((T, NKV, HD)))}
    for k in ["attn_norm", "wq", "wk", "wv", "wo", "freqs_cos", "freqs_sin"]:
        inp[k] = w[k]
    return inp


ATTENTION_INPUTS = ["x", "pos", "k_cache", "v_cache", "attn_norm", "wq", "wk",
                    "wv", "wo", "freqs_cos", "freqs_sin"]


def torch_rmsnorm(x, w):
    import torch
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5) * w


def torch_attention(i):
    """Meta's Attention.forward for one sequence, in float64."""
    import torch
    t = {k: torch.from_numpy(np.asarray(v).astype(np.float64)) for k, v in i.items()
         if k != "pos"}
    p = int(i["pos"])
    x = t["x"]
    xn = torch_rmsnorm(x, t["attn_norm"])
    xq = (xn @ t["wq"].T).view(S, NH, HD)
    xk = (xn @ t["wk"].T).view(S, NKV, HD)
    xv = (xn @ t["wv"].T).view(S, NKV, HD)
    cos = i["freqs_cos"].astype(np.float64)[p:p + S]
    sin = i["freqs_sin"].astype(np.float64)[p:p + S]
    xq = torch.from_numpy(apply_rotary(xq.numpy(), cos, sin))
    xk = torch.from_numpy(apply_rotary(xk.numpy(), cos, sin))
    kc = t["k_cache"].clone()
    vc = t["v_cache"].clone()
    kc[p:p + S] = xk
    vc[p:p + S] = xv
    keys = kc[: p + S]
    values = vc[: p + S]
    # repeat_kv: head h uses KV head h // (NH // NKV).
    rep = NH // NKV
    keys = keys[:, :, None, :].expand(p + S, NKV, rep, HD).reshape(p + S, NH, HD)
    values = values[:, :, None, :].expand(p + S, NKV, rep, HD).reshape(p + S, NH, HD)
    q = xq.transpose(0, 1)            # [NH, S, HD]
    k = keys.transpose(0, 1)          # [NH, L, HD]
    v = values.transpose(0, 1)
    scores = q @ k.transpose(1, 2) / np.sqrt(HD)
    mask = torch.full((S, S), float("-inf")).triu(1)
    mask = torch.hstack([torch.zeros((S, p)), mask]).double()
    scores = torch.softmax(scores + mask, dim=-1)
    out = (scores @ v).transpose(0, 1).reshape(S, D)
    h = x + out @ t["wo"].T
    return h, kc, vc


def attention_ref(i):
    h, kc, vc = torch_attention(i)
    return {"h": h.numpy(), "k_cache_out": kc.numpy(), "v_cache_out": vc.numpy()}


def ffn_inputs(r):
    w = block_weights(r)
    inp = {"h": f32(r.standard_normal((S, D)))}
    for k in ["ffn_norm", "w1", "w2", "w3"]:
        inp[k] = w[k]
    return inp


def torch_ffn(i):
    """Meta's FeedForward with the pre-norm and residual of a block."""
    import torch
    t = {k: torch.from_numpy(np.asarray(v).astype(np.float64)) for k, v in i.items()}
    h = t["h"]
    hn = torch_rmsnorm(h, t["ffn_norm"])
    f = (torch.nn.functional.silu(hn @ t["w1"].T) * (hn @ t["w3"].T)) @ t["w2"].T
    return h + f


def ffn_ref(i):
    return {"out": torch_ffn(i).numpy()}


def block_inputs(r):
    inp = attention_inputs(r)
    w = block_weights(r)
    for k in ["ffn_norm", "w1", "w2", "w3"]:
        inp[k] = w[k]
    return inp


def block_ref(i):
    h, kc, vc = torch_attention({k: i[k] for k in ATTENTION_INPUTS})
    out = torch_ffn({"h": h.numpy(), "ffn_norm": i["ffn_norm"], "w1": i["w1"],
                     "w2": i["w2"], "w3": i["w3"]})
    return {"out": out.numpy(), "k_cache_out": kc.numpy(), "v_cache_out": vc.numpy()}


CASES = {
    "matmul": (matmul_inputs, matmul_ref),
    "bmm": (bmm_inputs, bmm_ref),
    "softmax": (softmax_inputs, softmax_ref),
    "rmsnorm": (rmsnorm_inputs, rmsnorm_ref),
    "rope": (rope_inputs, rope_ref),
    "attention": (attention_inputs, attention_ref),
    "ffn": (ffn_inputs, ffn_ref),
    "block": (block_inputs, block_ref),
}


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in ("gen", "check") \
            or sys.argv[2] not in CASES:
        sys.exit(__doc__)
    mode, case, out = sys.argv[1:]
    make, ref = CASES[case]
    if mode == "gen":
        os.makedirs(out, exist_ok=True)
        for name, value in make(rng(case)).items():
            np.save(os.path.join(out, name + ".npy"), value)
        return
    inputs = {n: np.load(os.path.join(out, n + ".npy")) for n in make(rng(case))}
    worst = 0.0
    for name, want in ref(inputs).items():
        got = np.load(os.path.join(out, "out_" + name + ".npy"))
        if got.shape != want.shape:
            sys.exit(f"{case}: {name}: shape {got.shape}, expected {want.shape}")
        if got.dtype != np.float32:
            sys.exit(f"{case}: {name}: dtype {got.dtype}, expected float32")
        # NaN inputs (positions a program must not read) pass through to
        # the same places of the outputs; anywhere else NaN is an error.
        nan = np.isnan(np.asarray(want, dtype=np.float64))
        if not np.array_equal(np.isnan(got), nan):
            sys.exit(f"{case}: {name}: NaN at {int(np.sum(np.isnan(got)))} "
                     f"elements, the reference at {int(np.sum(nan))}")
        diff = np.abs(got.astype(np.float64) - want)
        err = float(np.max(np.where(nan, 0.0, diff))) if want.size else 0.0
        print(f"{case}: {name}: max abs error {err:.3e}")
        if not err < TOL:
            sys.exit(f"{case}: {name}: max abs error {err:.3e} exceeds {TOL}")
        worst = max(worst, err)
    print(f"{case}: OK (max abs error {worst:.3e} < {TOL})")


if __name__ == "__main__":
    main()
