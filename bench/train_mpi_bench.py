#!/usr/bin/python3
"""Training on two ranks against one (issue 15): the same LLaMA training
step run by `tra-llama train` as 1 rank x 1 thread (hardware of one CPU
node, in process) and as 2 ranks x 1 thread (two CPU nodes: the step
planned for them, one MPI job of tra-llama-train-worker ranks on this
machine). Prints the plan the optimizer chose for the two nodes
(`--explain`'s totals and the per-tensor lines of the first layer), the
tokens/s of each run and the speedup t(1 rank) / t(2 ranks) (target >=
1.6), median and spread over --rounds rounds that alternate the two.

    /usr/bin/python3 bench/train_mpi_bench.py [--build DIR] [--rounds 3]
        [--steps 6] [--dim 256] [--layers 4] [--vocab 2048] [--batch 8]
        [--seq 128] [--work DIR]

The model is random (a --config), compute-bound at this size: about 20
Gflop per step. Each round times the steps after the first two (the first
steps warm caches and page in the program). The two runs must report the
same losses (1e-4 relative): the script exits 1 otherwise. Ratios are
printed, never asserted. Run it on an idle machine.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def cpu_nodes(path, count):
    """`count` nodes like hw/cpu-1node.json (this machine's 2 cores each),
    on the network of hw/cpu-8nodes.json."""
    with open(os.path.join(ROOT, "hw", "cpu-1node.json")) as f:
        hw = json.load(f)
    with open(os.path.join(ROOT, "hw", "cpu-8nodes.json")) as f:
        hw["network"] = json.load(f)["network"]
    hw["name"] = f"cpu-{count}x1node"
    hw["nodes"][0]["count"] = count
    with open(path, "w") as f:
        json.dump(hw, f)
    return path


def progress(text):
    """(step, loss, tokens/s) of every progress line."""
    out = []
    for line in text.splitlines():
        m = re.match(r"step (\d+)/\d+: loss ([0-9.]+), .* (\d+) tokens/s$",
                     line.strip())
        if m:
            out.append((int(m.group(1)), float(m.group(2)),
                        float(m.group(3))))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--dim", type=int, default=256)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--vocab", type=int, default=2048)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--work", default=None)
    args = ap.parse_args()
    work = args.work or tempfile.mkdtemp(prefix="tra-train-mpi-")
    os.makedirs(work, exist_ok=True)
    tool = os.path.join(args.build, "bin", "tra-llama")
    config = os.path.join(work, "model.json")
    hidden = (args.dim * 8 // 3 + 15) // 16 * 16
    with open(config, "w") as f:
        json.dump(dict(dim=args.dim, hidden_dim=hidden, n_layers=args.layers,
                       n_heads=8, n_kv_heads=8, vocab_size=args.vocab,
                       max_seq_len=args.seq), f)
    data = os.path.join(work, "tokens.npy")
    rng = np.random.default_rng(0)
    np.save(data, rng.integers(0, args.vocab, size=200000).astype(np.int64))
    hw = {1: cpu_nodes(os.path.join(work, "one.json"), 1),
          2: cpu_nodes(os.path.join(work, "two.json"), 2)}
    cache = os.path.join(work, "cache")

    def train(ranks, explain=False):
        out = os.path.join(work, f"out{ranks}")
        subprocess.run(["rm", "-rf", out], check=True)
        cmd = [tool, "train", "--config", config, "--data", data, "-o", out,
               "--steps", str(args.steps), "--batch", str(args.batch),
               "--seq-len", str(args.seq), "--lr", "1e-3", "--seed", "3",
               "--num-threads", "1", "--hw", hw[ranks], "--cache-dir", cache]
        if explain:
            cmd.append("--explain")
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(f"{' '.join(cmd)} failed:\n{r.stderr}")
        return r.stdout, r.stderr

    print(f"model: dim {args.dim}, hidden {hidden}, {args.layers} layers, "
          f"vocab {args.vocab}; batch {args.batch} x {args.seq} tokens; "
          f"{args.steps} steps per round, 1 thread per rank")
    # First runs compile (cached for the rounds) and print the plan.
    _, err1 = train(1)
    out2, err2 = train(2, explain=True)
    for line in (err1 + err2).splitlines():
        if "compiled in" in line or "planned for" in line:
            print(line)
    lines = out2.splitlines()
    total = [i for i, l in enumerate(lines) if l.startswith("TOTAL")]
    print("plan for two nodes (tra-llama train --explain):")
    for l in lines:
        if re.search(r"layers\.0\.(attention\.wq|feed_forward\.w1)\.weight"
                     r"(\.adam_m)?\s+argument", l):
            print("  " + " ".join(l.split()))
    for l in lines[total[0]:total[0] + 5] if total else []:
        print("  " + l.strip())
    rates = {1: [], 2: []}
    for round_ in range(args.rounds):
        losses = {}
        for ranks in (1, 2) if round_ % 2 == 0 else (2, 1):
            out, _ = train(ranks)
            steps = progress(out)
            timed = [t for s, _, t in steps if s > 2]
            rates[ranks].append(statistics.median(timed))
            losses[ranks] = [l for _, l, _ in steps]
        worst = max(abs(a - b) / abs(a) for a, b in zip(losses[1], losses[2]))
        if worst > 1e-4:
            sys.exit(f"the runs disagree: losses {losses[1]} vs {losses[2]}")
        print(f"round {round_ + 1}: 1 rank {rates[1][-1]:.0f} tokens/s, "
              f"2 ranks {rates[2][-1]:.0f} tokens/s, speedup "
              f"{rates[2][-1] / rates[1][-1]:.2f} (losses agree within "
              f"{worst:.1e})")
    speedups = [b / a for a, b in zip(rates[1], rates[2])]
    print(f"speedup 2 ranks / 1 rank: median {statistics.median(speedups):.2f}"
          f" (min {min(speedups):.2f}, max {max(speedups):.2f}; target >= "
          f"1.6)")


if __name__ == "__main__":
    main()
