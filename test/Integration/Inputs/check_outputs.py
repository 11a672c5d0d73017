#!/usr/bin/env python3
"""Compares outputs of a distributed run with a reference.

    check_outputs.py matmul DIR NAME...
        DIR/x.npy @ DIR/w.npy (float64) against DIR/NAME.npy for each NAME.
    check_outputs.py same TOL REF_DIR GOT_DIR
        every REF_DIR/*.npy against GOT_DIR/<same name>.

Prints "NAME: OK (...)" or "NAME: FAIL (...)" per comparison. The error
allowed is TOL (1e-5 for matmul) times the largest magnitude of the
reference (at least 1): f32 sums reassociated over devices differ from a
float64 reference by a few ulps of the result's scale.
"""
import glob
import os
import sys

import numpy as np


def compare(name, want, got, tol):
    if got.shape != want.shape:
        print(f"{name}: FAIL shape {got.shape} != {want.shape}")
        return
    if not got.size:
        print(f"{name}: OK (empty)")
        return
    err = float(np.abs(got.astype(np.float64) - want.astype(np.float64)).max())
    scale = max(1.0, float(np.abs(want).max()))
    ok = err <= tol * scale
    print(f"{name}: {'OK' if ok else 'FAIL'} (max abs error {err:.3g}, "
          f"largest value {scale:.3g})")


def main():
    mode = sys.argv[1]
    if mode == "matmul":
        d = sys.argv[2]
        want = np.load(os.path.join(d, "x.npy")).astype(np.float64) @ \
            np.load(os.path.join(d, "w.npy")).astype(np.float64)
        for name in sys.argv[3:]:
            compare(name, want, np.load(os.path.join(d, name + ".npy")), 1e-5)
    elif mode == "same":
        tol, ref, got = float(sys.argv[2]), sys.argv[3], sys.argv[4]
        files = sorted(glob.glob(os.path.join(ref, "*.npy")))
        if not files:
            sys.exit(f"no .npy files in {ref}")
        for path in files:
            name = os.path.basename(path)
            compare(name, np.load(path), np.load(os.path.join(got, name)), tol)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
