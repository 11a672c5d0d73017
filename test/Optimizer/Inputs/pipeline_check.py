"""Hardware files, inputs and the float64 NumPy reference of
test/Optimizer/pipeline.mlir.

    pipeline_check.py hardware OUT.json NODES DEVICES BYTES NETWORK
        cpu-1node.json with NODES nodes of DEVICES devices of BYTES each,
        20 GB/s shared memory within a node and a network of NETWORK
        bytes/s (50 us latency) between nodes
    pipeline_check.py hetero OUT.json RATIO
        one node of two CPU devices, the first RATIO times the second's
        peak flop/s and memory bandwidth, 20 GB/s shared memory between them
    pipeline_check.py unequal OUT.json RATIO BYTES0 BYTES1 NETWORK
        two one-device nodes: the first RATIO times the second's peak flop/s
        with BYTES0 of memory, the second with BYTES1, and a network of
        NETWORK bytes/s between them
    pipeline_check.py inputs DIR [ROWS]
        DIR/x.npy (ROWS x 512, default 64), DIR/w0.npy .. DIR/w3.npy
    pipeline_check.py check DIR       DIR/y.npy against the reference (1e-5)
"""
import json
import os
import sys

import numpy as np

# The same MLP (matmul, ReLU, ...) as tiers.mlir's: one float64 reference.
from tiers_check import reference

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
DIM = 512
NAMES = [f"w{i}" for i in range(4)]


def hardware(out, nodes, devices, memory, network):
    with open(os.path.join(ROOT, "hw", "cpu-1node.json")) as f:
        hw = json.load(f)
    hw["name"] = "pipeline"
    hw.pop("description", None)
    node = hw["nodes"][0]
    node["count"] = nodes
    node["devices"][0]["memory_bytes"] = memory
    node["devices"][0]["count"] = devices
    if devices > 1:
        node["links"] = [{"kind": "shared-memory", "bandwidth": 20e9,
                          "latency": 1e-6}]
    hw["network"] = {"kind": "ethernet", "bandwidth": network,
                     "latency": 50e-6}
    with open(out, "w") as f:
        json.dump(hw, f)


def hetero(out, ratio):
    with open(os.path.join(ROOT, "hw", "cpu-1node.json")) as f:
        hw = json.load(f)
    hw["name"] = "hetero"
    hw.pop("description", None)
    node = hw["nodes"][0]
    slow = dict(node["devices"][0])
    slow["model"] = "slow cpu"
    slow["peak_flops"] = {"f32": 50e9}
    slow["memory_bandwidth"] = 10e9
    fast = dict(slow)
    fast["model"] = "fast cpu"
    fast["peak_flops"] = {"f32": 50e9 * ratio}
    fast["memory_bandwidth"] = 10e9 * ratio
    node["devices"] = [fast, slow]
    node["links"] = [{"kind": "shared-memory", "bandwidth": 20e9,
                      "latency": 1e-6}]
    with open(out, "w") as f:
        json.dump(hw, f)


def unequal(out, ratio, memory0, memory1, network):
    with open(os.path.join(ROOT, "hw", "cpu-1node.json")) as f:
        hw = json.load(f)
    hw["name"] = "unequal"
    hw.pop("description", None)
    node = hw["nodes"][0]
    node.pop("count", None)
    node.pop("links", None)
    slow = dict(node["devices"][0])
    slow["count"] = 1
    slow["model"] = "slow cpu"
    slow["peak_flops"] = {"f32": 50e9}
    slow["memory_bandwidth"] = 10e9
    slow["memory_bytes"] = memory1
    fast = dict(slow)
    fast["model"] = "fast cpu"
    fast["peak_flops"] = {"f32": 50e9 * ratio}
    fast["memory_bandwidth"] = 10e9 * ratio
    fast["memory_bytes"] = memory0
    second = json.loads(json.dumps(node))
    second["name"] = "slow"
    node["devices"] = [fast]
    second["devices"] = [slow]
    hw["nodes"] = [node, second]
    hw["network"] = {"kind": "ethernet", "bandwidth": network,
                     "latency": 50e-6}
    with open(out, "w") as f:
        json.dump(hw, f)


def main():
    cmd = sys.argv[1]
    if cmd == "hardware":
        hardware(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]),
                 int(sys.argv[5]), float(sys.argv[6]))
        return 0
    if cmd == "hetero":
        hetero(sys.argv[2], float(sys.argv[3]))
        return 0
    if cmd == "unequal":
        unequal(sys.argv[2], float(sys.argv[3]), int(sys.argv[4]),
                int(sys.argv[5]), float(sys.argv[6]))
        return 0
    d = sys.argv[2]
    rng = np.random.default_rng(5)
    if cmd == "inputs":
        rows = int(sys.argv[3]) if len(sys.argv) > 3 else 64
        np.save(os.path.join(d, "x.npy"),
                rng.standard_normal((rows, DIM)).astype(np.float32))
        for name in NAMES:
            np.save(os.path.join(d, name + ".npy"),
                    (rng.standard_normal((DIM, DIM)) / np.sqrt(DIM))
                    .astype(np.float32))
        return 0
    x = np.load(os.path.join(d, "x.npy")).astype(np.float64)
    ws = [np.load(os.path.join(d, n + ".npy")).astype(np.float64)
          for n in NAMES]
    want = reference(x, ws)
    got = np.load(os.path.join(d, "y.npy")).astype(np.float64)
    err = np.abs(got - want).max() / max(np.abs(want).max(), 1e-30)
    print(f"y: max relative error {err:.2e}")
    if not err < 1e-5:
        print("pipeline_check.py: y differs from the float64 reference")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
