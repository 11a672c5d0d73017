#!/usr/bin/env python3
"""Compares `tra-llama tokenize` with SentencePiece (python3-sentencepiece)
on the LLaMA 2 vocabulary, for encoding and decoding.

    tokenizer_check.py TRA_LLAMA TOKENIZER.bin TOKENIZER.model
"""
import subprocess
import sys

import sentencepiece as spm

TEXTS = [
    "Hello world!",
    "Once upon a time, there was a little girl named Lily.",
    "  leading spaces and trailing   ",
    "tabs\tand\nnewlines\n\n",
    "Ünïcödé 日本語 — emoji 🦙 and math ∑x²",
    "numbers 1234567890 and punctuation: (a+b)*[c/d]{e}!?",
    "a",
    "",
]


def run(tool, tok, *args):
    out = subprocess.run([tool, "tokenize", "--tokenizer", tok, *args],
                         check=True, capture_output=True, text=True).stdout
    return out[:-1]  # the tool ends its output with one newline


def main():
    tool, tok, model = sys.argv[1:]
    sp = spm.SentencePieceProcessor(model_file=model)
    bad = 0
    for t in TEXTS:
        want = [1] + sp.encode(t)
        got = [int(x) for x in run(tool, tok, "--", t).split()]
        if got != want:
            print(f"ENCODE MISMATCH {t!r}: got {got}, want {want}")
            bad += 1
        text = run(tool, tok, "--decode", "--", " ".join(map(str, want)))
        if text != sp.decode(want[1:]):
            print(f"DECODE MISMATCH {t!r}: got {text!r}, want {sp.decode(want[1:])!r}")
            bad += 1
    print(f"{len(TEXTS)} texts, {bad} mismatches")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
