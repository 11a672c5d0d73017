#!/usr/bin/env python3
"""Greedy-decoding reference for a Meta-format checkpoint whose unsplit
weights were saved as .npy (by make_meta_checkpoint.py's full_dir), in
float64 NumPy following Meta's model.py; compares with tra-llama's logits.

    meta_reference.py PARAMS.json FULL_DIR STEPS LOGITS.npy
        [--round-activations float16|bfloat16] [--prompt-ids 1,5,9]

With --prompt-ids the prompt's tokens are fed first (tra-llama's
--prompt-ids, BOS first), then the ids tra-llama generated, which must be
the reference's greedy choices.

With --round-activations the reference is a model whose 16-bit weights stay
16-bit (tra-llama --weight-dtype=checkpoint): every activation a weight
matrix multiplies is rounded to that type (to nearest, ties to even), the
rest is float64. It also prints how far the logits are from the unrounded
model, which the rounding must explain.
"""
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from llama2c_reference import generate  # noqa: E402


def round_bf16(v):
    """float64 -> the nearest bfloat16 (ties to even), as float64."""
    bits = np.asarray(v, dtype=np.float64).astype(np.float32).view(np.uint32)
    # Two roundings (f64 -> f32 -> bf16) only differ from one at exact ties
    # of the f32 value, which the activations here never are.
    bits = (bits + np.uint32(0x7FFF) + ((bits >> np.uint32(16)) & np.uint32(1))) & np.uint32(0xFFFF0000)
    return bits.view(np.float32).astype(np.float64)


def round_f16(v):
    return np.asarray(v, dtype=np.float64).astype(np.float16).astype(np.float64)


def main():
    args = sys.argv[1:]
    act = None
    if "--round-activations" in args:
        i = args.index("--round-activations")
        act = {"bfloat16": round_bf16, "float16": round_f16}[args[i + 1]]
        del args[i:i + 2]
    prompt = [1]
    if "--prompt-ids" in args:
        i = args.index("--prompt-ids")
        prompt = [int(t) for t in args[i + 1].split(",")]
        del args[i:i + 2]
    params_path, full, steps, got_path = args[0], args[1], int(args[2]), args[3]
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
    got = np.load(got_path)
    got_ids = [int(i) for i in np.argmax(got, axis=1)]
    # The token fed after position p: the prompt's, then tra-llama's choice.
    first = len(prompt) - 1
    forced = prompt[1:] + got_ids[first:]
    ids, logits = generate(cfg, w, steps, forced=forced[:steps],
                           act=act if act is not None else (lambda v: v))
    ref_ids = [int(i) for i in np.argmax(logits, axis=1)]
    print("reference ids:", " ".join(map(str, ref_ids)))
    err = float(np.max(np.abs(got - logits)))
    tolerance = 1e-3
    if act is not None:
        # The unrounded model on the same tokens: how much the rounding
        # changes the logits. tra must follow the rounded model much more
        # closely (a run that did not round, or rounded other values, would
        # not). It cannot match it to f32 precision: where tra's f32 value
        # and the reference's float64 value of an activation round to
        # neighbouring 16-bit numbers, the step's logits and the KV caches
        # differ by that 16-bit unit's effect. The tolerance is ten times
        # closer than the unrounded model, or twice the largest effect of
        # such neighbouring roundings, but always twice as close.
        _, exact = generate(cfg, w, steps, forced=forced[:steps])
        unrounded = float(np.max(np.abs(got - exact)))
        print(f"max abs logit difference of the unrounded model {unrounded:.3e}")
        # How much such neighbouring roundings move the logits: the rounded
        # model again, its activations first moved by about the error of
        # f32 arithmetic (4e-7 relative), four times.
        rng = np.random.default_rng(0)
        noise = 0.0
        for _ in range(4):
            moved = lambda v: act(np.asarray(v) * (1 + 4e-7 * rng.standard_normal(np.shape(v))))
            _, other = generate(cfg, w, steps, forced=forced[:steps], act=moved)
            noise = max(noise, float(np.max(np.abs(other - logits))))
        print(f"max abs logit change of the rounded model under f32-sized noise {noise:.3e}")
        tolerance = min(unrounded / 2, max(unrounded / 10, 2 * noise))
    print(f"max abs logit error {err:.3e}")
    if got_ids[first:] != ref_ids[first:]:
        sys.exit("token ids differ")
    if not err < tolerance:
        sys.exit(f"logit error too large (tolerance {tolerance:.3e})")
    print("OK")


if __name__ == "__main__":
    main()
