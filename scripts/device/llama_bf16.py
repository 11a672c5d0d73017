#!/usr/bin/env python3
"""The bf16 LLaMA of the GPU check's performance part (scripts/device-check.sh):
a random model of the 1B-parameter class (TinyLlama-1.1B's shape: dim 2048,
22 layers, 32 heads, 4 KV heads, FFN 5632, vocab 32000), its checkpoint, and
PyTorch eager's prefill and decode on the same weights, for the ratios.

    llama_bf16.py hf-sparse DIR      config.json + model.safetensors whose
                                     tensor bytes are a hole (a sparse file,
                                     no disk): enough to compile the steps
                                     (they depend on the shapes and dtypes)
    llama_bf16.py meta DIR [SEED]    params.json + consolidated.00.pth with
                                     random bf16 weights (needs PyTorch; on
                                     the GPU machine, about 2.2 GB)
    llama_bf16.py torch DIR PROMPT DECODE OUT.json
                                     PyTorch eager on the GPU, bf16, a KV
                                     cache: one prefill of PROMPT tokens,
                                     DECODE greedy tokens, timed after a
                                     warm-up, and the device's copy bandwidth

LLAMA_BF16_DEVICE=cpu runs PyTorch on the CPU, and LLAMA_BF16_TINY=1 makes
the model tiny (dim 64, 2 layers): a smoke test of this script where there
is no GPU.
"""
import json
import os
import struct
import sys
import time

CONFIG = dict(dim=2048, n_layers=22, n_heads=32, n_kv_heads=4,
              vocab_size=32000, multiple_of=256, norm_eps=1e-5,
              rope_theta=10000.0, max_seq_len=1024)
HIDDEN = 5632  # Meta's rule: 2/3 of 4 * dim rounded up to multiple_of
if os.environ.get("LLAMA_BF16_TINY") == "1":
    CONFIG.update(dim=64, n_layers=2, n_heads=8, n_kv_heads=2, vocab_size=96,
                  multiple_of=32, max_seq_len=64)
    HIDDEN = 192
DEVICE = os.environ.get("LLAMA_BF16_DEVICE", "cuda")


def synchronize():
    import torch
    if DEVICE == "cuda":
        torch.cuda.synchronize()


def shapes():
    """Meta names and shapes, in the order of Meta's state_dict."""
    d, hd = CONFIG["dim"], CONFIG["dim"] // CONFIG["n_heads"]
    kv = CONFIG["n_kv_heads"] * hd
    out = [("tok_embeddings.weight", (CONFIG["vocab_size"], d))]
    for l in range(CONFIG["n_layers"]):
        p = f"layers.{l}."
        out += [(p + "attention.wq.weight", (d, d)),
                (p + "attention.wk.weight", (kv, d)),
                (p + "attention.wv.weight", (kv, d)),
                (p + "attention.wo.weight", (d, d)),
                (p + "feed_forward.w1.weight", (HIDDEN, d)),
                (p + "feed_forward.w2.weight", (d, HIDDEN)),
                (p + "feed_forward.w3.weight", (HIDDEN, d)),
                (p + "attention_norm.weight", (d,)),
                (p + "ffn_norm.weight", (d,))]
    out += [("norm.weight", (d,)), ("output.weight", (CONFIG["vocab_size"], d))]
    return out


HF_LAYER = {"attention.wq.weight": "self_attn.q_proj.weight",
            "attention.wk.weight": "self_attn.k_proj.weight",
            "attention.wv.weight": "self_attn.v_proj.weight",
            "attention.wo.weight": "self_attn.o_proj.weight",
            "feed_forward.w1.weight": "mlp.gate_proj.weight",
            "feed_forward.w2.weight": "mlp.down_proj.weight",
            "feed_forward.w3.weight": "mlp.up_proj.weight",
            "attention_norm.weight": "input_layernorm.weight",
            "ffn_norm.weight": "post_attention_layernorm.weight"}


