#!/usr/bin/env python3
"""Inputs and the float64 reference of products by Q8_0-quantised weights.

    q8_reference.py write DIR   writes x.npy (f32 [5, 96]), q.npy (i8 [48, 96]),
                                s.npy (f16 [48, 3]), xl.npy (f32 [3, 768]),
                                ql.npy (i8 [320, 768]), sl.npy (f16 [320, 24])
    q8_reference.py check DIR y=Y.npy y1=Y1.npy yl=YL.npy yl1=YL1.npy
                                compares each output with the reference

Weights follow llama.cpp's Q8_0: w[e, 32 b + j] = q[e, 32 b + j] * s[e, b],
int8 values in [-128, 127] (-128 included) and f16 scales (negative, tiny
and subnormal ones included). y = x w^T, y1 = x[0:1] w^T, likewise for the
larger `l` set,
whose one-row product takes row 2. The tolerance is relative to sum |x w| per element
(f32 accumulation of exact products), 1e-5 of it: a wrong scale, block or
sign is off by far more.
"""
import os
import sys

import numpy as np


def weights(r, rows, cols):
    q = r.integers(-128, 128, size=(rows, cols)).astype(np.int8)
    q[0, 0] = -128
    s = (r.standard_normal((rows, cols // 32)) * 0.02).astype(np.float16)
    s[0, 0] = np.float16(-0.05)
    s[1 % rows, 0] = np.float16(6e-8)  # subnormal
    return q, s


def dequantise(q, s):
    return q.astype(np.float64) * np.repeat(s.astype(np.float64), 32, axis=1)


def write(d):
    r = np.random.default_rng(7)
    np.save(os.path.join(d, "x.npy"), r.standard_normal((5, 96)).astype(np.float32))
    q, s = weights(r, 48, 96)
    np.save(os.path.join(d, "q.npy"), q)
    np.save(os.path.join(d, "s.npy"), s)
    np.save(os.path.join(d, "xl.npy"), r.standard_normal((3, 768)).astype(np.float32))
    q, s = weights(r, 320, 768)
    np.save(os.path.join(d, "ql.npy"), q)
    np.save(os.path.join(d, "sl.npy"), s)


def check(d, outputs):
    def load(n):
        return np.load(os.path.join(d, n))
    ref = {}
    for tag, x, q, s, row in (("", "x", "q", "s", 0), ("l", "xl", "ql", "sl", 2)):
        xv = load(x + ".npy").astype(np.float64)
        w = dequantise(load(q + ".npy"), load(s + ".npy"))
        ref["y" + tag] = (xv @ w.T, np.abs(xv) @ np.abs(w).T)
        one = xv[row:row + 1]
        ref["y" + tag + "1"] = (one @ w.T, np.abs(one) @ np.abs(w).T)
    for item in outputs:
        name, path = item.split("=", 1)
        got = np.load(path)
        want, scale = ref[name]
        if got.shape != want.shape or got.dtype != np.float32:
            sys.exit(f"{path}: {got.dtype}{list(got.shape)}, expected "
                     f"float32{list(want.shape)}")
        err = np.abs(got.astype(np.float64) - want)
        worst = float(np.max(err / (scale + 1e-30)))
        print(f"{name}: max error {float(np.max(err)):.3e}, "
              f"{worst:.2e} of sum |x w|")
        if not worst <= 1e-5:
            sys.exit(f"{path}: differs from the float64 reference")
    print("match")


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "write":
        write(sys.argv[2])
    elif len(sys.argv) >= 4 and sys.argv[1] == "check":
        check(sys.argv[2], sys.argv[3:])
    else:
        sys.exit(__doc__)
