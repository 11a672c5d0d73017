#!/usr/bin/env python3
"""Independent NumPy reference of a llama2.c checkpoint (Meta model.py
semantics, float64), for checking tra-llama.

    llama2c_reference.py MODEL.bin STEPS LOGITS.npy

Runs greedy decoding from BOS for STEPS positions and compares token ids
and every step's logits with LOGITS.npy (written by tra-llama --logits-out);
prints the generated ids.
"""
import sys

import numpy as np


def load(path):
    raw = open(path, "rb").read()
    hdr = np.frombuffer(raw[:28], dtype=np.int32)
    dim, hidden, layers, heads, kv_heads, vocab, seq = map(int, hdr)
    shared = vocab > 0
    vocab = abs(vocab)
    hd = dim // heads
    f = np.frombuffer(raw[28:], dtype=np.float32).astype(np.float64)
    off = 0

    def take(*shape):
        nonlocal off
        n = int(np.prod(shape))
        a = f[off:off + n].reshape(shape)
        off += n
        return a

    w = {"emb": take(vocab, dim), "rms_att": take(layers, dim),
         "wq": take(layers, dim, dim), "wk": take(layers, kv_heads * hd, dim),
         "wv": take(layers, kv_heads * hd, dim), "wo": take(layers, dim, dim),
         "rms_ffn": take(layers, dim), "w1": take(layers, hidden, dim),
         "w2": take(layers, dim, hidden), "w3": take(layers, hidden, dim),
         "rms_final": take(dim)}
    take(seq, hd // 2)
    take(seq, hd // 2)
    w["cls"] = w["emb"] if shared else take(vocab, dim)
    assert off == f.size, "file size does not match the header"
    cfg = dict(dim=dim, hidden=hidden, layers=layers, heads=heads,
               kv_heads=kv_heads, vocab=vocab, seq=seq, hd=hd)
    return cfg, w


def rmsnorm(x, g):
    return x / np.sqrt(np.mean(x * x) + 1e-5) * g


def rope(x, pos, hd):
    """Meta's rotary embedding on x [heads, hd] at position pos."""
    i = np.arange(0, hd, 2)[: hd // 2]
    freqs = 1.0 / (10000.0 ** (i / hd))
    ang = pos * freqs
    xc = x[:, 0::2] + 1j * x[:, 1::2]
    r = xc * (np.cos(ang) + 1j * np.sin(ang))
    out = np.empty_like(x)
    out[:, 0::2] = r.real
    out[:, 1::2] = r.imag
    return out


def generate(cfg, w, steps, forced=None, act=lambda v: v):
    """Decodes `steps` positions from BOS, greedily or, with `forced`, feeding
    the given ids instead; returns the ids and every step's logits. `act` is
    applied to the activations each weight matrix multiplies (the rounding
    of a model whose 16-bit weights multiply 16-bit activations)."""
    d, hd, nh, nkv = cfg["dim"], cfg["hd"], cfg["heads"], cfg["kv_heads"]
    rep = nh // nkv
    kc = np.zeros((cfg["layers"], cfg["seq"], nkv, hd))
    vc = np.zeros_like(kc)
    tok, ids, all_logits = 1, [], []
    for pos in range(steps):
        x = w["emb"][tok].copy()
        for l in range(cfg["layers"]):
            xn = act(rmsnorm(x, w["rms_att"][l]))
            q = (w["wq"][l] @ xn).reshape(nh, hd)
            k = (w["wk"][l] @ xn).reshape(nkv, hd)
            v = (w["wv"][l] @ xn).reshape(nkv, hd)
            q, k = rope(q, pos, hd), rope(k, pos, hd)
            kc[l, pos], vc[l, pos] = k, v
            out = np.empty((nh, hd))
            for h in range(nh):
                keys = kc[l, : pos + 1, h // rep]
                s = keys @ q[h] / np.sqrt(hd)
                p = np.exp(s - s.max())
                p /= p.sum()
                out[h] = p @ vc[l, : pos + 1, h // rep]
            x = x + w["wo"][l] @ act(out.reshape(d))
            xn = act(rmsnorm(x, w["rms_ffn"][l]))
            a, b = w["w1"][l] @ xn, w["w3"][l] @ xn
            x = x + w["w2"][l] @ act(a / (1 + np.exp(-a)) * b)
        logits = w["cls"] @ act(rmsnorm(x, w["rms_final"]))
        all_logits.append(logits)
        tok = int(np.argmax(logits)) if forced is None else int(forced[pos])
        ids.append(tok)
    return ids, np.array(all_logits)


def main():
    path, steps, got_path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    cfg, w = load(path)
    ids, logits = generate(cfg, w, steps)
    got = np.load(got_path)
    if got.shape != logits.shape:
        sys.exit(f"logits shape {got.shape}, expected {logits.shape}")
    err = float(np.max(np.abs(got - logits)))
    got_ids = [int(i) for i in np.argmax(got, axis=1)]
    print("reference ids:", " ".join(map(str, ids)))
    print(f"max abs logit error {err:.3e}")
    if got_ids != ids:
        sys.exit(f"token ids differ: got {got_ids}")
    if not err < 1e-3:
        sys.exit(f"max abs logit error {err:.3e} exceeds 1e-3")
    print("OK")


if __name__ == "__main__":
    main()
