"""Whole training steps built by tra-train-step (forward, tra-autodiff
gradients, global-norm clipping, SGD or AdamW) against torch.optim on the
same model, from the same initial weights.

- a two-layer tanh MLP in f64 on the interpreter, several steps of every
  optimizer variant: parameters, optimizer states and losses within 1e-9
  relative of PyTorch's (both in float64);
- the LLaMA training loss of stories260K's shape, compiled for this machine
  (--hw local) and run in process: 50 AdamW steps on a fixed token stream,
  tra's loss at every step within 1e-3 relative of PyTorch's (float64).

Run by train-step.test (pytest).
"""
import os
import sys

import numpy as np
import pytest
import torch

import tra

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_llama_gradients as llama  # noqa: E402

MLP = """
func.func @loss(%x: tensor<6x4xf64> {tra.name = "x"},
                %y: tensor<6x3xf64> {tra.name = "y"},
                %w1: tensor<4x5xf64> {tra.name = "w1", tra.wrt},
                %b1: tensor<5xf64> {tra.name = "b1", tra.wrt},
                %w2: tensor<5x3xf64> {tra.name = "w2", tra.wrt}) -> tensor<f64> {
  %h = tra.einsum "si,ih->sh" mul (%x, %w1)
      : (tensor<6x4xf64>, tensor<4x5xf64>) -> tensor<6x5xf64>
  %a = tra.map "sh,h->sh" (%h, %b1) : (tensor<6x5xf64>, tensor<5xf64>)
      -> tensor<6x5xf64> {
  ^bb0(%u: f64, %v: f64):
    %s = arith.addf %u, %v : f64
    %t = math.tanh %s : f64
    tra.yield %t : f64
  }
  %o = tra.einsum "sh,ho->so" mul (%a, %w2)
      : (tensor<6x5xf64>, tensor<5x3xf64>) -> tensor<6x3xf64>
  %d = tra.einsum "so,so->so" sub (%o, %y)
      : (tensor<6x3xf64>, tensor<6x3xf64>) -> tensor<6x3xf64>
  %l = tra.einsum "so->" square (%d) : (tensor<6x3xf64>) -> tensor<f64>
  return %l : tensor<f64>
}
"""

PARAMS = ["w1", "b1", "w2"]


def torch_mlp(t, x, y):
    a = torch.tanh(x @ t["w1"] + t["b1"])
    return ((a @ t["w2"] - y) ** 2).sum()


VARIANTS = [
    dict(optimizer="sgd"),
    dict(optimizer="sgd", momentum=0.9),
    dict(optimizer="sgd", momentum=0.8, nesterov=True, weight_decay=0.01),
    dict(optimizer="sgd", momentum=0.9, clip_norm=0.5),
    dict(optimizer="adamw"),
    dict(optimizer="adamw", weight_decay=0.1, beta1=0.8, beta2=0.99,
         eps=1e-6),
    dict(optimizer="adamw", weight_decay=0.01, clip_norm=0.3),
]


def torch_optimizer(params, v, lr):
    if v["optimizer"] == "sgd":
        return torch.optim.SGD(params, lr=lr, momentum=v.get("momentum", 0.0),
                               nesterov=v.get("nesterov", False),
                               weight_decay=v.get("weight_decay", 0.0))
    return torch.optim.AdamW(params, lr=lr, betas=(v.get("beta1", 0.9),
                                                   v.get("beta2", 0.999)),
                             eps=v.get("eps", 1e-8),
                             weight_decay=v.get("weight_decay", 0.0))


@pytest.mark.parametrize("variant", VARIANTS,
                         ids=[",".join("%s=%s" % kv for kv in v.items())
                              for v in VARIANTS])
def test_mlp_steps_match_torch_optim(variant):
    rng = np.random.default_rng(11)
    model = tra.parse(MLP)
    assert model.train_step("loss", **variant) == "train_step"
    sig = model.signature("train_step")
    arg_names = [a["name"] for a in sig["arguments"]]
    x, y = rng.standard_normal((6, 4)), rng.standard_normal((6, 3))
    values = {"w1": rng.standard_normal((4, 5)), "b1": rng.standard_normal(5),
              "w2": rng.standard_normal((5, 3))}
    states = {n: np.zeros(values[n.split(".")[0]].shape)
              for n in arg_names if "." in n}
    tparams = {k: torch.tensor(v, requires_grad=True)
               for k, v in values.items()}
    opt = torch_optimizer(list(tparams.values()), variant, lr=0.05)
    for step in range(1, 6):
        # A learning-rate schedule: a different rate every step.
        lr = 0.05 / step
        for group in opt.param_groups:
            group["lr"] = lr
        inputs = dict(values, **states, x=x, y=y, lr=np.float32(lr))
        if "step" in arg_names:
            inputs["step"] = np.float32(step)
        out = model.interpret("train_step", inputs)
        # lr travels as f32, as the step program reads it.
        for group in opt.param_groups:
            group["lr"] = float(np.float32(lr))
        opt.zero_grad()
        loss = torch_mlp(tparams, torch.tensor(x), torch.tensor(y))
        loss.backward()
        norm = torch.sqrt(sum((p.grad ** 2).sum() for p in tparams.values()))
        assert abs(out["grad_norm"] - norm.item()) <= 1e-6 * norm.item()
        if variant.get("clip_norm"):
            torch.nn.utils.clip_grad_norm_(tparams.values(),
                                           variant["clip_norm"])
        opt.step()
        assert abs(out["result0"] - loss.item()) <= 1e-9 * abs(loss.item())
        values = {k: out[k + "_out"] for k in PARAMS}
        states = {n: out[n + "_out"] for n in states}
        for k in PARAMS:
            want = tparams[k].detach().numpy()
            assert np.max(np.abs(values[k] - want)) <= 1e-9 * np.max(
                np.abs(want)), (step, k)
            st = opt.state[tparams[k]]
            for name, key in ((".adam_m", "exp_avg"), (".adam_v", "exp_avg_sq"),
                              (".momentum", "momentum_buffer")):
                if k + name in states:
                    ref = st[key].numpy()
                    assert np.max(np.abs(states[k + name] - ref)) <= \
                        1e-9 * max(np.max(np.abs(ref)), 1e-300), (step, name)


