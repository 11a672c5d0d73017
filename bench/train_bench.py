#!/usr/bin/env python3
"""Training step throughput: tra's compiled training step (tra-train-step of
the LLaMA training loss, compiled for --hw local and run in process) against
PyTorch eager on the same model, batch, weights and optimizer (AdamW), both
f32 on the same thread count.

    PYTHONPATH=build/python /usr/bin/python3 bench/train_bench.py
        [--rounds 3] [--steps 5] [--threads 2] [--batch 8] [--seq 256]
        [--model 42m|tiny]

42m: a random LLaMA with dim 512, 8 layers, 8 heads, hidden 1376, vocab
32000, shared classifier (about 42M parameters, the issue's model). tiny:
stories260K's shape. Each round times --steps steps of each engine after
one untimed warm-up step (tra's first call also compiles, reported
separately); rounds alternate the engines, every round is printed and the
median ratio is reported with its spread. The two engines' losses of the
first step are compared. Ratios are printed, never asserted.
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np
import torch

import tra

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "test", "Autodiff"))
import test_llama_gradients as ref  # noqa: E402  (the PyTorch model)

MODELS = {
    "42m": dict(dim=512, hidden_dim=1376, n_layers=8, n_heads=8, n_kv_heads=8,
                vocab_size=32000, max_seq_len=256, shared_classifier=True),
    "tiny": dict(dim=64, hidden_dim=172, n_layers=5, n_heads=8, n_kv_heads=4,
                 vocab_size=512, max_seq_len=256, shared_classifier=True),
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--seq", type=int, default=256)
    ap.add_argument("--model", default="42m", choices=sorted(MODELS))
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    params = MODELS[args.model]
    B, S = args.batch, args.seq
    rng = np.random.default_rng(0)
    model = tra.llama_training_model(params, batch=B, seq_len=S)
    weights = {}
    for a in model.signature("loss")["arguments"][4:]:
        base = 1.0 if a["name"].endswith("norm.weight") else 0.0
        weights[a["name"]] = (base + 0.02 * rng.standard_normal(
            tuple(a["shape"]))).astype(np.float32)
    nparams = sum(v.size for v in weights.values())
    model.train_step("loss", optimizer="adamw", weight_decay=0.1)
    t0 = time.time()
    program = tra.compile(model, hw="local", entry="train_step",
                          threads=args.threads)
    print("tra: compiled the training step in %.1f s (%d parameters)"
          % (time.time() - t0, nparams))
    cos, sin = ref.rope_tables(params)
    stream = rng.integers(0, params["vocab_size"], size=B * (S + 1) * 4)

    def batch(i):
        rows = np.stack([stream[((i * B + b) * (S + 1)) % (len(stream) - S - 1):][:S + 1]
                         for b in range(B)])
        return rows[:, :-1], rows[:, 1:]

    # tra: parameters and states carried between steps.
    state = {"values": dict(weights),
             "states": {k + s: np.zeros_like(v) for k, v in weights.items()
                        for s in (".adam_m", ".adam_v")},
             "step": 0}

    def tra_step(i):
        tokens, targets = batch(i)
        state["step"] += 1
        out = program(**state["values"], **state["states"], tokens=tokens,
                      targets=targets, freqs_cos=cos, freqs_sin=sin,
                      lr=np.float32(1e-4), step=np.float32(state["step"]))
        state["values"] = {k: out[k + "_out"] for k in state["values"]}
        state["states"] = {k: out[k + "_out"] for k in state["states"]}
        return float(out["loss"])

    tw = {k: torch.tensor(v, requires_grad=True) for k, v in weights.items()}
    opt = torch.optim.AdamW(list(tw.values()), lr=1e-4, weight_decay=0.1,
                            foreach=True)
    tcos, tsin = torch.tensor(cos), torch.tensor(sin)

    def torch_step(i):
        tokens, targets = batch(i)
        opt.zero_grad()
        loss = ref.torch_loss(tw, torch.tensor(tokens), torch.tensor(targets),
                              tcos, tsin, params)
        loss.backward()
        opt.step()
        return loss.item()

    l_tra, l_torch = tra_step(0), torch_step(0)  # warm-up (untimed)
    print("first-step loss: tra %.6f, PyTorch %.6f (relative difference %.1e)"
          % (l_tra, l_torch, abs(l_tra - l_torch) / abs(l_torch)))
    tokens = B * S * args.steps
    rates = {"tra": [], "pytorch": []}
    for r in range(args.rounds):
        for name, fn in (("tra", tra_step), ("pytorch", torch_step)):
            t = time.perf_counter()
            for i in range(args.steps):
                fn(1 + r * args.steps + i)
            rates[name].append(tokens / (time.perf_counter() - t))
        print("round %d: tra %.0f tokens/s, PyTorch eager %.0f tokens/s"
              % (r + 1, rates["tra"][-1], rates["pytorch"][-1]))
    ratios = [a / b for a, b in zip(rates["tra"], rates["pytorch"])]
    print("%s, batch %d x %d, %d threads: tra %.0f tokens/s (median), PyTorch "
          "eager %.0f tokens/s; ratio %.2fx (rounds: %s)"
          % (args.model, B, S, args.threads, statistics.median(rates["tra"]),
             statistics.median(rates["pytorch"]), statistics.median(ratios),
             ", ".join("%.2f" % x for x in ratios)))


if __name__ == "__main__":
    main()
