#!/usr/bin/env python3
"""Inputs and checks for test/Integration/exp.test.

    exp.py gen DIR     writes DIR/x.npy: exp's whole f32 domain, random
                       values and special values
    exp.py check DIR   compares DIR/y.npy with NumPy's exp in float64;
                       prints "exp: OK", or "exp: FAIL" and exits 1
"""
import os
import sys

import numpy as np

SPECIAL = [np.inf, -np.inf, np.nan, 0.0, -0.0, 88.72, 88.73, 100.0, -87.3,
           -100.0, -150.0, 1e-30, -1e-30, 1.0, -1.0, 0.5]


def gen(d):
    rng = np.random.default_rng(5)
    n = 65536
    x = np.concatenate([
        np.linspace(-104, 89, n - 4096, dtype=np.float32),
        rng.standard_normal(4096 - len(SPECIAL)).astype(np.float32) * 10,
        np.array(SPECIAL, dtype=np.float32)])
    np.save(os.path.join(d, "x.npy"), x.astype(np.float32))


def check(d):
    x = np.load(os.path.join(d, "x.npy"))
    y = np.load(os.path.join(d, "y.npy"))
    with np.errstate(over="ignore"):
        want = np.exp(x.astype(np.float64))
        want32 = want.astype(np.float32)
    tiny = np.finfo(np.float32).tiny
    normal = np.isfinite(want32) & (want32 >= tiny)
    ulps = (np.abs(y[normal] - want[normal]) /
            np.spacing(want32[normal]).astype(np.float64))
    # Results below the smallest normal f32 may be flushed to zero.
    small = (want32 < tiny) & ~np.isnan(x)
    small_ok = bool(np.all((y[small] >= 0) & (y[small] < tiny)))
    rest = ~normal & ~small
    special_ok = bool(np.all((y[rest] == want32[rest]) |
                             (np.isnan(y[rest]) & np.isnan(want32[rest]))))
    print(f"exp: max error {ulps.max():.1f} ulp, tiny results "
          f"{'ok' if small_ok else 'WRONG'}, inf/nan "
          f"{'ok' if special_ok else 'WRONG'}")
    ok = ulps.max() <= 8 and small_ok and special_ok
    print("exp: OK" if ok else "exp: FAIL")
    if not ok:
        sys.exit(1)


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("gen", "check"):
        sys.exit(__doc__)
    {"gen": gen, "check": check}[sys.argv[1]](sys.argv[2])
