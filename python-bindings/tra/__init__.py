"""Python bindings of tra.

    import numpy as np
    import tra
    from tra import builder as tb

    model = tra.parse(open("examples/llama_block.mlir").read())
    print(model.functions())                 # ['rmsnorm', 'attention', ...]
    print(model.signature("ffn"))            # arguments and results
    out = model.interpret("ffn", {"h": h, "ffn_norm": n, "w1": w1, ...})
    out["out"]                               # a NumPy array

    program = tra.compile(model, hw="local", entry="ffn")
    print(program.explain())                 # the plan (tra-compile --explain)
    program.signature.inputs                 # [Tensor(name='h', shape=(4, 64), ...)]
    out = program(h=h, ffn_norm=n, w1=w1, w2=w2, w3=w3)   # native, in process

    b = tra.Builder()                        # a model written in Python
    f = b.function("mlp")
    x, w = f.arg("x", (8, 64)), f.arg("w", (64, 32), dtype="f32")
    y = f.map(lambda v: v * tb.sigmoid(v), f.einsum("sd,df->sf", x, w))
    f.returns(y=y)
    print(b.text())                          # tra IR; b.model() verifies it
    tra.compile(b)(x=x_array, w=w_array)["y"]

    llama = tra.llama_model(dict(dim=64, hidden_dim=172, n_layers=2,
                                 n_heads=8, n_kv_heads=4, vocab_size=512,
                                 max_seq_len=64), seq_len=1)
    print(llama.text())                      # model-level tra IR

    llm = tra.Llama("../shared/models/stories260K.bin")
    llm.generate([1], steps=16)              # greedy ids, run by tra's engine
    llm.forward([1, 461], pos=0)             # logits [2, vocab]

tra.compile plans with tra-compile's pipeline for `hw` ("local" or a
hardware file) and compiles one-device programs through the library cache
(~/.cache/tra; cache_dir="" compiles without it) into this process; a plan
for several devices runs as one MPI job of one rank per device on this
machine (mpirun --oversubscribe; emulate_on_cpu=True for GPU files). Errors in the IR, the hardware
file, the inputs, a traced map function or the checkpoint raise ValueError
with the diagnostics.
"""
from ._tra import (Llama, Model, llama_model, llama_training_model,  # noqa: F401
                   parse)
from . import builder  # noqa: F401
from .builder import Builder  # noqa: F401
from .program import Program, Signature, Tensor, compile  # noqa: F401

__all__ = ["Builder", "Llama", "Model", "Program", "Signature", "Tensor",
           "builder", "compile", "llama_model", "llama_training_model", "parse"]