def test_errors():
    model = tra.parse(MLP)
    with pytest.raises(ValueError, match="unknown optimizer 'adam'"):
        model.train_step("loss", optimizer="adam")
    model.train_step("loss")
    with pytest.raises(ValueError, match="already has a symbol named "
                                         "@train_step"):
        model.train_step("loss")
    half = tra.parse(MLP.replace("f64", "f16"))
    with pytest.raises(ValueError, match="parameter 'w1' is 'f16'; a training "
                                         "step keeps its parameters in f32"):
        half.train_step("loss")


def llama_setup(params, batch, seq, seed, period):
    """The training loss of `params`, random weights (norms near 1), and a
    stream with structure to learn: `period` random ids, repeated."""
    rng = np.random.default_rng(seed)
    model = tra.llama_training_model(params, batch=batch, seq_len=seq)
    weights = {}
    for arg in model.signature("loss")["arguments"][4:]:
        base = 1.0 if arg["name"].endswith("norm.weight") else 0.0
        weights[arg["name"]] = (base + 0.1 * rng.standard_normal(
            tuple(arg["shape"]))).astype(np.float32)
    stream = np.tile(rng.integers(0, params["vocab_size"], size=period),
                     4000 // period)
    return model, weights, stream


def batch_at(stream, step, batch, seq):
    """Step `step`'s tokens and targets: consecutive windows of the stream."""
    starts = [(step * batch + i) * seq for i in range(batch)]
    rows = np.stack([stream[o:o + seq + 1] for o in starts])
    return rows[:, :-1], rows[:, 1:]


def torch_adamw_losses(params, weights, stream, steps, lr, batch, seq):
    """PyTorch's AdamW (weight decay 0.01) on the same model, in float64."""
    cos, sin = (torch.tensor(t, dtype=torch.float64)
                for t in llama.rope_tables(params))
    w = {k: torch.tensor(v, dtype=torch.float64, requires_grad=True)
         for k, v in weights.items()}
    opt = torch.optim.AdamW(list(w.values()), lr=float(np.float32(lr)),
                            weight_decay=0.01)
    losses = []
    for step in range(steps):
        tokens, targets = batch_at(stream, step, batch, seq)
        opt.zero_grad()
        loss = llama.torch_loss(w, torch.tensor(tokens),
                                torch.tensor(targets), cos, sin, params)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return np.array(losses)


def tra_adamw_losses(program, params, weights, stream, steps, lr, batch, seq):
    """tra's compiled training step, its parameters and AdamW states carried
    from step to step; the losses and the final weights."""
    cos, sin = llama.rope_tables(params)
    values = dict(weights)
    states = {}
    for k, v in weights.items():
        states[k + ".adam_m"] = np.zeros_like(v)
        states[k + ".adam_v"] = np.zeros_like(v)
    losses = []
    for step in range(steps):
        tokens, targets = batch_at(stream, step, batch, seq)
        out = program(**values, **states, tokens=tokens, targets=targets,
                      freqs_cos=cos, freqs_sin=sin, lr=np.float32(lr),
                      step=np.float32(step + 1))
        values = {k: out[k + "_out"] for k in values}
        states = {k: out[k + "_out"] for k in states}
        losses.append(float(out["loss"]))
    return np.array(losses), values


def test_llama_50_adamw_steps_compiled_match_torch(tmp_path):
    p, b, s = llama.PARAMS, llama.BATCH, llama.SEQ
    model, weights, stream = llama_setup(p, b, s, seed=5, period=40)
    model.train_step("loss", optimizer="adamw", weight_decay=0.01)
    program = tra.compile(model, hw="local", entry="train_step",
                          cache_dir=str(tmp_path))
    lr = 3e-3
    got, _ = tra_adamw_losses(program, p, weights, stream, 50, lr, b, s)
    want = torch_adamw_losses(p, weights, stream, 50, lr, b, s)
    errs = np.abs(got - want) / np.abs(want)
    assert np.max(errs) <= 1e-3, (np.max(errs), int(np.argmax(errs)))
    # The model learns the repeated sequence.
    assert got[-1] < got[0] - 1.0, (got[0], got[-1])
