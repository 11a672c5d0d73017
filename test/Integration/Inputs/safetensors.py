#!/usr/bin/env python3
"""Writes .npy files into one safetensors file, for the --weights tests.

    safetensors.py OUT.safetensors NAME=FILE.npy ...
"""
import json
import struct
import sys

import numpy as np

DTYPES = {"float32": "F32", "float16": "F16", "int64": "I64", "int32": "I32",
          "bool": "BOOL"}


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    header, blobs, offset = {}, [], 0
    for arg in sys.argv[2:]:
        name, path = arg.split("=", 1)
        array = np.ascontiguousarray(np.load(path))
        data = array.tobytes()
        header[name] = {"dtype": DTYPES[str(array.dtype)],
                        "shape": list(array.shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(sys.argv[1], "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


if __name__ == "__main__":
    main()
