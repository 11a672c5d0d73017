#!/usr/bin/env python3
"""float64 references of Inputs/microkernel.mlir's products.

    microkernel_reference.py DIR

Reads DIR/{a,b,w,x,v}.npy and writes DIR/want_c.npy (a @ b),
DIR/want_d.npy (a @ w.T) and DIR/want_e.npy (v @ x), computed in float64
and stored as float32.
"""
import os
import sys

import numpy as np


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    d = sys.argv[1]
    a, b, w, x, v = (np.load(os.path.join(d, n + ".npy")).astype(np.float64)
                     for n in ("a", "b", "w", "x", "v"))
    np.save(os.path.join(d, "want_c.npy"), (a @ b).astype(np.float32))
    np.save(os.path.join(d, "want_d.npy"), (a @ w.T).astype(np.float32))
    np.save(os.path.join(d, "want_e.npy"), (v @ x).astype(np.float32))


if __name__ == "__main__":
    main()
