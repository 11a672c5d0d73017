#!/usr/bin/env python3
"""Reassembles a result written with --output-per-rank.

    assemble_tiles.py MANIFEST.tiles.json GATHERED.npy

Reads the manifest, loads every tile file (relative to the manifest), puts
it at its offsets, and compares the whole with GATHERED.npy (the same
result gathered to rank 0) bit for bit. Prints "NAME: OK (N tiles)" or
"NAME: FAIL (...)": a tile whose file, dtype or shape disagrees with the
manifest, an element covered by no tile or by two, or any difference.
Exits 1 on FAIL.
"""
import json
import os
import sys

import numpy as np


def main():
    manifest_path, gathered_path = sys.argv[1], sys.argv[2]
    with open(manifest_path) as f:
        manifest = json.load(f)
    name = manifest["name"]
    shape = tuple(manifest["shape"])
    dtype = np.dtype(manifest["dtype"])
    whole = np.zeros(shape, dtype)
    covered = np.zeros(shape, np.int64)
    base = os.path.dirname(manifest_path)
    for tile in manifest["tiles"]:
        data = np.load(os.path.join(base, tile["file"]))
        if data.shape != tuple(tile["shape"]) or data.dtype != dtype:
            print(f"{name}: FAIL {tile['file']} holds {data.dtype}{list(data.shape)}, "
                  f"the manifest says {dtype}{tile['shape']}")
            sys.exit(1)
        region = tuple(slice(o, o + n) for o, n in zip(tile["offsets"], tile["shape"]))
        whole[region] = data
        covered[region] += 1
    if (covered != 1).any():
        print(f"{name}: FAIL elements covered {covered.min()} to {covered.max()} times")
        sys.exit(1)
    gathered = np.load(gathered_path)
    if gathered.dtype != dtype or gathered.shape != shape:
        print(f"{name}: FAIL gathered {gathered.dtype}{list(gathered.shape)}")
        sys.exit(1)
    same = np.array_equal(whole.view(np.uint8), gathered.view(np.uint8))
    print(f"{name}: {'OK' if same else 'FAIL differs from the gathered result'} "
          f"({len(manifest['tiles'])} tiles)")
    if not same:
        sys.exit(1)


if __name__ == "__main__":
    main()
