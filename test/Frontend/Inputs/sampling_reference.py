#!/usr/bin/env python3
"""Checks a sampled tra-llama run against llama2.c's sampling rules.

    sampling_reference.py MODEL.bin LOGITS.npy IDS.txt TEMPERATURE TOP_P SEED

IDS.txt is tra-llama's --print-ids output (the first line of integers),
LOGITS.npy its --logits-out. Two checks, independent of tra's code:
  - the NumPy model of llama2c_reference.py, fed tra's ids, gives logits
    within 1e-3 of tra's at every step;
  - llama2.c's sampler (xorshift64* coins, softmax of logits / temperature
    in float32, nucleus with the (1 - top_p) / (n - 1) cutoff), written here
    in NumPy, picks tra's ids from tra's logits.
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import llama2c_reference  # noqa: E402

MASK = (1 << 64) - 1


class Coins:
    """llama2.c's random_f32."""

    def __init__(self, seed):
        self.state = seed

    def next(self):
        s = self.state
        s ^= s >> 12
        s ^= (s << 25) & MASK
        s ^= s >> 27
        self.state = s
        bits = ((s * 0x2545F4914F6CDD1D) & MASK) >> 32
        return np.float32((bits >> 8) / 16777216.0)


def sample(row, temperature, top_p, coins):
    f32 = np.float32
    if temperature == 0:
        return int(np.argmax(row))
    x = row.astype(f32) / f32(temperature)
    e = np.exp(x - x.max()).astype(f32)
    probs = (e / np.cumsum(e, dtype=f32)[-1]).astype(f32)
    coin = coins.next()
    n = probs.size
    if top_p <= 0 or top_p >= 1:
        cdf = np.cumsum(probs, dtype=f32)
        hits = np.nonzero(coin < cdf)[0]
        return int(hits[0]) if hits.size else n - 1
    cutoff = (f32(1) - f32(top_p)) / f32(n - 1)
    keep = np.nonzero(probs >= cutoff)[0]
    if keep.size == 0:
        return int(np.argmax(probs))
    order = keep[np.lexsort((keep, -probs[keep]))]
    cum = np.cumsum(probs[order], dtype=f32)
    over = np.nonzero(cum > f32(top_p))[0]
    last = int(over[0]) if over.size else order.size - 1
    r = coin * cum[last]
    hits = np.nonzero(r < cum[: last + 1])[0]
    return int(order[hits[0]]) if hits.size else int(order[last])


def main():
    model, logits_path, ids_path = sys.argv[1:4]
    temperature, top_p, seed = float(sys.argv[4]), float(sys.argv[5]), int(sys.argv[6])
    got = np.load(logits_path)
    with open(ids_path) as f:
        ids = [int(t) for t in f.readline().split()]
    if len(ids) != got.shape[0]:
        sys.exit(f"{len(ids)} ids but {got.shape[0]} rows of logits")
    cfg, w = llama2c_reference.load(model)
    _, ref = llama2c_reference.generate(cfg, w, len(ids), forced=ids)
    err = float(np.max(np.abs(got - ref)))
    print(f"max abs logit error {err:.3e}")
    if not err < 1e-3:
        sys.exit(f"max abs logit error {err:.3e} exceeds 1e-3")
    coins = Coins(seed)
    picked = [sample(row, temperature, top_p, coins) for row in got]
    if picked != ids:
        sys.exit(f"llama2.c's sampler picks {picked}\n"
                 f"tra-llama picked         {ids}")
    print(f"{len(ids)} sampled ids match llama2.c's sampler")
    print("OK")


if __name__ == "__main__":
    main()
