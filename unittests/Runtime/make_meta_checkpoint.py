#!/usr/bin/env python3
"""Writes random-weight LLaMA checkpoints in Meta's layout, for tests.

    make_meta_checkpoint.py SPEC.json

SPEC.json holds one checkpoint spec or a list of them (one Python start and
one `import torch` for many checkpoints). A spec:

    {"dir": "out/ckpt",        # created; gets params.json + consolidated.NN.pth
     "dim": 64, "n_layers": 2, "n_heads": 8,
     "n_kv_heads": 4,          # optional; omitted from params.json if null
     "vocab_size": 96,         # the real vocabulary size
     "params_vocab_size": -1,  # optional: what params.json says (default: vocab_size)
     "multiple_of": 32, "ffn_dim_multiplier": null, "norm_eps": 1e-5,
     "rope_theta": null,       # optional; omitted if null
     "mp": 2,                  # number of shards (need not divide the dims:
                               #  uneven splits are written with tensor_split)
     "dtype": "float16",       # float16 | bfloat16 | float32
     "seed": 0,
     "rope_freqs": false,      # add LLaMA 1's 'rope.freqs' to every shard
     "shared_output": false,   # leave out output.weight
     "full_dir": "out/full",   # optional: the unsplit weights as f32 .npy
                               #  (exactly the stored values), NAME.npy
     "mutations": []}          # optional corruptions, for error tests:
        {"kind": "delete_shard", "shard": K}
        {"kind": "delete_params"}
        {"kind": "params", "set": {...}, "remove": [...]}  # edit params.json
        {"kind": "reshape", "shard": K, "name": N}  # drop the last 2 columns
        {"kind": "perturb", "shard": K, "name": N}  # change element 0
        {"kind": "dtype", "shard": K, "name": N, "dtype": "int32"}
        {"kind": "drop", "shard": K, "name": N}
        {"kind": "extra", "shard": K, "name": N}
        {"kind": "truncate", "shard": K, "fraction": 0.5}

Meta's split rule: wq, wk, wv, w1, w3 and output are split along dim 0; wo,
w2 and tok_embeddings along dim 1; the norms are replicated. Each shard is a
torch.save'd dict of contiguous tensors, as Meta's consolidated files are.
"""

import json
import os
import sys

import numpy as np
import torch

SPLIT_DIM0 = ('attention.wq.weight', 'attention.wk.weight',
              'attention.wv.weight', 'feed_forward.w1.weight',
              'feed_forward.w3.weight', 'output.weight')
SPLIT_DIM1 = ('attention.wo.weight', 'feed_forward.w2.weight',
              'tok_embeddings.weight')


def split_dim(name):
    short = name.split('.', 2)[2] if name.startswith('layers.') else name
    if short in SPLIT_DIM0:
        return 0
    if short in SPLIT_DIM1:
        return 1
    return None


