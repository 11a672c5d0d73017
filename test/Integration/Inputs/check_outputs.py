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

Exits 0 only when every comparison is OK; otherwise it names the failed
ones on stderr and exits 1, so a test fails even if it does not check the
printed lines.
"""
import glob
import os
import sys

import numpy as np


def compare(name, want, got, tol):
    """Prints the verdict for one output; returns True when it is OK."""
    if got.shape != want.shape:
        print(f"{name}: FAIL shape {got.shape} != {want.shape}")
        return False
    if not got.size:
        print(f"{name}: OK (empty)")
        return True
    err = float(np.abs(got.astype(np.float64) - want.astype(np.float64)).max())
    scale = max(1.0, float(np.abs(want).max()))
    # A NaN anywhere makes err NaN, and NaN <= x is False: a FAIL.
    ok = err <= tol * scale
    print(f"{name}: {'OK' if ok else 'FAIL'} (max abs error {err:.3g}, "
          f"largest value {scale:.3g})")
    return ok


def load(name, path):
    """The array in PATH, or None (with a FAIL line) when it cannot be read."""
    try:
        return np.load(path)
    except (OSError, ValueError) as e:
        print(f"{name}: FAIL cannot read {path}: {e}")
        return None


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    mode = sys.argv[1]
    failed = []
    if mode == "matmul" and len(sys.argv) >= 4:
        d = sys.argv[2]
        want = np.load(os.path.join(d, "x.npy")).astype(np.float64) @ \
            np.load(os.path.join(d, "w.npy")).astype(np.float64)
        for name in sys.argv[3:]:
            got = load(name, os.path.join(d, name + ".npy"))
            if got is None or not compare(name, want, got, 1e-5):
                failed.append(name)
    elif mode == "same" and len(sys.argv) == 5:
        tol, ref, got_dir = float(sys.argv[2]), sys.argv[3], sys.argv[4]
        files = sorted(glob.glob(os.path.join(ref, "*.npy")))
        if not files:
            sys.exit(f"check_outputs.py: FAIL: no .npy files in {ref}")
        for path in files:
            name = os.path.basename(path)
            got = load(name, os.path.join(got_dir, name))
            if got is None or not compare(name, np.load(path), got, tol):
                failed.append(name)
    else:
        sys.exit(__doc__)
    sys.stdout.flush()
    if failed:
        sys.exit(f"check_outputs.py: FAIL: {', '.join(failed)} "
                 f"differ from the reference or could not be read")


if __name__ == "__main__":
    main()
