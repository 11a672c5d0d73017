#!/usr/bin/env python3
"""Checks a tra-split directory written by `tra-llama reshard`, independently
of the tra runtime.

    check_split.py SPLIT_DIR ORIGINAL PLANNED.mlir [--dtype keep|f32|f16|bf16|bf16-as-f32]

ORIGINAL is the checkpoint the split was made from: a llama2.c .bin (parsed
here with NumPy) or a Meta directory (params.json + consolidated.NN.pth,
loaded with torch.load and concatenated along Meta's split dimensions).
PLANNED.mlir is `tra-compile --emit=plan` output for the same model and
hardware: the tra_plan.dist of every weight argument of @forward gives the
tiles each rank must hold (balanced uneven splits in multiples of `unit`,
tiles numbered row-major, replicas as inner lists), computed here from the
documented semantics.

Checks, and prints OK or exits 1 with the first problem:
  * the index (format, version, ranks, file names) and that the directory
    holds exactly the rank files and tra-split.json (no leftovers);
  * each rank file holds exactly the tiles the plan gives that rank, under
    the right keys, with the right dtype and shape;
  * every tensor reassembled from the per-rank files (every copy of a
    replicated tile) equals the original bit for bit, after the conversion
    --dtype asks for (f16: NumPy, bf16: torch, both round to nearest even).
"""
import json
import os
import re
import struct
import sys

import numpy as np

RAW = {'F32': np.uint32, 'F16': np.uint16, 'BF16': np.uint16, 'F64': np.uint64}
SPLIT_DIM0 = ('attention.wq.weight', 'attention.wk.weight',
              'attention.wv.weight', 'feed_forward.w1.weight',
              'feed_forward.w3.weight', 'output.weight')
SPLIT_DIM1 = ('attention.wo.weight', 'feed_forward.w2.weight',
              'tok_embeddings.weight')


def fail(message):
    print('FAIL: ' + message)
    sys.exit(1)


def read_safetensors(path):
    with open(path, 'rb') as f:
        data = f.read()
    (n,) = struct.unpack('<Q', data[:8])
    header = json.loads(data[8:8 + n])
    meta = header.pop('__metadata__', {})
    body = data[8 + n:]
    tensors = {}
    for name, info in header.items():
        begin, end = info['data_offsets']
        raw = np.frombuffer(body[begin:end], dtype=RAW[info['dtype']])
        tensors[name] = (info['dtype'], raw.reshape(info['shape']))
    return meta, tensors


