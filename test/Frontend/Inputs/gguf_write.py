#!/usr/bin/env python3
"""Writes the stories260K model as GGUF files (llama.cpp's format), written
by hand here, for the GGUF tests.

    gguf_write.py MODEL.bin TOKENIZER.bin OUT_DIR

MODEL.bin is a llama2.c checkpoint (stories260K.bin); its weights, in Meta's
layout, are stored as convert-llama2c-to-ggml stores them: unchanged
(llama.cpp's "llama" architecture rotates adjacent pairs, as Meta does), each
matrix with ggml's dimension order (ne = the row-major shape reversed).
TOKENIZER.bin is a llama2.c vocabulary (the LLaMA 2 one); vocab_size of its
pieces (see `vocabulary`) become the GGUF vocabulary (stories260K's own
512-piece vocabulary is not available), with spaces as U+2581 as
SentencePiece writes them.

Written to OUT_DIR:
  f32.gguf f16.gguf bf16.gguf q8_0.gguf   the model, every matrix of that
                                          type (norms F32, as llama.cpp
                                          keeps them; in q8_0.gguf the
                                          ffn_down matrices, whose rows of
                                          172 are not whole Q8_0 blocks,
                                          F16); q8_0.gguf (version 2,
                                          alignment 64) also stores
                                          output.weight, the others share
                                          the embedding
  q8_0-f32.gguf                           q8_0.gguf with F32 ffn_down
                                          matrices (llama-quantize's other
                                          fallback): the 8-bit model
                                          whose activations nothing rounds
  TYPE-full/NAME.npy                      each weight as the file holds it
                                          (16-bit and Q8_0 values decoded
                                          from the written bytes), under
                                          Meta's name, for meta_reference.py
  params.json                             the model's shape, for the same
  tok.bin                                 the vocabulary, llama2.c format
  bad-*.gguf                              damaged variants of f32.gguf, one
                                          problem each (see BAD below)
"""
import json
import os
import struct
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from llama2c_reference import load  # noqa: E402

# GGUF metadata value types and ggml tensor types.
U32, I32, F32V, STRING, ARRAY = 4, 5, 6, 8, 9
F32, F16, Q4_K, Q8_0, BF16 = 0, 1, 12, 8, 30


def gguf_string(s):
    b = s.encode() if isinstance(s, str) else s
    return struct.pack("<Q", len(b)) + b


def gguf_value(kind, value):
    if kind == U32:
        return struct.pack("<I", value)
    if kind == I32:
        return struct.pack("<i", value)
    if kind == F32V:
        return struct.pack("<f", value)
    if kind == STRING:
        return gguf_string(value)
    element, items = value
    return struct.pack("<IQ", element, len(items)) + b"".join(
        gguf_value(element, v) for v in items)


def write_gguf(path, kvs, tensors, version=3, alignment=32):
    """kvs: [(key, type, value)]; tensors: [(name, ggml type, row-major
    shape, bytes)], laid out in order, each padded to the alignment."""
    out = b"GGUF" + struct.pack("<IQQ", version, len(tensors), len(kvs))
    for key, kind, value in kvs:
        out += gguf_string(key) + struct.pack("<I", kind) + gguf_value(kind, value)
    offset, blobs = 0, b""
    for name, kind, shape, raw in tensors:
        ne = list(reversed(shape))
        out += gguf_string(name) + struct.pack("<I", len(ne))
        out += b"".join(struct.pack("<Q", n) for n in ne)
        out += struct.pack("<IQ", kind, offset)
        pad = -len(raw) % alignment
        blobs += raw + bytes(pad)
        offset += len(raw) + pad
    out += bytes(-len(out) % alignment)
    with open(path, "wb") as f:
        f.write(out + blobs)


def to_bf16(a):
    """float32 -> bfloat16 bits, to nearest, ties to even."""
    bits = a.astype(np.float32).view(np.uint32)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    return bits.astype(np.uint16)


