"""Writes a random-weight LLaMA checkpoint in llama2.c's v0 format (fixed
seed; bench/llama2c.py's writer), for tests that need a model larger than
stories260K.

    random_llama2c.py OUT.bin DIM LAYERS VOCAB SEQ_LEN

DIM / 64 heads, as many KV heads, Meta's FFN size, a shared classifier.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "bench"))
import llama2c  # noqa: E402


def main():
    if len(sys.argv) != 6:
        sys.exit(__doc__)
    out = sys.argv[1]
    dim, layers, vocab, seq_len = map(int, sys.argv[2:])
    llama2c.write_random_llama2c(out, dim=dim, layers=layers, heads=dim // 64,
                                 kv_heads=dim // 64, vocab=vocab,
                                 seq_len=seq_len, seed=3)


if __name__ == "__main__":
    main()
