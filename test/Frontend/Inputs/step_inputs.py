#!/usr/bin/env python3
"""Inputs of one decoding step of stories260K's @forward (tra-llama emit).

    step_inputs.py DIR

Writes the token (BOS), the position (0), the rotary tables (Meta's
precompute_freqs_cis, theta 10000) and random KV caches to DIR and prints
the --input flags.
"""
import os
import sys

import numpy as np

DIM, HEADS, KV_HEADS, LAYERS, SEQ = 64, 8, 4, 5, 512


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    hd = DIM // HEADS
    inv = 10000.0 ** (-np.arange(0, hd, 2) / hd)
    angles = np.outer(np.arange(SEQ), inv)
    arrays = {"tokens": np.array([1], np.int64), "pos": np.array(0, np.int64),
              "freqs_cos": np.cos(angles).astype(np.float32),
              "freqs_sin": np.sin(angles).astype(np.float32)}
    rng = np.random.default_rng(0)
    for layer in range(LAYERS):
        for kind in "kv":
            arrays[f"layers.{layer}.{kind}_cache"] = (0.1 * rng.standard_normal(
                (SEQ, KV_HEADS, hd))).astype(np.float32)
    for name, value in arrays.items():
        path = os.path.join(out, name + ".npy")
        np.save(path, value)
        print(f"--input {name}={path}")


if __name__ == "__main__":
    main()
