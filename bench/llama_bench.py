#!/usr/bin/env python3
"""LLaMA generation speed: tra-llama (compiled, in process) against a PyTorch
eager implementation of the same model (Meta's model.py: KV cache, rotary
embeddings, grouped-query attention), both fp32 on the same thread count.

    /usr/bin/python3 bench/llama_bench.py [--build BUILD] [--rounds 3]
        [--prefill 128] [--decode 64] [--threads 2] [--max-seq-len 256]
        [--models stories260k,random512]

Models: stories260K (../shared/models/stories260K.bin) and a random-weight
LLaMA with dim 512, 8 layers, 8 heads, vocab 32000 (hidden 1376, shared
classifier), written as a llama2.c checkpoint into a temporary directory.

For each model and round, both engines run a prefill of --prefill tokens
(BOS and random ids, one step) and then --decode greedy decoding steps;
tra-llama reports its own timings (--bench-json: the steps only, not the
process start or the checkpoint load), the PyTorch times are measured the
same way around its forward calls. The first tra-llama run of a model
compiles @forward (into a private cache directory) and is not timed; later
runs load the cached library. Rounds alternate tra and PyTorch; the best
round of each is compared and every round is printed, so the spread is
visible. The two engines' logits of the first round are compared (max abs
difference). Ratios are printed, never asserted.

Both engines are timed warm: PyTorch's rounds run in this process after
its warm-up generation, and each tra-llama round runs with --warmup (the
prompt and one decoding step once, untimed, in the same process). The
first prefill of a process, cold (thread pools started, BLAS buffers and
code paged in by that first call), is printed too: tra-llama's warm-up
prefill of each round against PyTorch's warm-up generation.
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from llama2c import write_random_llama2c

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODELS = os.path.join(os.path.dirname(ROOT), "shared", "models")


# --------------------------------------------------------------------------
# llama2.c checkpoints
# --------------------------------------------------------------------------

def read_llama2c(path):
    raw = np.fromfile(path, dtype=np.uint8)
    dim, hidden, layers, heads, kv_heads, vocab, seq = map(
        int, raw[:28].view(np.int32))
    shared = vocab > 0
    vocab = abs(vocab)
    hd = dim // heads
    f = raw[28:].view(np.float32)
    off = 0

    def take(*shape):
        nonlocal off
        n = int(np.prod(shape))
        a = f[off:off + n].reshape(shape)
        off += n
        return torch.from_numpy(a.copy())

    w = {"emb": take(vocab, dim), "rms_att": take(layers, dim),
         "wq": take(layers, dim, dim), "wk": take(layers, kv_heads * hd, dim),
         "wv": take(layers, kv_heads * hd, dim), "wo": take(layers, dim, dim),
         "rms_ffn": take(layers, dim), "w1": take(layers, hidden, dim),
         "w2": take(layers, dim, hidden), "w3": take(layers, hidden, dim),
         "rms_final": take(dim)}
    take(seq, hd // 2)
    take(seq, hd // 2)
    w["cls"] = w["emb"] if shared else take(vocab, dim)
    cfg = dict(dim=dim, hidden=hidden, layers=layers, heads=heads,
               kv_heads=kv_heads, vocab=vocab, seq=seq)
    return cfg, w


# --------------------------------------------------------------------------
# PyTorch eager model, following Meta's llama/model.py
# --------------------------------------------------------------------------

class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def _norm(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)

    def forward(self, x):
        return self._norm(x.float()).type_as(x) * self.weight


def precompute_freqs_cis(dim, end, theta=10000.0):
    freqs = 1.0 / (theta ** (torch.arange(0, dim, 2)[: (dim // 2)].float()
                             / dim))
    t = torch.arange(end, device=freqs.device)
    freqs = torch.outer(t, freqs).float()
    return torch.polar(torch.ones_like(freqs), freqs)


def reshape_for_broadcast(freqs_cis, x):
    ndim = x.ndim
    shape = [d if i == 1 or i == ndim - 1 else 1
             for i, d in enumerate(x.shape)]
    return freqs_cis.view(*shape)


def apply_rotary_emb(xq, xk, freqs_cis):
    xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
    xk_ = torch.view_as_complex(xk.float().reshape(*xk.shape[:-1], -1, 2))
    freqs_cis = reshape_for_broadcast(freqs_cis, xq_)
    xq_out = torch.view_as_real(xq_ * freqs_cis).flatten(3)
    xk_out = torch.view_as_real(xk_ * freqs_cis).flatten(3)
    return xq_out.type_as(xq), xk_out.type_as(xk)


def repeat_kv(x, n_rep):
    bs, slen, n_kv_heads, head_dim = x.shape
    if n_rep == 1:
        return x
    return (x[:, :, :, None, :]
            .expand(bs, slen, n_kv_heads, n_rep, head_dim)
            .reshape(bs, slen, n_kv_heads * n_rep, head_dim))


class Attention(nn.Module):
    def __init__(self, cfg, max_seq_len):
        super().__init__()
        self.n_kv_heads = cfg["kv_heads"]
        self.n_heads = cfg["heads"]
        self.n_rep = self.n_heads // self.n_kv_heads
        self.head_dim = cfg["dim"] // cfg["heads"]
        dim = cfg["dim"]
        self.wq = nn.Linear(dim, self.n_heads * self.head_dim, bias=False)
        self.wk = nn.Linear(dim, self.n_kv_heads * self.head_dim, bias=False)
        self.wv = nn.Linear(dim, self.n_kv_heads * self.head_dim, bias=False)
        self.wo = nn.Linear(self.n_heads * self.head_dim, dim, bias=False)
        self.cache_k = torch.zeros(1, max_seq_len, self.n_kv_heads,
                                   self.head_dim)
        self.cache_v = torch.zeros(1, max_seq_len, self.n_kv_heads,
                                   self.head_dim)

    def forward(self, x, start_pos, freqs_cis, mask):
        bsz, seqlen, _ = x.shape
        xq, xk, xv = self.wq(x), self.wk(x), self.wv(x)
        xq = xq.view(bsz, seqlen, self.n_heads, self.head_dim)
        xk = xk.view(bsz, seqlen, self.n_kv_heads, self.head_dim)
        xv = xv.view(bsz, seqlen, self.n_kv_heads, self.head_dim)
        xq, xk = apply_rotary_emb(xq, xk, freqs_cis=freqs_cis)
        self.cache_k[:bsz, start_pos: start_pos + seqlen] = xk
        self.cache_v[:bsz, start_pos: start_pos + seqlen] = xv
        keys = self.cache_k[:bsz, : start_pos + seqlen]
        values = self.cache_v[:bsz, : start_pos + seqlen]
        keys = repeat_kv(keys, self.n_rep)
        values = repeat_kv(values, self.n_rep)
        xq = xq.transpose(1, 2)
        keys = keys.transpose(1, 2)
        values = values.transpose(1, 2)
        scores = torch.matmul(xq, keys.transpose(2, 3)) / math.sqrt(
            self.head_dim)
        if mask is not None:
            scores = scores + mask
        scores = F.softmax(scores.float(), dim=-1).type_as(xq)
        output = torch.matmul(scores, values)
        output = output.transpose(1, 2).contiguous().view(bsz, seqlen, -1)
        return self.wo(output)


class FeedForward(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.w1 = nn.Linear(dim, hidden, bias=False)
        self.w2 = nn.Linear(hidden, dim, bias=False)
        self.w3 = nn.Linear(dim, hidden, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class TransformerBlock(nn.Module):
    def __init__(self, cfg, max_seq_len):
        super().__init__()
        self.attention = Attention(cfg, max_seq_len)
        self.feed_forward = FeedForward(cfg["dim"], cfg["hidden"])
        self.attention_norm = RMSNorm(cfg["dim"])
        self.ffn_norm = RMSNorm(cfg["dim"])

    def forward(self, x, start_pos, freqs_cis, mask):
        h = x + self.attention(self.attention_norm(x), start_pos, freqs_cis,
                               mask)
        return h + self.feed_forward(self.ffn_norm(h))


class Transformer(nn.Module):
    def __init__(self, cfg, max_seq_len):
        super().__init__()
        self.tok_embeddings = nn.Embedding(cfg["vocab"], cfg["dim"])
        self.layers = nn.ModuleList(
            TransformerBlock(cfg, max_seq_len) for _ in range(cfg["layers"]))
        self.norm = RMSNorm(cfg["dim"])
        self.output = nn.Linear(cfg["dim"], cfg["vocab"], bias=False)
        self.freqs_cis = precompute_freqs_cis(cfg["dim"] // cfg["heads"],
                                              max_seq_len * 2)

    @torch.inference_mode()
    def forward(self, tokens, start_pos):
        _bsz, seqlen = tokens.shape
        h = self.tok_embeddings(tokens)
        freqs_cis = self.freqs_cis[start_pos: start_pos + seqlen]
        mask = None
        if seqlen > 1:
            mask = torch.full((seqlen, seqlen), float("-inf"))
            mask = torch.triu(mask, diagonal=1)
            mask = torch.hstack([torch.zeros((seqlen, start_pos)),
                                 mask]).type_as(h)
        for layer in self.layers:
            h = layer(h, start_pos, freqs_cis, mask)
        h = self.norm(h)
        return self.output(h).float()


def build_torch_model(path, max_seq_len):
    cfg, w = read_llama2c(path)
    model = Transformer(cfg, max_seq_len)
    with torch.no_grad():
        model.tok_embeddings.weight.copy_(w["emb"])
        model.output.weight.copy_(w["cls"])
        model.norm.weight.copy_(w["rms_final"])
        for l, layer in enumerate(model.layers):
            a, ff = layer.attention, layer.feed_forward
            layer.attention_norm.weight.copy_(w["rms_att"][l])
            layer.ffn_norm.weight.copy_(w["rms_ffn"][l])
            for name, mod in (("wq", a.wq), ("wk", a.wk), ("wv", a.wv),
                              ("wo", a.wo), ("w1", ff.w1), ("w2", ff.w2),
                              ("w3", ff.w3)):
                mod.weight.copy_(w[name][l])
    model.eval()
    return cfg, model


def torch_generate(model, prompt, decode):
    """Greedy generation; returns (prefill s, decode s, logits rows)."""
    for layer in model.layers:
        layer.attention.cache_k.zero_()
        layer.attention.cache_v.zero_()
    with torch.no_grad():
        tokens = torch.tensor([prompt], dtype=torch.long)
        t0 = time.perf_counter()
        logits = model(tokens, 0)
        nxt = int(torch.argmax(logits[0, -1]))
        t1 = time.perf_counter()
        rows = [logits[0]]
        pos = len(prompt)
        for _ in range(decode):
            logits = model(torch.tensor([[nxt]], dtype=torch.long), pos)
            nxt = int(torch.argmax(logits[0, -1]))
            rows.append(logits[0])
            pos += 1
        t2 = time.perf_counter()
    return t1 - t0, t2 - t1, torch.cat(rows).numpy()


# --------------------------------------------------------------------------
# tra-llama
# --------------------------------------------------------------------------

def tra_generate(exe, checkpoint, prompt, decode, threads, max_seq_len,
                 cache, work, logits=None, warmup=False):
    out = os.path.join(work, "bench.json")
    cmd = [exe, "run", "--checkpoint", checkpoint, "--hw", "local",
           "--num-threads", str(threads), "--max-seq-len", str(max_seq_len),
           "--prompt-ids", ",".join(map(str, prompt)),
           "--steps", str(len(prompt) + decode), "--cache-dir", cache,
           "--bench-json", out]
    if logits:
        cmd += ["--logits-out", logits]
    if warmup:
        cmd.append("--warmup")
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True)
    if proc.returncode != 0:
        sys.exit(f"tra-llama failed ({proc.returncode}):\n{proc.stderr}")
    with open(out) as f:
        result = json.load(f)
    return result, proc.stderr


def bench_model(name, checkpoint, args, exe, work):
    torch.manual_seed(0)
    cfg, model = build_torch_model(checkpoint, args.max_seq_len)
    params = sum(p.numel() for p in model.parameters()) - (
        model.output.weight.numel())  # the classifier is the embedding
    rng = np.random.default_rng(1)
    prompt = [1] + [int(t) for t in
                    rng.integers(3, cfg["vocab"], args.prefill - 1)]
    cache = os.path.join(work, "cache-" + name)
    logits_path = os.path.join(work, name + "-logits.npy")

    print(f"\n== {name}: dim {cfg['dim']}, {cfg['layers']} layers, "
          f"{cfg['heads']} heads ({cfg['kv_heads']} KV), vocab "
          f"{cfg['vocab']}, {params / 1e6:.2f}M parameters; prefill "
          f"{args.prefill} tokens, decode {args.decode} tokens, "
          f"max_seq_len {args.max_seq_len}, {args.threads} threads")
    # Warm-up: tra compiles (and caches) @forward for 1 and for
    # --prefill tokens per step; PyTorch runs once.
    t = time.perf_counter()
    first, log = tra_generate(exe, checkpoint, prompt, args.decode,
                              args.threads, args.max_seq_len, cache, work,
                              logits_path)
    print(f"tra-llama first run (compiles): {time.perf_counter() - t:.1f} s, "
          f"compile {first['compile_seconds']:.1f} s")
    pt_cold, _, ref_logits = torch_generate(model, prompt, args.decode)
    got = np.load(logits_path)
    err = float(np.max(np.abs(got - ref_logits)))
    scale = float(np.max(np.abs(ref_logits)))
    same_ids = bool(np.array_equal(np.argmax(got, 1),
                                   np.argmax(ref_logits, 1)))
    print(f"logits tra vs PyTorch: max abs difference {err:.2e} (logits "
          f"up to {scale:.1f}); greedy ids "
          f"{'identical' if same_ids else 'DIFFER'}")

    tra_pf, tra_dec, pt_pf, pt_dec, tra_cold = [], [], [], [], []
    for _ in range(args.rounds):
        r, log = tra_generate(exe, checkpoint, prompt, args.decode,
                              args.threads, args.max_seq_len, cache, work,
                              warmup=True)
        if r["compiled_now"]:
            print("warning: tra-llama compiled again (cache miss):\n" + log)
        tra_pf.append(r["prefill_tokens_per_s"])
        tra_dec.append(r["decode_tokens_per_s"])
        tra_cold.append(r["warmup_prefill_tokens_per_s"])
        pf, dec, _ = torch_generate(model, prompt, args.decode)
        pt_pf.append(args.prefill / pf)
        pt_dec.append(args.decode / dec)

    def fmt(values):
        return ", ".join(f"{v:.0f}" for v in values)

    print(f"prefill tokens/s  tra {fmt(tra_pf)}  |  PyTorch {fmt(pt_pf)}")
    print(f"decode  tokens/s  tra {fmt(tra_dec)}  |  PyTorch {fmt(pt_dec)}")
    print(f"first prefill of a process (cold) tokens/s  tra "
          f"{fmt(tra_cold)}  |  PyTorch {args.prefill / pt_cold:.0f}")
    pf_ratio = max(tra_pf) / max(pt_pf)
    dec_ratio = max(tra_dec) / max(pt_dec)
    print(f"{name}: prefill tra/PyTorch {pf_ratio:.2f}x (best of "
          f"{args.rounds}; target >= 1.0x), decode tra/PyTorch "
          f"{dec_ratio:.2f}x (target >= 1.5x)")
    return pf_ratio, dec_ratio


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--prefill", type=int, default=128)
    parser.add_argument("--decode", type=int, default=64)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--max-seq-len", type=int, default=256)
    parser.add_argument("--models", default="stories260k,random512")
    args = parser.parse_args()
    if args.prefill < 2 or args.prefill + args.decode > args.max_seq_len:
        sys.exit("need 2 <= --prefill and --prefill + --decode <= "
                 "--max-seq-len")
    exe = os.path.join(args.build, "bin", "tra-llama")
    if not os.path.exists(exe):
        sys.exit(f"{exe} not found (--build BUILD)")
    torch.set_num_threads(args.threads)
    results = {}
    with tempfile.TemporaryDirectory(prefix="tra-llama-bench-") as work:
        for name in args.models.split(","):
            if name == "stories260k":
                path = os.path.join(MODELS, "stories260K.bin")
            elif name == "random512":
                path = os.path.join(work, "random512.bin")
                write_random_llama2c(path, seq_len=max(1024,
                                                       args.max_seq_len))
            else:
                sys.exit(f"unknown model {name}")
            results[name] = bench_model(name, path, args, exe, work)
    print("\nsummary (tra / PyTorch tokens/s, best rounds):")
    for name, (pf, dec) in results.items():
        print(f"  {name:12s} prefill {pf:.2f}x  decode {dec:.2f}x")


if __name__ == "__main__":
    main()
