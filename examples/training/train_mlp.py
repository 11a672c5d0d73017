"""A model written in Python and trained by tra (examples/training/README.md).

    PYTHONPATH=build/python python3 examples/training/train_mlp.py
"""
import os

import numpy as np

import tra
from tra import builder as tb

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")

# The loss: mean squared error of a two-layer tanh MLP.
b = tra.Builder()
f = b.function("loss")
x, y = f.arg("x", (64, 16)), f.arg("y", (64, 4))
w1, b1, w2 = f.arg("w1", (16, 32)), f.arg("b1", (32,)), f.arg("w2", (32, 4))
h = f.map(lambda u, v: tb.tanh(u + v), f.einsum("si,ih->sh", x, w1), b1,
          spec="sh,h->sh")
d = f.map(lambda o, t: (o - t) * (o - t), f.einsum("sh,ho->so", h, w2), y)
f.returns(loss=f.map(lambda s: s * (1.0 / (64 * 4)), f.einsum("so->", d)))

model = b.model()
step = model.train_step("loss", wrt=["w1", "b1", "w2"], optimizer="adamw",
                        clip_norm=1.0)
print("the training step's arguments:",
      [a["name"] for a in model.signature(step)["arguments"]])
program = tra.compile(model, hw="local", entry=step)

rng = np.random.default_rng(0)
true_w = rng.standard_normal((16, 4)).astype(np.float32)
params = {"w1": 0.3 * rng.standard_normal((16, 32)).astype(np.float32),
          "b1": np.zeros(32, np.float32),
          "w2": 0.3 * rng.standard_normal((32, 4)).astype(np.float32)}
states = {k + s: np.zeros_like(v) for k, v in params.items()
          for s in (".adam_m", ".adam_v")}
for i in range(1, 201):
    xs = rng.standard_normal((64, 16)).astype(np.float32)
    ys = np.tanh(xs @ true_w)
    out = program(x=xs, y=ys, **params, **states, lr=np.float32(1e-2),
                  step=np.float32(i))
    params = {k: out[k + "_out"] for k in params}
    states = {k: out[k + "_out"] for k in states}
    if i == 1 or i % 40 == 0:
        print("step %3d: loss %.4f, grad norm %.3f"
              % (i, out["loss"], out["grad_norm"]))

# The same step planned for 8 GPUs: where each tensor and gradient lives.
plan = tra.compile(model, hw=os.path.join(ROOT, "hw", "dgx-8.json"),
                   entry=step, emulate_on_cpu=True)
print("\n".join(plan.explain().splitlines()[:3]))
