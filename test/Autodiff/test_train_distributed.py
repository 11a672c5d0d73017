"""The same training step planned for one device and for several: 50 AdamW
steps of a small LLaMA (GQA) from the same weights on a fixed token stream,
on --hw local (in process), hw/cpu-8nodes.json and hw/dgx-8.json emulated on
CPUs (one MPI job of 8 ranks per step). Every loss is within 1e-3 relative
of a PyTorch float64 reference; the multi-device losses and final weights
are within 1e-4 of the one-device run's.

Run by train-distributed.test (pytest).
"""
import os
import sys

import numpy as np
import pytest
import torch

import tra

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_llama_gradients as llama  # noqa: E402

PARAMS = dict(dim=32, hidden_dim=48, n_layers=2, n_heads=4, n_kv_heads=2,
              vocab_size=64, max_seq_len=16, shared_classifier=True)
BATCH, SEQ, STEPS, LR = 2, 8, 50, 3e-3
HW = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                  "hw")


def setup():
    rng = np.random.default_rng(1)
    model = tra.llama_training_model(PARAMS, batch=BATCH, seq_len=SEQ)
    sig = model.signature("loss")
    weights = {}
    for arg in sig["arguments"][4:]:
        base = 1.0 if arg["name"].endswith("norm.weight") else 0.0
        weights[arg["name"]] = (base + 0.1 * rng.standard_normal(
            tuple(arg["shape"]))).astype(np.float32)
    stream = np.tile(rng.integers(0, PARAMS["vocab_size"], size=20), 80)
    model.train_step("loss", optimizer="adamw", weight_decay=0.01)
    return model, weights, stream


def batch_at(stream, step):
    starts = [(step * BATCH + i) * SEQ for i in range(BATCH)]
    rows = np.stack([stream[o:o + SEQ + 1] for o in starts])
    return rows[:, :-1], rows[:, 1:]


def run_tra(program, weights, stream):
    cos, sin = llama.rope_tables(PARAMS)
    values = dict(weights)
    states = {}
    for k, v in weights.items():
        states[k + ".adam_m"] = np.zeros_like(v)
        states[k + ".adam_v"] = np.zeros_like(v)
    losses = []
    for step in range(STEPS):
        tokens, targets = batch_at(stream, step)
        out = program(**values, **states, tokens=tokens, targets=targets,
                      freqs_cos=cos, freqs_sin=sin, lr=np.float32(LR),
                      step=np.float32(step + 1))
        values = {k: out[k + "_out"] for k in values}
        states = {k: out[k + "_out"] for k in states}
        losses.append(float(out["loss"]))
    return np.array(losses), values


def run_torch(weights, stream):
    cos, sin = (torch.tensor(t, dtype=torch.float64)
                for t in llama.rope_tables(PARAMS))
    w = {k: torch.tensor(v, dtype=torch.float64, requires_grad=True)
         for k, v in weights.items()}
    opt = torch.optim.AdamW(list(w.values()), lr=float(np.float32(LR)),
                            weight_decay=0.01)
    losses = []
    for step in range(STEPS):
        tokens, targets = batch_at(stream, step)
        opt.zero_grad()
        loss = llama.torch_loss(w, torch.tensor(tokens), torch.tensor(targets),
                                cos, sin, PARAMS)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return np.array(losses)


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    model, weights, stream = setup()
    program = tra.compile(model, hw="local", entry="train_step",
                          cache_dir=str(tmp_path_factory.mktemp("cache")))
    losses, final = run_tra(program, weights, stream)
    want = run_torch(weights, stream)
    return losses, final, want


def test_one_device_matches_torch(reference):
    losses, _, want = reference
    assert np.max(np.abs(losses - want) / np.abs(want)) <= 1e-3
    assert losses[-1] < losses[0] - 1.0  # it learns the repeated stream


@pytest.mark.parametrize("hw", ["cpu-8nodes.json", "dgx-8.json"])
def test_several_devices_match_one(reference, hw, tmp_path):
    losses, final, want = reference
    model, weights, stream = setup()
    program = tra.compile(model, hw=os.path.join(HW, hw), entry="train_step",
                          cache_dir=str(tmp_path),
                          emulate_on_cpu=hw.startswith("dgx"))
    got, got_final = run_tra(program, weights, stream)
    assert np.max(np.abs(got - want) / np.abs(want)) <= 1e-3
    assert np.max(np.abs(got - losses) / np.abs(losses)) <= 1e-4
    for k, v in final.items():
        err = np.max(np.abs(got_final[k] - v)) / np.max(np.abs(v))
        assert err <= 1e-4, (k, err)
