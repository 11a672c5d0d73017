#!/usr/bin/env python3
"""Greedy-decoding reference for a Meta-format checkpoint whose unsplit
weights were saved as .npy (by make_meta_checkpoint.py's full_dir), in
float64 NumPy following Meta's model.py; compares with tra-llama's logits.

    meta_reference.py PARAMS.json FULL_DIR STEPS LOGITS.npy
"""
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from llama2c_reference import generate  # noqa: E402


def main():
    params_path, full, steps, got_path = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    p = json.load(open(params_path))
    load = lambda n: np.load(os.path.join(full, n + ".npy")).astype(np.float64)
    emb = load("tok_embeddings.weight")
    L, dim, heads = p["n_layers"], p["dim"], p["n_heads"]
    kv = p.get("n_kv_heads") or heads
    stack = lambda suffix: np.stack([load(f"layers.{l}.{suffix}") for l in range(L)])
    w = {"emb": emb, "rms_att": stack("attention_norm.weight"),
         "wq": stack("attention.wq.weight"), "wk": stack("attention.wk.weight"),
         "wv": stack("attention.wv.weight"), "wo": stack("attention.wo.weight"),
         "rms_ffn": stack("ffn_norm.weight"), "w1": stack("feed_forward.w1.weight"),
         "w2": stack("feed_forward.w2.weight"), "w3": stack("feed_forward.w3.weight"),
         "rms_final": load("norm.weight"),
         "cls": load("output.weight") if os.path.exists(os.path.join(full, "output.weight.npy")) else emb}
    cfg = dict(dim=dim, hidden=w["w1"].shape[1], layers=L, heads=heads, kv_heads=kv,
               vocab=emb.shape[0], seq=steps, hd=dim // heads)
    ids, logits = generate(cfg, w, steps)
    got = np.load(got_path)
    err = float(np.max(np.abs(got - logits)))
    print("reference ids:", " ".join(map(str, ids)))
    print(f"max abs logit error {err:.3e}")
    if [int(i) for i in np.argmax(got, axis=1)] != ids:
        sys.exit("token ids differ")
    if not err < 1e-3:
        sys.exit("logit error too large")
    print("OK")


if __name__ == "__main__":
    main()