def llama2c_weights(path):
    """Meta-named float32 weights of a llama2.c v0 file."""
    with open(path, 'rb') as f:
        data = f.read()
    dim, hidden, layers, heads, kv_heads, vocab, seq = struct.unpack('<7i', data[:28])
    shared = vocab > 0
    vocab = abs(vocab)
    kv = kv_heads * (dim // heads)
    hd = dim // heads
    floats = np.frombuffer(data[28:], dtype='<f4')
    pos = [0]

    def take(*shape):
        n = int(np.prod(shape))
        out = floats[pos[0]:pos[0] + n].reshape(shape)
        pos[0] += n
        return out

    w = {'tok_embeddings.weight': take(vocab, dim)}
    for kind, shape in (('attention_norm.weight', (dim,)),
                        ('attention.wq.weight', (dim, dim)),
                        ('attention.wk.weight', (kv, dim)),
                        ('attention.wv.weight', (kv, dim)),
                        ('attention.wo.weight', (dim, dim)),
                        ('ffn_norm.weight', (dim,)),
                        ('feed_forward.w1.weight', (hidden, dim)),
                        ('feed_forward.w2.weight', (dim, hidden)),
                        ('feed_forward.w3.weight', (hidden, dim))):
        for layer in range(layers):
            w['layers.%d.%s' % (layer, kind)] = take(*shape)
    w['norm.weight'] = take(dim)
    take(seq, hd // 2)
    take(seq, hd // 2)
    if not shared:
        w['output.weight'] = take(vocab, dim)
    if pos[0] != floats.size:
        fail('%s: unexpected size' % path)
    return {k: ('F32', v) for k, v in w.items()}


def meta_weights(directory):
    """Meta-named weights of a Meta checkpoint, as torch tensors."""
    import torch
    shards = sorted(f for f in os.listdir(directory)
                    if re.fullmatch(r'consolidated\.\d\d\.pth', f))
    parts = [torch.load(os.path.join(directory, f), map_location='cpu')
             for f in shards]
    out = {}
    for name in parts[0]:
        if name == 'rope.freqs':
            continue
        short = name.split('.', 2)[2] if name.startswith('layers.') else name
        if short in SPLIT_DIM0:
            t = torch.cat([p[name] for p in parts], dim=0)
        elif short in SPLIT_DIM1:
            t = torch.cat([p[name] for p in parts], dim=1)
        else:
            t = parts[0][name]
        out[name] = t
    return out


def to_bits(value, dtype):
    """`value` (NumPy f32 array or torch tensor) converted to `dtype`, as raw
    bits."""
    import torch
    if isinstance(value, np.ndarray):
        value = torch.from_numpy(np.array(value))
    if dtype == 'F32':
        return value.to(torch.float32).numpy().view(np.uint32)
    if dtype == 'F16':
        if value.dtype == torch.float32:
            # NumPy's conversion, independent of torch's.
            return value.numpy().astype(np.float16).view(np.uint16)
        return value.to(torch.float16).numpy().view(np.uint16)
    if dtype == 'BF16':
        return value.to(torch.bfloat16).view(torch.int16).numpy().view(np.uint16)
    fail('unexpected dtype ' + dtype)


def stored_dtype(value):
    import torch
    if isinstance(value, np.ndarray):
        return 'F32'
    return {torch.float32: 'F32', torch.float16: 'F16',
            torch.bfloat16: 'BF16'}[value.dtype]


def parse_plan(path):
    """name -> (grid, unit, devices per tile) of @forward's arguments."""
    text = open(path).read()
    start = text.index('func.func @forward(')
    sig = text[start:text.index('{\n', start)]
    plans = {}
    for m in re.finditer(r'\{tra\.name = "([^"]+)", tra_plan\.dist = '
                         r'#tra_plan\.dist<([^>]*)>\}', sig):
        name, body = m.group(1), m.group(2)
        d = re.fullmatch(r'\[([^\]]*)\](?: unit \[([^\]]*)\])? on (.*)', body)
        if not d:
            fail('cannot parse the distribution of %s: %s' % (name, body))
        grid = [int(x) for x in d.group(1).split(',') if x.strip()]
        unit = [int(x) for x in d.group(2).split(',')] if d.group(2) else [1] * len(grid)
        devices = json.loads(d.group(3))
        tiles = int(np.prod(grid))
        if devices and isinstance(devices[0], list):
            per_tile = devices
        else:
            per_tile = [[x] for x in devices]
        if len(per_tile) != tiles:
            fail('%s: %d device lists for %d tiles' % (name, len(per_tile), tiles))
        plans[name] = (grid, unit, per_tile)
    return plans


def tile_start(extent, parts, unit, i):
    """PlanAttrs.td: u = ceil(extent / unit) units; the first u mod parts
    tiles get one unit more."""
    units = -(-extent // unit)
    base, extra = divmod(units, parts)
    return min(extent, (i * base + min(i, extra)) * unit)


def plan_tiles(shape, grid, unit, per_tile):
    out = []
    for t in range(int(np.prod(grid))):
        coords, rest = [], t
        for g in reversed(grid):
            coords.append(rest % g)
            rest //= g
        coords.reverse()
        offsets = [tile_start(n, g, u, c) for n, g, u, c in zip(shape, grid, unit, coords)]
        ends = [tile_start(n, g, u, c + 1) for n, g, u, c in zip(shape, grid, unit, coords)]
        out.append((offsets, [e - o for o, e in zip(offsets, ends)], sorted(per_tile[t])))
    return out


def main():
    args = sys.argv[1:]
    want_dtype = 'keep'
    if '--dtype' in args:
        i = args.index('--dtype')
        want_dtype = args[i + 1]
        del args[i:i + 2]
    split_dir, original, planned = args
    index = json.load(open(os.path.join(split_dir, 'tra-split.json')))
    if index.get('format') != 'tra-split' or index.get('version') != 1:
        fail('bad format/version')
    ranks = index['ranks']
    names = ['rank-%05d-of-%05d.safetensors' % (r, ranks) for r in range(ranks)]
    if index['files'] != names:
        fail('files %s' % index['files'])
    present = sorted(os.listdir(split_dir))
    if present != sorted(names + ['tra-split.json']):
        fail('directory holds %s' % present)

    if os.path.isdir(original):
        weights = meta_weights(original)
    else:
        weights = llama2c_weights(original)
        weights = {k: v[1] for k, v in weights.items()}
    plans = parse_plan(planned)

    files = [read_safetensors(os.path.join(split_dir, n)) for n in names]
    for r, (meta, _) in enumerate(files):
        if meta != {'format': 'tra-split', 'rank': str(r), 'ranks': str(ranks)}:
            fail('rank %d metadata %s' % (r, meta))

    tensors = index['tensors']
    if sorted(tensors) != sorted(weights):
        fail('tensors %s, expected %s' % (sorted(tensors), sorted(weights)))
    expected_keys = [set() for _ in range(ranks)]
    total_tiles = 0
    for name, entry in tensors.items():
        original_value = weights[name]
        source_dtype = stored_dtype(original_value)
        if want_dtype == 'keep':
            dtype = source_dtype
        elif want_dtype == 'bf16-as-f32':
            # A bf16 split re-split as f32: the bf16 values, widened.
            import torch
            original_value = torch.from_numpy(np.array(original_value)).to(
                torch.bfloat16).to(torch.float32)
            dtype = 'F32'
        else:
            dtype = want_dtype.upper()
        if entry['dtype'] != dtype:
            fail('%s: dtype %s, expected %s' % (name, entry['dtype'], dtype))
        shape = list(original_value.shape)
        if entry['shape'] != shape:
            fail('%s: shape %s, expected %s' % (name, entry['shape'], shape))
        if name not in plans:
            fail('%s: no tra_plan.dist in %s' % (name, planned))
        want_tiles = plan_tiles(shape, *plans[name])
        got_tiles = [(t['offsets'], t['shape'], sorted(t['ranks'])) for t in entry['tiles']]
        if got_tiles != want_tiles:
            fail('%s: tiles %s, the plan gives %s' % (name, got_tiles, want_tiles))
        expected = to_bits(original_value, dtype)
        assembled = np.zeros(shape, dtype=expected.dtype)
        covered = np.zeros(shape, dtype=np.int64)
        for tile in entry['tiles']:
            region = tuple(slice(o, o + s) for o, s in zip(tile['offsets'], tile['shape']))
            covered[region] += 1
            for r in tile['ranks']:
                expected_keys[r].add(tile['key'])
                stored = files[r][1].get(tile['key'])
                if stored is None:
                    fail('%s: rank %d lacks tile %s' % (name, r, tile['key']))
                if stored[0] != dtype or list(stored[1].shape) != tile['shape']:
                    fail('%s: rank %d tile is %s %s' % (name, r, stored[0], list(stored[1].shape)))
                if not np.array_equal(stored[1], expected[region]):
                    fail('%s: rank %d tile at %s differs from the original'
                         % (name, r, tile['offsets']))
                assembled[region] = stored[1]
                total_tiles += 1
        if not (covered == 1).all():
            fail('%s: tiles do not cover the tensor exactly once' % name)
        if not np.array_equal(assembled, expected):
            fail('%s: reassembled tensor differs' % name)
    for r in range(ranks):
        got = set(files[r][1])
        if got != expected_keys[r]:
            fail('rank %d holds %s, the plan gives it %s'
                 % (r, sorted(got - expected_keys[r]), sorted(expected_keys[r] - got)))
    print('OK: %d tensors, %d ranks, %d tile copies, bit-exact'
          % (len(tensors), ranks, total_tiles))


if __name__ == '__main__':
    main()
