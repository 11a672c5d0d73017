"""Helpers of train.test: write token streams and configs, and check the
progress lines of `tra-llama train` (python3 train_check.py COMMAND ...)."""
import json
import re
import sys

import numpy as np


def stream(path, vocab, period, repeats, seed):
    """A learnable token stream: `period` random ids, repeated."""
    rng = np.random.default_rng(int(seed))
    ids = np.tile(rng.integers(0, int(vocab), size=int(period)), int(repeats))
    np.save(path, ids.astype(np.int64))


def losses(path):
    """The loss of every progress line of a training log."""
    out = []
    for line in open(path):
        m = re.match(r"step (\d+)/(\d+): loss ([0-9.]+), lr \S+, grad norm "
                     r"[0-9.]+, \d+ tokens/s$", line.strip())
        if m:
            out.append((int(m.group(1)), float(m.group(3))))
    return out


def falls(path, by):
    """The loss falls by at least `by` from the first to the last step."""
    values = losses(path)
    assert len(values) >= 2, "no progress lines in " + path
    first, last = values[0][1], values[-1][1]
    if not last < first - float(by):
        sys.exit("the loss went from %g to %g" % (first, last))
    print("loss %.4f -> %.4f over %d steps" % (first, last, len(values)))


def same_steps(a, b):
    """Every step both logs report has the same loss (a resumed run)."""
    la, lb = dict(losses(a)), dict(losses(b))
    common = sorted(set(la) & set(lb))
    assert common, "no common steps"
    for s in common:
        if la[s] != lb[s]:
            sys.exit("step %d: loss %g vs %g" % (s, la[s], lb[s]))
    print("%d common steps agree" % len(common))


def config(path, **kw):
    json.dump({k: int(v) for k, v in kw.items()}, open(path, "w"))


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "config":
        config(args[0], **dict(a.split("=") for a in args[1:]))
    else:
        globals()[cmd](*args)