def hidden_dim(spec):
    """Meta's FeedForward hidden size."""
    hidden = int(2 * (4 * spec['dim']) / 3)
    if spec.get('ffn_dim_multiplier') is not None:
        hidden = int(spec['ffn_dim_multiplier'] * hidden)
    m = spec['multiple_of']
    return m * ((hidden + m - 1) // m)


def weights(spec, gen, dtype):
    """The logical weights, in the order of Meta's Transformer.state_dict."""
    dim, vocab = spec['dim'], spec['vocab_size']
    n_heads = spec['n_heads']
    n_kv = spec.get('n_kv_heads') or n_heads
    head = dim // n_heads
    hidden = hidden_dim(spec)

    def rand(*shape, norm=False):
        t = torch.randn(*shape, generator=gen)
        if norm:
            t = 1.0 + 0.1 * t
        return t.to(dtype)

    out = {'tok_embeddings.weight': rand(vocab, dim)}
    for i in range(spec['n_layers']):
        p = 'layers.%d.' % i
        out[p + 'attention.wq.weight'] = rand(n_heads * head, dim)
        out[p + 'attention.wk.weight'] = rand(n_kv * head, dim)
        out[p + 'attention.wv.weight'] = rand(n_kv * head, dim)
        out[p + 'attention.wo.weight'] = rand(dim, n_heads * head)
        out[p + 'feed_forward.w1.weight'] = rand(hidden, dim)
        out[p + 'feed_forward.w2.weight'] = rand(dim, hidden)
        out[p + 'feed_forward.w3.weight'] = rand(hidden, dim)
        out[p + 'attention_norm.weight'] = rand(dim, norm=True)
        out[p + 'ffn_norm.weight'] = rand(dim, norm=True)
    out['norm.weight'] = rand(dim, norm=True)
    if not spec.get('shared_output'):
        out['output.weight'] = rand(vocab, dim)
    return out


def params_json(spec):
    params = {'dim': spec['dim'], 'multiple_of': spec['multiple_of'],
              'n_heads': spec['n_heads'], 'n_layers': spec['n_layers'],
              'norm_eps': spec.get('norm_eps', 1e-5),
              'vocab_size': spec.get('params_vocab_size', spec['vocab_size'])}
    for key in ('n_kv_heads', 'ffn_dim_multiplier', 'rope_theta'):
        if spec.get(key) is not None:
            params[key] = spec[key]
    return params


def write(spec):
    out_dir = spec['dir']
    os.makedirs(out_dir, exist_ok=True)
    dtype = getattr(torch, spec.get('dtype', 'float16'))
    gen = torch.Generator().manual_seed(spec.get('seed', 0))
    full = weights(spec, gen, dtype)
    mp = spec['mp']
    mutations = spec.get('mutations', [])

    if spec.get('full_dir'):
        os.makedirs(spec['full_dir'], exist_ok=True)
        for name, t in full.items():
            np.save(os.path.join(spec['full_dir'], name + '.npy'),
                    t.float().numpy())

    params = params_json(spec)
    for m in mutations:
        if m['kind'] == 'params':
            params.update(m.get('set', {}))
            for key in m.get('remove', []):
                params.pop(key, None)
    with open(os.path.join(out_dir, 'params.json'), 'w') as f:
        json.dump(params, f)

    head = spec['dim'] // spec['n_heads']
    for k in range(mp):
        shard = {}
        for name, t in full.items():
            d = split_dim(name)
            if d is None:
                part = t.clone()
            else:
                part = torch.tensor_split(t, mp, dim=d)[k]
            shard[name] = part.clone(memory_format=torch.contiguous_format)
        if spec.get('rope_freqs'):
            shard['rope.freqs'] = 1.0 / (10000.0 ** (
                torch.arange(0, head, 2).float() / head))
        for m in mutations:
            if m.get('shard') != k:
                continue
            name = m.get('name')
            if m['kind'] == 'reshape':
                t = shard[name]
                shard[name] = t[..., :-2].clone(
                    memory_format=torch.contiguous_format)
            elif m['kind'] == 'perturb':
                t = shard[name].clone()
                t.view(-1)[0] += 1
                shard[name] = t
            elif m['kind'] == 'dtype':
                shard[name] = shard[name].to(getattr(torch, m['dtype']))
            elif m['kind'] == 'drop':
                del shard[name]
            elif m['kind'] == 'extra':
                shard[name] = torch.zeros(4, dtype=dtype)
        path = os.path.join(out_dir, 'consolidated.%02d.pth' % k)
        torch.save(shard, path)
        for m in mutations:
            if m.get('shard') == k and m['kind'] == 'truncate':
                size = os.path.getsize(path)
                with open(path, 'r+b') as f:
                    f.truncate(int(size * m['fraction']))

    for m in mutations:
        if m['kind'] == 'delete_shard':
            os.remove(os.path.join(out_dir, 'consolidated.%02d.pth'
                                   % m['shard']))
        elif m['kind'] == 'delete_params':
            os.remove(os.path.join(out_dir, 'params.json'))


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    with open(sys.argv[1]) as f:
        specs = json.load(f)
    for spec in specs if isinstance(specs, list) else [specs]:
        write(spec)


if __name__ == '__main__':
    main()
