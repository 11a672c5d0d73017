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


def read_safetensors(path):
    """The f32 tensors of a safetensors file, by name."""
    with open(path, "rb") as f:
        n = int.from_bytes(f.read(8), "little")
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        assert e["dtype"] == "F32", (path, name, e["dtype"])
        lo, hi = e["data_offsets"]
        out[name] = np.frombuffer(data[lo:hi], np.float32).reshape(e["shape"])
    return out


def close_losses(a, b, tol):
    """Every step of log `b` is in log `a` with a loss within `tol`
    relative (`b` may be a resumed run: a's last steps)."""
    la, lb = dict(losses(a)), dict(losses(b))
    if not lb or not set(lb) <= set(la):
        sys.exit("%s reports steps %s, %s only %s" % (b, sorted(lb), a,
                                                       sorted(la)))
    worst = max(abs(la[s] - lb[s]) / abs(la[s]) for s in lb)
    if worst > float(tol):
        sys.exit("losses differ by %g relative: %s vs %s" % (worst, la, lb))
    print("%d steps agree within %.1e" % (len(lb), worst))


def close_checkpoints(a, b, tol):
    """Two checkpoint directories hold the same tensors (weights and
    optimizer states) within `tol`, relative to each tensor's largest
    magnitude."""
    count, worst = 0, 0.0
    for f in ("model.safetensors", "optimizer.safetensors"):
        ta, tb = read_safetensors(a + "/" + f), read_safetensors(b + "/" + f)
        if sorted(ta) != sorted(tb):
            sys.exit("%s: different tensors" % f)
        for name in ta:
            x, y = ta[name].astype(np.float64), tb[name].astype(np.float64)
            if x.shape != y.shape:
                sys.exit("%s: %s has shapes %s and %s" % (f, name, x.shape,
                                                          y.shape))
            err = np.max(np.abs(x - y)) / max(np.max(np.abs(x)), 1e-30)
            worst = max(worst, err)
            if err > float(tol):
                sys.exit("%s: %s differs by %g" % (f, name, err))
            count += 1
    print("%d tensors agree within %.1e" % (count, worst))


def config(path, **kw):
    json.dump({k: int(v) for k, v in kw.items()}, open(path, "w"))


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "config":
        config(args[0], **dict(a.split("=") for a in args[1:]))
    else:
        globals()[cmd](*args)
