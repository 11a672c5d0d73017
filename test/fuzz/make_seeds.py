#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets (fuzz/, docs/Fuzzing.md).

    test/fuzz/make_seeds.py            rewrite every generated seed

Text seeds (hardware JSON, tra IR, JSON) are copied from the test inputs;
binary seeds (.npy, safetensors, .pth, pickles, llama2.c checkpoints,
tokenizer.bin, GGUF) are written here, small and deterministic, so that every
target starts from files its reader accepts. Seeds named crash-* or
regress-* are inputs a fuzzer once crashed on; they are kept, not generated.
Needs numpy and torch (/usr/bin/python3 on the test machines).
"""

import glob
import io
import json
import os
import pickle
import shutil
import struct
import zipfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
MODELS = os.path.join(os.path.dirname(ROOT), 'shared', 'models')


def out(target, name, data):
    d = os.path.join(HERE, target)
    os.makedirs(d, exist_ok=True)
    mode = 'w' if isinstance(data, str) else 'wb'
    with open(os.path.join(d, name), mode) as f:
        f.write(data)


def clean(target):
    """Removes the generated seeds of `target`, keeping crash-*/regress-*."""
    for path in glob.glob(os.path.join(HERE, target, '*')):
        base = os.path.basename(path)
        if not base.startswith(('crash-', 'regress-')):
            os.remove(path)


def copy(target, paths, limit=8192):
    for path in paths:
        if os.path.getsize(path) <= limit:
            rel = os.path.relpath(path, ROOT).replace('/', '_')
            shutil.copyfile(path, os.path.join(HERE, target, rel))


# --- hardware JSON, JSON --------------------------------------------------

def hardware_seeds():
    clean('hardware')
    os.makedirs(os.path.join(HERE, 'hardware'), exist_ok=True)
    copy('hardware', sorted(glob.glob(os.path.join(ROOT, 'hw', '*.json'))))
    copy('hardware', sorted(glob.glob(
        os.path.join(ROOT, 'test', '*', 'Inputs', '*.json'))))


def json_seeds():
    clean('json')
    out('json', 'params.json', json.dumps({
        'dim': 64, 'multiple_of': 4, 'n_heads': 8, 'n_kv_heads': 4,
        'n_layers': 5, 'norm_eps': 1e-05, 'vocab_size': 512,
        'ffn_dim_multiplier': 1.3, 'rope_theta': 500000.0}))
    out('json', 'params-minus-one.json', json.dumps({
        'dim': 4096, 'multiple_of': 256, 'n_heads': 32, 'n_layers': 32,
        'norm_eps': 1e-06, 'vocab_size': -1}))
    out('json', 'values.json',
        '{"a": [1, -2, 3.5e10, -0.0, 1e-300, 9223372036854775807, '
        '-9223372036854775808, 18446744073709551616], "b": {"c": null, '
        '"d": [true, false, []], "e": {}}, "s": "\\u00e9\\ud83d\\ude00\\n\\t'
        '\\"\\\\ \xc3\xa9"}\n')
    out('json', 'index.json', json.dumps({
        'metadata': {'total_size': 128},
        'weight_map': {'a': 'model-00001-of-00002.safetensors',
                       'b': 'model-00002-of-00002.safetensors'}}, indent=2))
    out('json', 'nested.json', '[[[[[[[[[[{"x": [[[[1]]]]}]]]]]]]]]]')
    copy('json', sorted(glob.glob(os.path.join(ROOT, 'hw', 'cpu-1node.json'))))


# --- tra IR ---------------------------------------------------------------

def ir_seeds():
    clean('ir')
    os.makedirs(os.path.join(HERE, 'ir'), exist_ok=True)
    paths = sorted(glob.glob(os.path.join(ROOT, 'test', '**', '*.mlir'),
                             recursive=True))
    paths += sorted(glob.glob(os.path.join(ROOT, 'examples', '*.mlir')))
    keep = []
    for path in paths:
        text = open(path).read()
        # Seeds are single modules of the model-level dialects only.
        if '// -----' in text or len(text) > 6000:
            continue
        if any(d in text for d in ('llvm.', 'linalg.', 'memref.', 'gpu.',
                                   'tra_comm.', 'scf.', 'mpi.', 'bufferization')):
            continue
        if 'tra.' not in text:
            continue
        keep.append(path)
    copy('ir', keep, limit=6000)


# --- .npy -------------------------------------------------------------------

def npy_seeds():
    clean('npy')
    rng = np.random.default_rng(0)
    arrays = {
        'f32_2x3': rng.standard_normal((2, 3)).astype(np.float32),
        'f16_4': rng.standard_normal(4).astype(np.float16),
        'f64_scalar': np.array(3.5),
        'i64_2x2x2': np.arange(8, dtype=np.int64).reshape(2, 2, 2),
        'i32_3': np.array([1, -2, 3], dtype=np.int32),
        'i16_2': np.array([7, -8], dtype=np.int16),
        'i8_5': np.arange(5, dtype=np.int8),
        'u8_4': np.arange(4, dtype=np.uint8),
        'bool_3': np.array([True, False, True]),
        'empty_0x3': np.zeros((0, 3), dtype=np.float32),
        'fortran_1d': np.asfortranarray(np.arange(3, dtype=np.float32)),
    }
    for name, a in arrays.items():
        buf = io.BytesIO()
        np.save(buf, a)
        out('npy', name + '.npy', buf.getvalue())
    buf = io.BytesIO()
    np.lib.format.write_array(buf, arrays['f32_2x3'], version=(2, 0))
    out('npy', 'v2_f32_2x3.npy', buf.getvalue())
    buf = io.BytesIO()
    np.lib.format.write_array(buf, arrays['i32_3'], version=(3, 0))
    out('npy', 'v3_i32_3.npy', buf.getvalue())


# --- safetensors -------------------------------------------------------------

def safetensors_bytes(tensors, metadata=None):
    header, data = {}, b''
    for name, (dtype, shape, raw) in tensors.items():
        header[name] = {'dtype': dtype, 'shape': list(shape),
                        'data_offsets': [len(data), len(data) + len(raw)]}
        data += raw
    if metadata is not None:
        header['__metadata__'] = metadata
    text = json.dumps(header, separators=(',', ':')).encode()
    text += b' ' * (-len(text) % 8)
    return struct.pack('<Q', len(text)) + text + data


def safetensors_seeds():
    clean('safetensors')
    f32 = np.arange(6, dtype=np.float32)
    out('safetensors', 'one.safetensors',
        safetensors_bytes({'w': ('F32', (2, 3), f32.tobytes())}))
    out('safetensors', 'mixed.safetensors', safetensors_bytes({
        'a': ('F16', (2, 2), np.arange(4, dtype=np.float16).tobytes()),
        'b': ('BF16', (3,), b'\x80\x3f\x00\x40\x40\x40'),
        'c': ('I64', (1,), struct.pack('<q', -5)),
        'd': ('BOOL', (2,), b'\x01\x00'),
        'e': ('U8', (0, 4), b''),
        'f': ('F64', (), struct.pack('<d', 2.5)),
    }, metadata={'format': 'pt'}))


# --- torch.save (.pth) and pickles --------------------------------------------

def pth_seeds():
    clean('pth')
    clean('pickle')
    import torch
    torch.manual_seed(0)
    base = torch.randn(4, 6)
    sets = {
        'f32': {'w': torch.randn(2, 3)},
        'mixed': {'h': torch.randn(3, 2).half(), 'b': torch.randn(4).bfloat16(),
                  'i': torch.arange(3), 'flag': torch.tensor([True, False])},
        'views': {'t': base.t(), 'row': base[1], 'x': torch.ones(1).expand(3)},
        'params': torch.nn.Linear(3, 2).state_dict(),
    }
    for name, value in sets.items():
        buf = io.BytesIO()
        torch.save(value, buf)
        data = buf.getvalue()
        out('pth', name + '.pth', data)
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            pkl = [n for n in z.namelist() if n.endswith('/data.pkl')][0]
            out('pickle', name + '.pkl', z.read(pkl))
    for protocol in (2, 3, 4, 5):
        out('pickle', 'plain-p%d.pkl' % protocol, pickle.dumps(
            {'a': [1, 2.5, None, True, 'x', b'y', (1, 2)],
             'big': 2 ** 62, 'neg': -(2 ** 40)}, protocol=protocol))


# --- llama2.c checkpoints and tokenizers ---------------------------------------

def llama2c_bytes(dim, hidden, layers, heads, kv, vocab, seq, shared=True):
    hd = dim // heads
    counts = [vocab * dim, layers * dim, layers * dim * dim,
              layers * kv * hd * dim, layers * kv * hd * dim,
              layers * dim * dim, layers * dim, layers * hidden * dim,
              layers * dim * hidden, layers * hidden * dim, dim,
              seq * hd // 2, seq * hd // 2]
    if not shared:
        counts.append(vocab * dim)
    header = struct.pack('<7i', dim, hidden, layers, heads, kv,
                         vocab if shared else -vocab, seq)
    rng = np.random.default_rng(1)
    return header + rng.standard_normal(sum(counts)).astype(np.float32).tobytes()


def llama2c_seeds():
    clean('llama2c')
    out('llama2c', 'tiny.bin', llama2c_bytes(8, 16, 1, 2, 1, 4, 4))
    out('llama2c', 'tiny-classifier.bin',
        llama2c_bytes(8, 12, 2, 4, 2, 3, 2, shared=False))
    stories = os.path.join(MODELS, 'stories260K.bin')
    if os.path.exists(stories):
        # Its header and the first weights: a truncated checkpoint.
        out('llama2c', 'stories260K-prefix.bin', open(stories, 'rb').read(2048))


def tokenizer_pieces():
    pieces = [('<unk>', 0.0), ('<s>', 0.0), ('</s>', 0.0)]
    pieces += [('<0x%02X>' % b, 0.0) for b in range(256)]
    merges = [' ', 'H', 'e', 'l', 'o', 'w', 'r', 'd', 'He', 'll', 'llo',
              'Hello', ' w', ' wor', 'or', ' world', '\u00e9', 't']
    pieces += [(p, -float(i)) for i, p in enumerate(merges)]
    return pieces


def tokenizer_bin(pieces):
    data = [p.encode() for p, _ in pieces]
    body = b''.join(struct.pack('<fi', s, len(d)) + d
                    for d, (_, s) in zip(data, pieces))
    return struct.pack('<i', max(len(d) for d in data)) + body


def tokenizer_seeds():
    clean('tokenizer')
    out('tokenizer', 'tokenizer.bin', tokenizer_bin(tokenizer_pieces()))
    out('tokenizer', 'tokenizer-gguf.gguf', gguf_llama(vocab_only=True))
    tok = os.path.join(MODELS, 'llama2-tokenizer.bin')
    if os.path.exists(tok):
        out('tokenizer', 'llama2-tokenizer-prefix.bin', open(tok, 'rb').read(4096))


# --- GGUF -------------------------------------------------------------------

GGUF_U32, GGUF_I32, GGUF_F32, GGUF_BOOL, GGUF_STRING, GGUF_ARRAY = 4, 5, 6, 7, 8, 9
GGUF_U64, GGUF_F64 = 10, 12


def gguf_string(s):
    b = s.encode() if isinstance(s, str) else s
    return struct.pack('<Q', len(b)) + b


def gguf_value(vtype, value):
    if vtype == GGUF_STRING:
        return gguf_string(value)
    if vtype == GGUF_ARRAY:
        etype, items = value
        return (struct.pack('<IQ', etype, len(items)) +
                b''.join(gguf_value(etype, v) for v in items))
    fmt = {GGUF_U32: '<I', GGUF_I32: '<i', GGUF_F32: '<f', GGUF_BOOL: '<?',
           GGUF_U64: '<Q', GGUF_F64: '<d'}[vtype]
    return struct.pack(fmt, value)


def q8_0(values):
    values = np.asarray(values, dtype=np.float32).reshape(-1, 32)
    blocks = b''
    for block in values:
        d = float(np.abs(block).max()) / 127 or 1.0
        q = np.clip(np.round(block / d), -127, 127).astype(np.int8)
        blocks += np.float16(d).tobytes() + q.tobytes()
    return blocks


def gguf_file(kvs, tensors, alignment=32, version=3):
    """kvs: [(key, type, value)]; tensors: [(name, row-major shape, ggml
    type, bytes)]."""
    head = b'GGUF' + struct.pack('<IQQ', version, len(tensors), len(kvs))
    for key, vtype, value in kvs:
        head += gguf_string(key) + struct.pack('<I', vtype) + gguf_value(vtype, value)
    data, infos = b'', b''
    for name, shape, gtype, raw in tensors:
        data += b'\0' * (-len(data) % alignment)
        ne = list(reversed(shape))
        infos += (gguf_string(name) + struct.pack('<I', len(ne)) +
                  b''.join(struct.pack('<Q', n) for n in ne) +
                  struct.pack('<IQ', gtype, len(data)))
        data += raw
    head += infos
    head += b'\0' * (-len(head) % alignment)
    return head + data


def gguf_llama(vocab_only=False, qtype=0):
    pieces = tokenizer_pieces()
    tokens = [p.replace(' ', '\u2581') for p, _ in pieces]
    kvs = [('general.architecture', GGUF_STRING, 'llama'),
           ('general.alignment', GGUF_U32, 32),
           ('tokenizer.ggml.model', GGUF_STRING, 'llama'),
           ('tokenizer.ggml.tokens', GGUF_ARRAY, (GGUF_STRING, tokens)),
           ('tokenizer.ggml.scores', GGUF_ARRAY,
            (GGUF_F32, [s for _, s in pieces])),
           ('tokenizer.ggml.token_type', GGUF_ARRAY,
            (GGUF_I32, [2, 3, 3] + [6] * 256 + [1] * (len(pieces) - 259)))]
    if vocab_only:
        return gguf_file(kvs, [])
    dim, hidden, layers, heads, kv, vocab = 32, 64, 1, 2, 1, len(pieces)
    kvs += [('llama.embedding_length', GGUF_U32, dim),
            ('llama.feed_forward_length', GGUF_U32, hidden),
            ('llama.block_count', GGUF_U32, layers),
            ('llama.attention.head_count', GGUF_U32, heads),
            ('llama.attention.head_count_kv', GGUF_U32, kv),
            ('llama.context_length', GGUF_U32, 16),
            ('llama.attention.layer_norm_rms_epsilon', GGUF_F32, 1e-5),
            ('llama.rope.freq_base', GGUF_F32, 10000.0)]
    rng = np.random.default_rng(2)
    kvdim = kv * dim // heads

    def weight(name, shape, matrix=True):
        values = rng.standard_normal(int(np.prod(shape))).astype(np.float32)
        if matrix and qtype == 8:
            return (name, shape, 8, q8_0(values))
        if matrix and qtype == 1:
            return (name, shape, 1, values.astype(np.float16).tobytes())
        return (name, shape, 0, values.tobytes())
    tensors = [weight('token_embd.weight', [vocab, dim])]
    for l in range(layers):
        p = 'blk.%d.' % l
        tensors += [weight(p + 'attn_norm.weight', [dim], False),
                    weight(p + 'attn_q.weight', [dim, dim]),
                    weight(p + 'attn_k.weight', [kvdim, dim]),
                    weight(p + 'attn_v.weight', [kvdim, dim]),
                    weight(p + 'attn_output.weight', [dim, dim]),
                    weight(p + 'ffn_norm.weight', [dim], False),
                    weight(p + 'ffn_gate.weight', [hidden, dim]),
                    weight(p + 'ffn_down.weight', [dim, hidden]),
                    weight(p + 'ffn_up.weight', [hidden, dim])]
    tensors.append(weight('output_norm.weight', [dim], False))
    return gguf_file(kvs, tensors)


def gguf_seeds():
    clean('gguf')
    out('gguf', 'llama-f32.gguf', gguf_llama())
    out('gguf', 'llama-q8_0.gguf', gguf_llama(qtype=8))
    out('gguf', 'llama-f16.gguf', gguf_llama(qtype=1))
    kvs = [('a.u32', GGUF_U32, 7), ('a.f64', GGUF_F64, 0.5),
           ('a.bool', GGUF_BOOL, True), ('a.str', GGUF_STRING, 'x'),
           ('a.nested', GGUF_ARRAY, (GGUF_ARRAY, [(GGUF_U32, [1, 2]),
                                                  (GGUF_U32, [])]))]
    bf16 = b'\x80\x3f' * 6
    out('gguf', 'types-v2.gguf', gguf_file(kvs, [
        ('f', [2, 3], 0, np.arange(6, dtype=np.float32).tobytes()),
        ('h', [6], 1, np.arange(6, dtype=np.float16).tobytes()),
        ('b', [3, 2], 30, bf16),
        ('q', [2, 32], 8, q8_0(np.linspace(-1, 1, 64)))], alignment=32,
        version=2))


def main():
    hardware_seeds()
    json_seeds()
    ir_seeds()
    npy_seeds()
    safetensors_seeds()
    pth_seeds()
    llama2c_seeds()
    tokenizer_seeds()
    gguf_seeds()


if __name__ == '__main__':
    main()