def hf_name(name):
    if name == "tok_embeddings.weight":
        return "model.embed_tokens.weight"
    if name == "norm.weight":
        return "model.norm.weight"
    if name == "output.weight":
        return "lm_head.weight"
    _, layer, rest = name.split(".", 2)
    return f"model.layers.{layer}.{HF_LAYER[rest]}"


def write_hf_sparse(out):
    os.makedirs(out, exist_ok=True)
    config = {"architectures": ["LlamaForCausalLM"], "model_type": "llama",
              "hidden_size": CONFIG["dim"], "intermediate_size": HIDDEN,
              "num_hidden_layers": CONFIG["n_layers"],
              "num_attention_heads": CONFIG["n_heads"],
              "num_key_value_heads": CONFIG["n_kv_heads"],
              "vocab_size": CONFIG["vocab_size"],
              "max_position_embeddings": CONFIG["max_seq_len"],
              "rms_norm_eps": CONFIG["norm_eps"], "rope_theta": CONFIG["rope_theta"],
              "tie_word_embeddings": False, "torch_dtype": "bfloat16"}
    json.dump(config, open(os.path.join(out, "config.json"), "w"), indent=1)
    header, offset = {}, 0
    for name, shape in shapes():
        size = 2
        for n in shape:
            size *= n
        header[hf_name(name)] = {"dtype": "BF16", "shape": list(shape),
                                 "data_offsets": [offset, offset + size]}
        offset += size
    text = json.dumps(header).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(os.path.join(out, "model.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        f.truncate(8 + len(text) + offset)
    print(f"{out}: {offset / 2**30:.2f} GiB of bf16 weights (a hole)")


def write_meta(out, seed):
    import torch
    os.makedirs(out, exist_ok=True)
    gen = torch.Generator(device=DEVICE).manual_seed(seed)
    state = {}
    for name, shape in shapes():
        if len(shape) == 1:
            t = 1.0 + 0.1 * torch.randn(shape, generator=gen, device=DEVICE)
        else:
            t = 0.02 * torch.randn(shape, generator=gen, device=DEVICE)
        state[name] = t.to(torch.bfloat16).cpu()
    torch.save(state, os.path.join(out, "consolidated.00.pth"))
    params = {k: v for k, v in CONFIG.items()}
    json.dump(params, open(os.path.join(out, "params.json"), "w"))
    total = sum(t.numel() for t in state.values())
    print(f"{out}: {total / 1e9:.2f} B parameters, bf16")


def torch_bench(ckpt, prompt_len, decode, out):
    """Meta's model in PyTorch eager, bf16 (as model.py runs it)."""
    import torch
    torch.manual_seed(0)
    dev = DEVICE
    w = {k: v.to(dev) for k, v in torch.load(
        os.path.join(ckpt, "consolidated.00.pth"), map_location="cpu").items()}
    d, nh, nkv = CONFIG["dim"], CONFIG["n_heads"], CONFIG["n_kv_heads"]
    hd, L, T = d // nh, CONFIG["n_layers"], CONFIG["max_seq_len"]
    freqs = 1.0 / (CONFIG["rope_theta"] ** (torch.arange(0, hd, 2, device=dev).float() / hd))
    angles = torch.outer(torch.arange(T, device=dev).float(), freqs)
    cis = torch.polar(torch.ones_like(angles), angles)
    kc = torch.zeros(L, 1, T, nkv, hd, device=dev, dtype=torch.bfloat16)
    vc = torch.zeros_like(kc)

    def rms(x, g):
        x32 = x.float()
        return (x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + CONFIG["norm_eps"])).type_as(x) * g

    def rope(x, pos):
        xc = torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2))
        f = cis[pos:pos + x.shape[1]].view(1, x.shape[1], 1, -1)
        return torch.view_as_real(xc * f).flatten(3).type_as(x)

    @torch.inference_mode()
    def forward(tokens, pos):
        s = tokens.shape[1]
        x = w["tok_embeddings.weight"][tokens]
        mask = None
        if s > 1:
            mask = torch.full((s, pos + s), float("-inf"), device=dev).triu(pos + 1)
        for l in range(L):
            p = f"layers.{l}."
            xn = rms(x, w[p + "attention_norm.weight"])
            q = (xn @ w[p + "attention.wq.weight"].T).view(1, s, nh, hd)
            k = (xn @ w[p + "attention.wk.weight"].T).view(1, s, nkv, hd)
            v = (xn @ w[p + "attention.wv.weight"].T).view(1, s, nkv, hd)
            q, k = rope(q, pos), rope(k, pos)
            kc[l, :, pos:pos + s], vc[l, :, pos:pos + s] = k, v
            keys = kc[l, :, :pos + s].repeat_interleave(nh // nkv, dim=2)
            vals = vc[l, :, :pos + s].repeat_interleave(nh // nkv, dim=2)
            scores = (q.transpose(1, 2) @ keys.transpose(1, 2).transpose(2, 3)) / hd ** 0.5
            if mask is not None:
                scores = scores + mask
            probs = torch.softmax(scores.float(), dim=-1).type_as(q)
            o = (probs @ vals.transpose(1, 2)).transpose(1, 2).reshape(1, s, d)
            x = x + o @ w[p + "attention.wo.weight"].T
            hn = rms(x, w[p + "ffn_norm.weight"])
            a = hn @ w[p + "feed_forward.w1.weight"].T
            b = hn @ w[p + "feed_forward.w3.weight"].T
            x = x + (torch.nn.functional.silu(a) * b) @ w[p + "feed_forward.w2.weight"].T
        return rms(x, w["norm.weight"]) @ w["output.weight"].T

    prompt = torch.tensor([[1] + [(7 * i + 3) % CONFIG["vocab_size"] for i in range(1, prompt_len)]],
                          device=dev)

    def generate():
        synchronize()
        t0 = time.perf_counter()
        logits = forward(prompt, 0)
        synchronize()
        t1 = time.perf_counter()
        ids, tok = [], int(logits[0, -1].argmax())
        for i in range(decode):
            ids.append(tok)
            logits = forward(torch.tensor([[tok]], device=dev), prompt_len + i)
            tok = int(logits[0, -1].argmax())
        synchronize()
        return t1 - t0, time.perf_counter() - t1, ids

    generate()  # warm-up
    prefill_s, decode_s, ids = generate()
    # The device's copy bandwidth: 1 GiB read and written, best of 10.
    a = torch.empty(2**29 if DEVICE == "cuda" else 2**24, dtype=torch.bfloat16, device=dev)
    b = torch.empty_like(a)
    best = float("inf")
    for _ in range(10):
        synchronize()
        t = time.perf_counter()
        b.copy_(a)
        synchronize()
        best = min(best, time.perf_counter() - t)
    weights = sum(t.numel() * t.element_size() for t in w.values())
    result = {"prefill_tokens_per_s": prompt_len / prefill_s,
              "decode_tokens_per_s": decode / decode_s, "ids": ids,
              "copy_bytes_per_s": 2 * a.numel() * a.element_size() / best,
              "weight_bytes": weights}
    json.dump(result, open(out, "w"))
    print(json.dumps({k: v for k, v in result.items() if k != "ids"}))


def main():
    cmd = sys.argv[1] if len(sys.argv) > 1 else ""
    if cmd == "hf-sparse" and len(sys.argv) == 3:
        write_hf_sparse(sys.argv[2])
    elif cmd == "meta" and len(sys.argv) in (3, 4):
        write_meta(sys.argv[2], int(sys.argv[3]) if len(sys.argv) == 4 else 0)
    elif cmd == "torch" and len(sys.argv) == 6:
        torch_bench(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
