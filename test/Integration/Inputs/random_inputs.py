#!/usr/bin/env python3
"""Random inputs for every argument a compiled executable lists.

    random_inputs.py EXE DIR

Runs `EXE --list`, writes DIR/NAME.npy for every input (floats: normal with
standard deviation 0.1; integers: 0 to 3, valid as tokens and positions)
and prints the --input and --output flags (outputs to DIR/out_NAME.npy),
one per line, for both the executable and tra-interpret.
"""
import os
import subprocess
import sys

import numpy as np

DTYPES = {"f32": np.float32, "f16": np.float16, "i64": np.int64,
          "i32": np.int32, "i1": np.bool_, "bool": np.bool_}


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    exe, out = sys.argv[1:]
    listing = subprocess.run([exe, "--list"], capture_output=True, text=True,
                             check=True).stdout.splitlines()[1:]
    rng = np.random.default_rng(0)
    for line in listing:
        kind, name, type_ = line.split(None, 2)
        name = name.rstrip(":")
        dtype, shape = type_.split("[", 1)
        shape = [int(d) for d in shape.rstrip("]").split(",") if d.strip()]
        if kind == "output":
            print(f"--output {name}={os.path.join(out, 'out_' + name)}.npy")
            continue
        if dtype in ("f32", "f16"):
            value = 0.1 * rng.standard_normal(shape)
        else:
            value = rng.integers(0, 4, shape)
        path = os.path.join(out, name + ".npy")
        np.save(path, np.asarray(value, dtype=DTYPES[dtype]))
        print(f"--input {name}={path}")


if __name__ == "__main__":
    main()
