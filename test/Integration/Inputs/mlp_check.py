#!/usr/bin/env python3
"""Random inputs for Inputs/mlp.mlir and a float64 NumPy check of outputs.

    mlp_check.py gen DIR        writes DIR/{x,w0,b0,...}.npy and prints
                                their --input flags
    mlp_check.py check DIR NAME...
        DIR/NAME.npy against relu(h W^T + b) per layer in float64.

Prints "NAME: OK (...)" or "NAME: FAIL (...)"; the error allowed is 1e-5
times the largest magnitude of the reference (at least 1). Exits 1 when
any NAME FAILs.
"""
import os
import sys

import numpy as np

BATCH, WIDTH, LAYERS = 64, 256, 3


def main():
    mode, d = sys.argv[1], sys.argv[2]
    if mode == "gen":
        rng = np.random.default_rng(7)
        np.save(os.path.join(d, "x.npy"),
                rng.standard_normal((BATCH, WIDTH), dtype=np.float32))
        for i in range(LAYERS):
            np.save(os.path.join(d, f"w{i}.npy"), rng.standard_normal(
                (WIDTH, WIDTH), dtype=np.float32) / np.float32(np.sqrt(WIDTH)))
            np.save(os.path.join(d, f"b{i}.npy"),
                    rng.standard_normal(WIDTH, dtype=np.float32) * np.float32(0.1))
        names = ["x"] + [f"{k}{i}" for i in range(LAYERS) for k in "wb"]
        print(" ".join(f"--input {n}={os.path.join(d, n)}.npy" for n in names))
        return
    h = np.load(os.path.join(d, "x.npy")).astype(np.float64)
    for i in range(LAYERS):
        w = np.load(os.path.join(d, f"w{i}.npy")).astype(np.float64)
        b = np.load(os.path.join(d, f"b{i}.npy")).astype(np.float64)
        h = np.maximum(h @ w.T + b, 0.0)
    scale = max(1.0, float(np.abs(h).max()))
    failed = []
    for name in sys.argv[3:]:
        got = np.load(os.path.join(d, name + ".npy"))
        if got.shape != h.shape:
            print(f"{name}: FAIL shape {got.shape} != {h.shape}")
            failed.append(name)
            continue
        err = float(np.abs(got.astype(np.float64) - h).max())
        ok = err <= 1e-5 * scale
        print(f"{name}: {'OK' if ok else 'FAIL'} "
              f"(max abs error {err:.3g}, largest value {scale:.3g})")
        if not ok:
            failed.append(name)
    if failed:
        sys.stdout.flush()
        sys.exit(f"mlp_check.py: FAIL: {', '.join(failed)}")


if __name__ == "__main__":
    main()
