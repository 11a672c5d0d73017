#!/usr/bin/env python3
"""Converts a Meta checkpoint directory into a Hugging Face LLaMA directory
(config.json + model.safetensors), as transformers'
convert_llama_weights_to_hf.py does: HF names, and the rows of wq/wk permuted
per head for HF's rotate_half rotary convention.

    make_hf_checkpoint.py META_DIR HF_DIR [--shards N]

With --shards N the weights go to N files listed by
model.safetensors.index.json. The safetensors files are written by hand.
"""
import json
import os
import re
import struct
import sys

import torch

SPLIT_DIM0 = ('attention.wq.weight', 'attention.wk.weight',
              'attention.wv.weight', 'feed_forward.w1.weight',
              'feed_forward.w3.weight', 'output.weight')
SPLIT_DIM1 = ('attention.wo.weight', 'feed_forward.w2.weight',
              'tok_embeddings.weight')
LAYER = {'attention.wq.weight': 'self_attn.q_proj.weight',
         'attention.wk.weight': 'self_attn.k_proj.weight',
         'attention.wv.weight': 'self_attn.v_proj.weight',
         'attention.wo.weight': 'self_attn.o_proj.weight',
         'feed_forward.w1.weight': 'mlp.gate_proj.weight',
         'feed_forward.w2.weight': 'mlp.down_proj.weight',
         'feed_forward.w3.weight': 'mlp.up_proj.weight',
         'attention_norm.weight': 'input_layernorm.weight',
         'ffn_norm.weight': 'post_attention_layernorm.weight'}
DTYPES = {torch.float32: 'F32', torch.float16: 'F16', torch.bfloat16: 'BF16'}


def permute(w, n_heads, dim1, dim2):
    # transformers/models/llama/convert_llama_weights_to_hf.py
    return w.view(n_heads, dim1 // n_heads // 2, 2, dim2).transpose(1, 2).reshape(dim1, dim2)


def write_safetensors(path, tensors):
    header, blobs, offset = {}, [], 0
    for name, t in tensors.items():
        t = t.contiguous()
        raw = (t.view(torch.int16) if t.element_size() == 2 else t).numpy().tobytes()
        header[name] = {'dtype': DTYPES[t.dtype], 'shape': list(t.shape),
                        'data_offsets': [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    text = json.dumps(header).encode()
    text += b' ' * ((8 - len(text) % 8) % 8)
    with open(path, 'wb') as f:
        f.write(struct.pack('<Q', len(text)) + text + b''.join(blobs))


def main():
    args = sys.argv[1:]
    shards = 1
    if '--shards' in args:
        i = args.index('--shards')
        shards = int(args[i + 1])
        del args[i:i + 2]
    meta_dir, hf_dir = args
    params = json.load(open(os.path.join(meta_dir, 'params.json')))
    files = sorted(f for f in os.listdir(meta_dir)
                   if re.fullmatch(r'consolidated\.\d\d\.pth', f))
    parts = [torch.load(os.path.join(meta_dir, f), map_location='cpu') for f in files]
    full = {}
    for name in parts[0]:
        if name == 'rope.freqs':
            continue
        short = name.split('.', 2)[2] if name.startswith('layers.') else name
        if short in SPLIT_DIM0:
            full[name] = torch.cat([p[name] for p in parts], dim=0)
        elif short in SPLIT_DIM1:
            full[name] = torch.cat([p[name] for p in parts], dim=1)
        else:
            full[name] = parts[0][name]
    dim, heads = params['dim'], params['n_heads']
    kv_heads = params.get('n_kv_heads') or heads
    kv_dim = dim // heads * kv_heads
    hf = {}
    for name, t in full.items():
        if name == 'tok_embeddings.weight':
            hf['model.embed_tokens.weight'] = t
        elif name == 'norm.weight':
            hf['model.norm.weight'] = t
        elif name == 'output.weight':
            hf['lm_head.weight'] = t
        else:
            _, layer, rest = name.split('.', 2)
            if rest == 'attention.wq.weight':
                t = permute(t, heads, dim, dim)
            elif rest == 'attention.wk.weight':
                t = permute(t, kv_heads, kv_dim, dim)
            hf['model.layers.%s.%s' % (layer, LAYER[rest])] = t
    vocab = full['tok_embeddings.weight'].shape[0]
    hidden = full['layers.0.feed_forward.w1.weight'].shape[0]
    os.makedirs(hf_dir, exist_ok=True)
    config = {'architectures': ['LlamaForCausalLM'], 'model_type': 'llama',
              'hidden_size': dim, 'intermediate_size': hidden,
              'num_hidden_layers': params['n_layers'],
              'num_attention_heads': heads, 'num_key_value_heads': kv_heads,
              'vocab_size': vocab, 'max_position_embeddings': 2048,
              'rms_norm_eps': params.get('norm_eps', 1e-5),
              'rope_theta': params.get('rope_theta', 10000.0),
              'tie_word_embeddings': 'output.weight' not in full}
    json.dump(config, open(os.path.join(hf_dir, 'config.json'), 'w'), indent=1)
    names = list(hf)
    if shards == 1:
        write_safetensors(os.path.join(hf_dir, 'model.safetensors'), hf)
        return
    weight_map = {}
    for k in range(shards):
        shard = 'model-%05d-of-%05d.safetensors' % (k + 1, shards)
        chunk = names[k::shards]
        write_safetensors(os.path.join(hf_dir, shard), {n: hf[n] for n in chunk})
        weight_map.update({n: shard for n in chunk})
    json.dump({'metadata': {}, 'weight_map': weight_map},
              open(os.path.join(hf_dir, 'model.safetensors.index.json'), 'w'))


if __name__ == '__main__':
    main()
