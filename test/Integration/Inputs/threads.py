#!/usr/bin/env python3
"""Inputs and checks for test/Integration/threads.test.

    threads.py gen DIR     writes DIR/{x,b,w,table,ids,small}.npy
    threads.py check DIR   compares DIR/t1_NAME.npy and DIR/t2_NAME.npy (the
                           executable run on 1 and 2 threads) with NumPy, and
                           with each other bit for bit; exits 1 on FAIL
"""
import os
import sys

import numpy as np

NAMES = ["relu", "softmax", "rmsnorm", "gathered", "small_exp"]


def gen(d):
    rng = np.random.default_rng(4)
    arrays = {
        "x": rng.standard_normal((256, 2048), dtype=np.float32),
        "b": rng.standard_normal(2048, dtype=np.float32),
        "w": rng.standard_normal(2048, dtype=np.float32),
        "table": rng.standard_normal((1000, 512), dtype=np.float32),
        "ids": rng.integers(0, 1000, 128, dtype=np.int64),
        "small": rng.standard_normal((8, 8), dtype=np.float32),
    }
    for name, value in arrays.items():
        np.save(os.path.join(d, name + ".npy"), value)


def reference(d):
    load = lambda n: np.load(os.path.join(d, n + ".npy"))
    x, b, w = load("x").astype(np.float64), load("b"), load("w")
    e = np.exp(x - x.max(axis=1, keepdims=True))
    ms = (x * x).mean(axis=1, keepdims=True)
    return {
        "relu": np.maximum(x + b, 0),
        "softmax": e / e.sum(axis=1, keepdims=True),
        "rmsnorm": x / np.sqrt(ms + 1e-5) * w,
        "gathered": load("table")[load("ids")],
        "small_exp": np.exp(load("small").astype(np.float64)),
    }


def check(d):
    ok = True
    for name, want in reference(d).items():
        one = np.load(os.path.join(d, f"t1_{name}.npy"))
        two = np.load(os.path.join(d, f"t2_{name}.npy"))
        if one.dtype != np.float32 or one.shape != want.shape:
            print(f"{name}: got {one.dtype}{list(one.shape)}")
            ok = False
            continue
        err = float(np.max(np.abs(one - want) / (1 + np.abs(want))))
        same = one.tobytes() == two.tobytes()
        print(f"{name}: error {err:.1e}, 1 and 2 threads "
              f"{'identical' if same else 'DIFFER'}")
        ok = ok and same and err < 1e-5
    print("threads: OK" if ok else "threads: FAIL")
    if not ok:
        sys.exit(1)


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("gen", "check"):
        sys.exit(__doc__)
    {"gen": gen, "check": check}[sys.argv[1]](sys.argv[2])
