#!/usr/bin/env python3
"""Compares the communication of a plan with Megatron-LM's tensor parallelism.

Reads `tra-compile --explain` output on stdin. Megatron-style tensor
parallelism moves, per transformer layer in the forward pass, two ring
all-reduces of the layer's activations (batch x seq x dim elements) over
the P devices: each device sends 2(P-1)/P of them, so the P devices move
4 (P-1) x batch x seq x dim x element-bytes bytes per layer together. The
plan passes when the bytes it moves in all (the explain's "bytes moved"
total) are no more than that times the number of layers.

  tra-compile llama-65b.mlir --hw hw/dgx-8.json --explain |
      compare_megatron.py --layers 80 --tokens 128 --dim 8192 --devices 8
"""

import argparse
import re
import sys


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, required=True)
    parser.add_argument("--tokens", type=int, required=True,
                        help="batch x seq of the step")
    parser.add_argument("--dim", type=int, required=True)
    parser.add_argument("--devices", type=int, required=True)
    parser.add_argument("--element-bytes", type=int, default=2)
    args = parser.parse_args()
    text = sys.stdin.read()
    moved = re.search(r"bytes moved: (\d+) B", text)
    reduces = re.search(r"moves: (\d+) all_reduce, (\d+) reduce_scatter, "
                        r"(\d+) repartition", text)
    if not moved or not reduces:
        sys.exit("compare_megatron.py: no EXPLAIN totals on stdin")
    activation = args.tokens * args.dim * args.element_bytes
    megatron = args.layers * 4 * (args.devices - 1) * activation
    plan = int(moved.group(1))
    print(f"plan: {plan} bytes moved ({plan / args.layers:.0f} per layer; "
          f"{reduces.group(1)} all_reduce, {reduces.group(2)} reduce_scatter, "
          f"{reduces.group(3)} repartition)")
    print(f"megatron: {megatron} bytes moved "
          f"({megatron / args.layers:.0f} per layer; "
          f"{2 * args.layers} all_reduce)")
    if plan > megatron:
        print("FAIL: the plan moves more than Megatron")
        sys.exit(1)
    print("OK: the plan moves no more than Megatron")


if __name__ == "__main__":
    main()
