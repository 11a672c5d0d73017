#!/usr/bin/env python3
"""Compares .npy outputs of a compiled executable with the interpreter's.

    compare.py TOL GOT.npy WANT.npy [GOT.npy WANT.npy ...]

Each pair must agree in shape and dtype and within absolute tolerance TOL;
prints one line per pair and exits non-zero on the first mismatch.
"""
import sys

import numpy as np


def main():
    if len(sys.argv) < 4 or len(sys.argv) % 2:
        sys.exit(__doc__)
    tol = float(sys.argv[1])
    files = sys.argv[2:]
    for got_path, want_path in zip(files[::2], files[1::2]):
        got, want = np.load(got_path), np.load(want_path)
        if got.shape != want.shape or got.dtype != want.dtype:
            sys.exit(f"{got_path}: {got.dtype}{list(got.shape)}, "
                     f"{want_path}: {want.dtype}{list(want.shape)}")
        err = float(np.max(np.abs(got.astype(np.float64) -
                                  want.astype(np.float64)))) if got.size else 0.0
        print(f"{got_path}: max abs difference {err:.3e}")
        if not err <= tol:
            sys.exit(f"{got_path}: differs from {want_path} by {err:.3e} > {tol}")
    print("same")


if __name__ == "__main__":
    main()
