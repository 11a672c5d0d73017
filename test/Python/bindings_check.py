"""Driver for bindings.test: exercises the tra Python package."""
import sys

import numpy as np

import tra

model = tra.parse(open(sys.argv[1]).read())
print("functions:", model.functions())
sig = model.signature("ffn")
print("ffn arguments:", " ".join(f"{a['name']}{a['shape']}" for a in sig["arguments"]))

r = np.random.default_rng(0)
inp = {"h": r.standard_normal((4, 64)).astype(np.float32),
       "ffn_norm": (1 + 0.1 * r.standard_normal(64)).astype(np.float32),
       "w1": (r.standard_normal((172, 64)) / 8).astype(np.float32),
       "w2": (r.standard_normal((64, 172)) / 13).astype(np.float32),
       "w3": (r.standard_normal((172, 64)) / 8).astype(np.float32)}
out = model.interpret("ffn", inp)["out"]
h = inp["h"].astype(np.float64)
hn = h / np.sqrt((h * h).mean(-1, keepdims=True) + 1e-5) * inp["ffn_norm"]
a, b = hn @ inp["w1"].T, hn @ inp["w3"].T
want = h + (a / (1 + np.exp(-a)) * b) @ inp["w2"].T
err = float(np.abs(out - want).max())
assert out.dtype == np.float32 and out.shape == (4, 64)
print(f"ffn max abs error vs numpy: {err:.3e}", "OK" if err < 1e-4 else "FAIL")

llama = tra.llama_model(dict(dim=64, hidden_dim=172, n_layers=2, n_heads=8,
                             n_kv_heads=4, vocab_size=96, max_seq_len=32),
                        seq_len=4)
print("llama forward arguments:", len(llama.signature("forward")["arguments"]))


def expect_error(label, fn):
    try:
        fn()
        print(label + ": no error")
    except ValueError as e:
        print(f"{label}: ValueError: {str(e).splitlines()[0]}")


expect_error("missing input", lambda: model.interpret(
    "ffn", {k: v for k, v in inp.items() if k != "w3"}))
expect_error("bad shape", lambda: model.interpret(
    "ffn", dict(inp, h=np.zeros((3, 64)))))
expect_error("bad IR", lambda: tra.parse(
    'func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n'
    '  %0 = tra.einsum "i->i" (%a) : (tensor<4xf32>) -> tensor<4xf32>\n'
    '  return %0 : tensor<4xf32>\n}'))
expect_error("bad params", lambda: tra.llama_model(
    dict(dim=63, hidden_dim=172, n_layers=1, n_heads=8, vocab_size=96,
         max_seq_len=32)))
