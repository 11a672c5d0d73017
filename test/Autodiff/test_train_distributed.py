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

import tra

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_train_step import (llama_setup, torch_adamw_losses,  # noqa: E402
                             tra_adamw_losses)

PARAMS = dict(dim=32, hidden_dim=48, n_layers=2, n_heads=4, n_kv_heads=2,
              vocab_size=64, max_seq_len=16, shared_classifier=True)
BATCH, SEQ, STEPS, LR = 2, 8, 50, 3e-3
HW = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                  "hw")


def setup():
    model, weights, stream = llama_setup(PARAMS, BATCH, SEQ, seed=1,
                                         period=20)
    model.train_step("loss", optimizer="adamw", weight_decay=0.01)
    return model, weights, stream


def run(program, weights, stream):
    return tra_adamw_losses(program, PARAMS, weights, stream, STEPS, LR,
                            BATCH, SEQ)


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    model, weights, stream = setup()
    program = tra.compile(model, hw="local", entry="train_step",
                          cache_dir=str(tmp_path_factory.mktemp("cache")))
    losses, final = run(program, weights, stream)
    want = torch_adamw_losses(PARAMS, weights, stream, STEPS, LR, BATCH, SEQ)
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
    got, got_final = run(program, weights, stream)
    assert np.max(np.abs(got - want) / np.abs(want)) <= 1e-3
    assert np.max(np.abs(got - losses) / np.abs(losses)) <= 1e-4
    for k, v in final.items():
        err = np.max(np.abs(got_final[k] - v)) / np.max(np.abs(v))
        assert err <= 1e-4, (k, err)
