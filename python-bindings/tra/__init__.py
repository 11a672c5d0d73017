"""Python bindings of tra.

    import numpy as np
    import tra

    model = tra.parse(open("examples/llama_block.mlir").read())
    print(model.functions())                 # ['rmsnorm', 'attention', ...]
    print(model.signature("ffn"))            # arguments and results
    out = model.interpret("ffn", {"h": h, "ffn_norm": n, "w1": w1, ...})
    out["out"]                               # a NumPy array

    llama = tra.llama_model(dict(dim=64, hidden_dim=172, n_layers=2,
                                 n_heads=8, n_kv_heads=4, vocab_size=512,
                                 max_seq_len=64), seq_len=1)
    print(llama.text())                      # model-level tra IR

    llm = tra.Llama("../shared/models/stories260K.bin")
    llm.generate([1], steps=16)              # greedy ids, run by tra's engine
    llm.forward([1, 461], pos=0)             # logits [2, vocab]

Errors in the IR, the inputs or the checkpoint raise ValueError with the
diagnostics.
"""
from ._tra import Llama, Model, llama_model, parse  # noqa: F401

__all__ = ["Llama", "Model", "parse", "llama_model"]
