"""The LLaMA training loss (tra.llama_training_model) and its gradient
program (tra-autodiff) on the reference interpreter in f32, against an
independent PyTorch implementation differentiated by autograd in float64:
stories260K's shape (dim 64, hidden 172, 8 heads, 4 KV heads: grouped-query
attention, vocab 512, shared classifier), random weights, a batch of two
sequences. Loss and every weight gradient within a relative error of 1e-4
(max absolute difference over the largest reference magnitude).

Run by llama-gradients.test (pytest).
"""
import numpy as np
import pytest
import torch

import tra

PARAMS = dict(dim=64, hidden_dim=172, n_layers=5, n_heads=8, n_kv_heads=4,
              vocab_size=512, max_seq_len=32, shared_classifier=True)
BATCH, SEQ = 2, 12


def rope_tables(p):
    hd = p["dim"] // p["n_heads"]
    freqs = 1.0 / (10000.0 ** (np.arange(0, hd, 2, dtype=np.float64) / hd))
    angles = np.outer(np.arange(p["max_seq_len"]), freqs)
    return (np.cos(angles).astype(np.float32),
            np.sin(angles).astype(np.float32))


def torch_loss(w, tokens, targets, cos, sin, p):
    """Meta's LLaMA (adjacent-pair RoPE, GQA, SwiGLU), mean cross-entropy."""
    d, nh, nkv = p["dim"], p["n_heads"], p["n_kv_heads"]
    hd = d // nh
    b, s = tokens.shape

    def rms(x, g):
        return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + 1e-5) * g

    def rope(x):  # x [b, s, heads, hd]
        xr, xi = x[..., 0::2], x[..., 1::2]
        c, sn = cos[:s, None, :], sin[:s, None, :]
        return torch.stack([xr * c - xi * sn, xr * sn + xi * c], -1).flatten(-2)

    x = w["tok_embeddings.weight"][tokens]
    mask = torch.full((s, s), float("-inf"), dtype=x.dtype).triu(1)
    for layer in range(p["n_layers"]):
        pre = "layers.%d." % layer
        h = rms(x, w[pre + "attention_norm.weight"])
        q = (h @ w[pre + "attention.wq.weight"].T).view(b, s, nh, hd)
        k = (h @ w[pre + "attention.wk.weight"].T).view(b, s, nkv, hd)
        v = (h @ w[pre + "attention.wv.weight"].T).view(b, s, nkv, hd)
        q, k = rope(q), rope(k)
        k = k.repeat_interleave(nh // nkv, dim=2)
        v = v.repeat_interleave(nh // nkv, dim=2)
        scores = torch.einsum("bshd,bthd->bhst", q, k) / np.sqrt(hd) + mask
        att = torch.einsum("bhst,bthd->bshd", torch.softmax(scores, -1), v)
        x = x + att.reshape(b, s, d) @ w[pre + "attention.wo.weight"].T
        h = rms(x, w[pre + "ffn_norm.weight"])
        gate = torch.nn.functional.silu(h @ w[pre + "feed_forward.w1.weight"].T)
        up = h @ w[pre + "feed_forward.w3.weight"].T
        x = x + (gate * up) @ w[pre + "feed_forward.w2.weight"].T
    logits = rms(x, w["norm.weight"]) @ w["tok_embeddings.weight"].T
    return torch.nn.functional.cross_entropy(
        logits.reshape(b * s, -1), targets.reshape(-1))


def rel_err(got, want):
    scale = max(float(np.max(np.abs(want))), 1e-30)
    return float(np.max(np.abs(np.asarray(got, np.float64) - want))) / scale


def test_llama_loss_and_every_weight_gradient():
    rng = np.random.default_rng(3)
    model = tra.llama_training_model(PARAMS, batch=BATCH, seq_len=SEQ)
    sig = model.signature("loss")
    weights = {}
    for arg in sig["arguments"][4:]:
        shape = tuple(arg["shape"])
        if arg["name"].endswith("norm.weight"):
            weights[arg["name"]] = 1.0 + 0.1 * rng.standard_normal(shape)
        else:
            weights[arg["name"]] = 0.1 * rng.standard_normal(shape)
        weights[arg["name"]] = weights[arg["name"]].astype(np.float32)
    tokens = rng.integers(0, PARAMS["vocab_size"], size=(BATCH, SEQ + 1))
    cos, sin = rope_tables(PARAMS)
    inputs = dict(weights, tokens=tokens[:, :-1], targets=tokens[:, 1:],
                  freqs_cos=cos, freqs_sin=sin)

    assert model.gradient("loss") == "loss_grad"
    out = model.interpret("loss_grad", inputs)

    w64 = {k: torch.tensor(v, dtype=torch.float64, requires_grad=True)
           for k, v in weights.items()}
    loss = torch_loss(w64, torch.tensor(tokens[:, :-1]),
                      torch.tensor(tokens[:, 1:]),
                      torch.tensor(cos, dtype=torch.float64),
                      torch.tensor(sin, dtype=torch.float64), PARAMS)
    loss.backward()
    assert abs(float(out["loss"]) - loss.item()) / abs(loss.item()) <= 1e-4
    assert len(w64) == 1 + 9 * PARAMS["n_layers"] + 1
    worst = max((rel_err(out["grad_" + k], t.grad.numpy()), k)
                for k, t in w64.items())
    assert worst[0] <= 1e-4, "gradient of %s: relative error %g" % worst[::-1]
    # The gradients are not trivially zero.
    assert np.max(np.abs(out["grad_layers.0.attention.wq.weight"])) > 1e-4
