"""Hardware files, inputs and the float64 NumPy reference of
test/Optimizer/tiers.mlir.

    tiers_check.py hardware OUT.json DEVICES BYTES [host=B] [disk=B|disk]
        cpu-1node.json with DEVICES devices of BYTES each on one node and
        the memory tiers given (host memory of B bytes at 1 GB/s; a disk at
        0.5 GB/s, of B bytes or without a limit)
    tiers_check.py inputs DIR      DIR/x.npy, DIR/w0.npy .. DIR/w3.npy
    tiers_check.py check DIR       DIR/y.npy against the reference (1e-5)
"""
import json
import os
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))


def hardware(out, devices, memory, tiers):
    with open(os.path.join(ROOT, "hw", "cpu-1node.json")) as f:
        hw = json.load(f)
    hw["name"] = "tiers"
    hw.pop("description", None)
    node = hw["nodes"][0]
    node["devices"][0]["memory_bytes"] = memory
    node["devices"][0]["count"] = devices
    if devices > 1:
        node["links"] = [{"kind": "shared-memory", "bandwidth": 20e9,
                          "latency": 1e-6}]
    for tier in tiers:
        name, _, size = tier.partition("=")
        if name == "host":
            node["host_memory"] = {"bytes": int(size), "bandwidth": 1e9,
                                   "latency": 1e-6}
        elif name == "disk":
            node["disk"] = {"bandwidth": 5e8, "latency": 1e-4}
            if size:
                node["disk"]["bytes"] = int(size)
        else:
            sys.exit(f"tiers_check.py: unknown tier {tier!r}")
    with open(out, "w") as f:
        json.dump(hw, f)


def reference(x, ws):
    h = x
    for i, w in enumerate(ws):
        h = h @ w
        if i + 1 < len(ws):
            h = np.maximum(h, 0.0)
    return h


def main():
    cmd = sys.argv[1]
    if cmd == "hardware":
        hardware(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]),
                 sys.argv[5:])
        return 0
    d = sys.argv[2]
    rng = np.random.default_rng(11)
    names = [f"w{i}" for i in range(4)]
    if cmd == "inputs":
        np.save(os.path.join(d, "x.npy"),
                rng.standard_normal((64, 256)).astype(np.float32))
        for name in names:
            np.save(os.path.join(d, name + ".npy"),
                    (rng.standard_normal((256, 256)) / 16).astype(np.float32))
        return 0
    x = np.load(os.path.join(d, "x.npy")).astype(np.float64)
    ws = [np.load(os.path.join(d, n + ".npy")).astype(np.float64)
          for n in names]
    want = reference(x, ws)
    got = np.load(os.path.join(d, "y.npy")).astype(np.float64)
    err = np.abs(got - want).max() / max(np.abs(want).max(), 1e-30)
    print(f"y: max relative error {err:.2e}")
    if not err < 1e-5:
        print("tiers_check.py: y differs from the float64 reference")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
