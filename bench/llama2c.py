"""Random-weight LLaMA checkpoints in llama2.c's v0 format, for the
benchmarks (no PyTorch needed)."""
import os

import numpy as np


def meta_hidden(dim):
    """Meta's FFN size for `dim`: 2/3 of 4 * dim, rounded up to 32."""
    hidden = int(2 * (4 * dim) / 3)
    return 32 * ((hidden + 31) // 32)


def write_random_llama2c(path, dim=512, layers=8, heads=8, kv_heads=8,
                         vocab=32000, seq_len=1024, seed=0, hidden=None,
                         shared_classifier=True):
    """Writes a llama2.c v0 checkpoint with random weights (fixed seed),
    tensor by tensor (bounded memory), replacing `path` only once complete;
    returns its hidden size (Meta's rounding of `dim` unless given). An
    unshared classifier is stated by a negative vocabulary size in the
    header and follows the rotary tables."""
    hidden = meta_hidden(dim) if hidden is None else hidden
    hd = dim // heads
    kvd = kv_heads * hd
    rng = np.random.default_rng(seed)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(np.array([dim, hidden, layers, heads, kv_heads,
                          vocab if shared_classifier else -vocab,
                          seq_len], dtype=np.int32).tobytes())

        def normal(shape, std, mean=0.0):
            a = rng.standard_normal(shape, dtype=np.float32)
            a *= np.float32(std)
            a += np.float32(mean)
            f.write(a.tobytes())

        normal((vocab, dim), 0.1)                            # embedding
        normal((layers, dim), 0.1, 1.0)                      # rms_att
        normal((layers, dim, dim), dim ** -0.5)              # wq
        normal((layers, kvd, dim), dim ** -0.5)              # wk
        normal((layers, kvd, dim), dim ** -0.5)              # wv
        normal((layers, dim, dim), dim ** -0.5 / layers)     # wo
        normal((layers, dim), 0.1, 1.0)                      # rms_ffn
        normal((layers, hidden, dim), dim ** -0.5)           # w1
        normal((layers, dim, hidden), hidden ** -0.5 / layers)  # w2
        normal((layers, hidden, dim), dim ** -0.5)           # w3
        normal((dim,), 0.1, 1.0)                             # rms_final
        freqs = 1.0 / (10000.0 ** (np.arange(0, hd, 2)[: hd // 2] / hd))
        ang = np.outer(np.arange(seq_len), freqs)
        f.write(np.cos(ang).astype(np.float32).tobytes())
        f.write(np.sin(ang).astype(np.float32).tobytes())
        if not shared_classifier:
            normal((vocab, dim), 0.1)                        # classifier
    os.replace(tmp, path)
    return hidden
