"""Inputs and the float64 NumPy reference of test/Optimizer/recompute.mlir.

    recompute_check.py hardware OUT.json BYTES  cpu-1node.json with BYTES
                                                 of memory on its device
    recompute_check.py inputs DIR               DIR/x.npy, DIR/w.npy
    recompute_check.py check DIR                DIR/{dw2,dw1,d1}.npy against
                                                 the reference (1e-5)
"""
import json
import os
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))


def reference(x, w):
    relu = lambda v: np.maximum(v, 0.0)
    h1 = x @ w
    a1 = relu(h1)
    y1 = a1 @ w.T
    h2 = y1 @ w
    a2 = relu(h2)
    z = a2 @ w.T
    for _ in range(16):
        z = np.tanh(z)
    dw2 = z.T @ a2
    d2 = z * h2
    dw1 = d2.T @ a1
    d1 = d2 * h1
    return {"dw2": dw2, "dw1": dw1, "d1": d1}


def main():
    cmd = sys.argv[1]
    if cmd == "hardware":
        with open(os.path.join(ROOT, "hw", "cpu-1node.json")) as f:
            hw = json.load(f)
        hw["name"] = "tight"
        hw["nodes"][0]["devices"][0]["memory_bytes"] = int(sys.argv[3])
        with open(sys.argv[2], "w") as f:
            json.dump(hw, f)
        return 0
    d = sys.argv[2]
    rng = np.random.default_rng(5)
    if cmd == "inputs":
        np.save(os.path.join(d, "x.npy"),
                rng.standard_normal((256, 256)).astype(np.float32) * 0.1)
        np.save(os.path.join(d, "w.npy"),
                rng.standard_normal((256, 256)).astype(np.float32) * 0.1)
        return 0
    x = np.load(os.path.join(d, "x.npy")).astype(np.float64)
    w = np.load(os.path.join(d, "w.npy")).astype(np.float64)
    bad = 0
    for name, want in reference(x, w).items():
        got = np.load(os.path.join(d, name + ".npy")).astype(np.float64)
        err = np.abs(got - want).max() / max(np.abs(want).max(), 1e-30)
        print(f"{name}: max relative error {err:.2e}")
        if not err <= 1e-5:
            bad += 1
    if bad:
        print(f"FAILED: {bad} outputs differ from the float64 reference")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