def encode(kind, a):
    """Returns (bytes, the values those bytes hold)."""
    a = np.ascontiguousarray(a, dtype=np.float32)
    if kind == F32:
        return a.tobytes(), a
    if kind == F16:
        h = a.astype(np.float16)
        return h.tobytes(), h.astype(np.float32)
    if kind == BF16:
        b = to_bf16(a)
        return b.tobytes(), (b.astype(np.uint32) << 16).view(np.float32).reshape(a.shape)
    # Q8_0: blocks of 32 along the row, an f16 scale amax/127, int8 values.
    blocks = a.reshape(-1, 32)
    amax = np.abs(blocks).max(axis=1)
    d = (amax / 127.0).astype(np.float16)
    inv = np.where(d != 0, 1.0 / np.maximum(d.astype(np.float32), 1e-30), 0.0)
    q = np.clip(np.round(blocks * inv[:, None]), -127, 127).astype(np.int8)
    raw = b"".join(d[i].tobytes() + q[i].tobytes() for i in range(len(q)))
    values = (d.astype(np.float64)[:, None] * q).astype(np.float32)
    return raw, values.reshape(a.shape)


def vocabulary(path, n):
    """n pieces of a llama2.c tokenizer (the LLaMA 2 one), in its order:
    its first 259 (<unk>, BOS, EOS, the 256 bytes), the single characters of
    plain English text, and its first merged pieces made of those, so that
    English encodes with merges. Returns (pieces, scores)."""
    raw = open(path, "rb").read()
    off, vocab = 4, []
    while off < len(raw):
        score, length = struct.unpack_from("<fi", raw, off)
        vocab.append((raw[off + 8:off + 8 + length], score))
        off += 8 + length
    chars = set(b" abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.,!?'")
    single = [i for i, (p, _) in enumerate(vocab) if len(p) == 1 and p[0] in chars]
    merged = [i for i, (p, _) in enumerate(vocab[259:], 259)
              if len(p) > 1 and all(c in chars for c in p)]
    ids = sorted(list(range(259)) + single + merged[:n - 259 - len(single)])
    return [vocab[i][0] for i in ids], [vocab[i][1] for i in ids]


def main():
    model, tokenizer, out = sys.argv[1:4]
    os.makedirs(out, exist_ok=True)
    cfg, w = load(model)
    L = cfg["layers"]

    pieces, scores = vocabulary(tokenizer, cfg["vocab"])
    with open(os.path.join(out, "tok.bin"), "wb") as f:
        f.write(struct.pack("<i", max(len(p) for p in pieces)))
        for p, s in zip(pieces, scores):
            f.write(struct.pack("<fi", s, len(p)) + p)
    # GGUF spells control pieces plainly and spaces as U+2581.
    tokens = [b"<unk>", b"<s>", b"</s>"] + [
        p.replace(b" ", "\u2581".encode()) for p in pieces[3:]]
    types = [2, 3, 3] + [6] * 256 + [1] * (len(tokens) - 259)

    def kvs(**over):
        kv = [("general.architecture", STRING, "llama"),
              ("general.name", STRING, "stories260K"),
              ("llama.context_length", U32, cfg["seq"]),
              ("llama.embedding_length", U32, cfg["dim"]),
              ("llama.feed_forward_length", U32, cfg["hidden"]),
              ("llama.block_count", U32, L),
              ("llama.attention.head_count", U32, cfg["heads"]),
              ("llama.attention.head_count_kv", U32, cfg["kv_heads"]),
              ("llama.rope.dimension_count", U32, cfg["hd"]),
              ("llama.rope.freq_base", F32V, 10000.0),
              ("llama.attention.layer_norm_rms_epsilon", F32V, 1e-5),
              ("tokenizer.ggml.model", STRING, "llama"),
              ("tokenizer.ggml.tokens", ARRAY, (STRING, tokens)),
              ("tokenizer.ggml.scores", ARRAY, (F32V, scores)),
              ("tokenizer.ggml.token_type", ARRAY, (I32, types)),
              ("tokenizer.ggml.bos_token_id", U32, 1),
              ("tokenizer.ggml.eos_token_id", U32, 2)]
        kv = [(k, *over.pop(k)) if k in over else (k, t, v) for k, t, v in kv]
        return kv + [(k, t, v) for k, (t, v) in over.items()]

    # (GGUF name, Meta name, weight)
    weights = [("token_embd.weight", "tok_embeddings.weight", w["emb"])]
    for l in range(L):
        for g, m, k in [("attn_norm", "attention_norm", "rms_att"),
                        ("attn_q", "attention.wq", "wq"),
                        ("attn_k", "attention.wk", "wk"),
                        ("attn_v", "attention.wv", "wv"),
                        ("attn_output", "attention.wo", "wo"),
                        ("ffn_norm", "ffn_norm", "rms_ffn"),
                        ("ffn_gate", "feed_forward.w1", "w1"),
                        ("ffn_down", "feed_forward.w2", "w2"),
                        ("ffn_up", "feed_forward.w3", "w3")]:
            weights.append((f"blk.{l}.{g}.weight", f"layers.{l}.{m}.weight", w[k][l]))
    weights.append(("output_norm.weight", "norm.weight", w["rms_final"]))

    json.dump({"dim": cfg["dim"], "n_layers": L, "n_heads": cfg["heads"],
               "n_kv_heads": cfg["kv_heads"], "vocab_size": cfg["vocab"],
               "norm_eps": 1e-5}, open(os.path.join(out, "params.json"), "w"))

    def build(kind, with_output, fallback=F16, name=None):
        name = name or {F32: "f32", F16: "f16", BF16: "bf16", Q8_0: "q8_0"}[kind]
        full = os.path.join(out, name + "-full")
        os.makedirs(full, exist_ok=True)
        listed = weights + ([("output.weight", "output.weight", w["cls"])] if with_output else [])
        tensors = []
        for gname, mname, a in listed:
            t = kind if a.ndim == 2 else F32
            if t == Q8_0 and a.shape[1] % 32:
                t = fallback  # as llama-quantize falls back for ffn_down (172)
            raw, values = encode(t, a)
            np.save(os.path.join(full, mname + ".npy"), values)
            tensors.append((gname, t, list(a.shape), raw))
        return tensors

    f32 = build(F32, False)
    write_gguf(os.path.join(out, "f32.gguf"), kvs(), f32)
    write_gguf(os.path.join(out, "f16.gguf"), kvs(), build(F16, False))
    write_gguf(os.path.join(out, "bf16.gguf"), kvs(), build(BF16, False))
    write_gguf(os.path.join(out, "q8_0.gguf"),
               kvs(**{"general.alignment": (U32, 64)}),
               build(Q8_0, True), version=2, alignment=64)
    write_gguf(os.path.join(out, "q8_0-f32.gguf"), kvs(),
               build(Q8_0, True, fallback=F32, name="q8_0-f32"))

    # BAD: one problem each.
    def bad(name, kv=None, tensors=None, version=3):
        write_gguf(os.path.join(out, f"bad-{name}.gguf"),
                   kv if kv is not None else kvs(),
                   tensors if tensors is not None else f32, version=version)
    bad("version", version=1)
    bad("arch", kv=kvs(**{"general.architecture": (STRING, "qwen2")}))
    bad("missing", tensors=[t for t in f32 if t[0] != "blk.2.ffn_up.weight"])
    q4 = [(n, Q4_K if n == "blk.0.attn_q.weight" else k, s, r) for n, k, s, r in f32]
    bad("q4k", tensors=q4)
    bad("vocab", kv=kvs(**{"tokenizer.ggml.tokens": (ARRAY, (STRING, tokens[:300])),
                           "tokenizer.ggml.scores": (ARRAY, (F32V, scores[:300])),
                           "tokenizer.ggml.token_type": (ARRAY, (I32, types[:300]))}))
    bad("shape", kv=kvs(**{"llama.feed_forward_length": (U32, cfg["hidden"] + 4)}))
    bad("nokey", kv=[kv for kv in kvs() if kv[0] != "llama.block_count"])
    bad("gpt2", kv=kvs(**{"tokenizer.ggml.model": (STRING, "gpt2")}))


if __name__ == "__main__":
    main()
