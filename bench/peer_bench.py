#!/usr/bin/env python3
"""Peer benchmark (issue 16): tra-llama against llama.cpp, PyTorch eager and
the machine's measured memory-bandwidth roofline, on a random-weight LLaMA
shaped like stories110M.

    /usr/bin/python3 bench/peer_bench.py [--build BUILD] [--work DIR]
        [--rounds 3] [--threads 2] [--prefill 128] [--decode 64]
        [--skip-torch] [--skip-build-check]

What it does, in order (everything it builds or writes is cached under
--work, default ~/.cache/tra-bench):

1. llama.cpp from source, offline: the npm package node-llama-cpp@3.21.1
   (installed with `npm i -E --ignore-scripts` into --work/npm unless it is
   there already) carries llama.cpp's source as a git bundle
   (node_modules/node-llama-cpp/llama/gitRelease.bundle). The bundle is
   cloned into --work/llama.cpp-COMMIT/src and built with CMake (Release,
   GGML_NATIVE=ON, CPU only, no CURL/OpenSSL, -j2) into .../build, keyed by
   the bundle's commit: only the targets llama-bench,
   llama-convert-llama2c-to-ggml, llama-quantize and the llama library.
   A 60-line C program (greedy_ids.c, written and compiled by this script
   against that libllama) prints llama.cpp's greedy token ids for a list of
   prompt ids (argmax of the logits, the same as llama.cpp's greedy
   sampler, without detokenising).
2. The model: a llama2.c v0 checkpoint with random weights (seed 0), dim
   768, 12 layers, 12 heads (12 KV heads), hidden 2048, vocab 32000,
   seq_len 1024, f32, with its own classifier (not shared): 537 MB, the
   shape of stories110M. llama.cpp's llama-convert-llama2c-to-ggml turns it
   into an f32 GGUF (vocabulary from ../shared/models/llama2-tokenizer.bin,
   llama2.c's tokenizer.bin), llama-quantize into F16 and Q8_0 GGUFs.
3. Greedy agreement: a fixed prompt (BOS first, 9 ids) and 32 greedy tokens
   from a NumPy float64 forward pass (the reference), tra-llama on the .bin,
   llama.cpp on the f32 GGUF (f32 KV cache, so that the whole computation
   is f32), tra-llama on the f32 GGUF (where it reads GGUF) and PyTorch
   eager. Any of these f32 engines that disagrees with the reference (or
   tra-llama failing on the .bin) makes the script exit non-zero, after the
   table. llama.cpp with its default f16 KV cache and both engines on the
   F16/Q8_0 GGUFs are printed (how many leading tokens agree), not checked.
   Where `tra-llama run --checkpoint X.gguf` fails, its rows say "tra: GGUF
   not readable yet". llama-convert-llama2c-to-ggml writes
   llama.context_length 128 (a hard-coded default), not the checkpoint's
   seq_len; the script sets it to 1024 in the GGUFs (gguf-py, in place).
4. Speed, --rounds rounds, engines interleaved within a round: tra-llama
   (`run --warmup --bench-json`, private --cache-dir under --work; a first
   run compiles and is untimed), llama.cpp (`llama-bench -p PREFILL -n
   DECODE -t THREADS -r 1 -o json`, which runs its own warm-up), PyTorch
   eager (bench/llama_bench.py's model, warm). Medians and min-max. For
   each weight type tra and llama.cpp run back to back (which one first
   alternates by round), and the ratio of each such pair is printed too
   (median and min-max over the rounds): this VM's bandwidth drifts over
   minutes, so the paired ratio is steadier than the ratio of the medians.
   llama2.c's run.c is not available offline and is not run.
5. Roofline: a C program (OpenMP, `cc -O3 -march=native -fopenmp`) sums a
   1 GiB float32 array (advised for huge pages, as tra's weights are) on
   THREADS threads, best of 5 passes, measured
   before the rounds and after each; the best = the read bandwidth decode
   can get; decode roofline tokens/s = bandwidth / bytes of
   weights a decoding step reads (every weight but the token embedding; KV
   cache reads are not counted).

Ratios are printed, never asserted; no test runs this script. Timings on a
shared machine are noisy; the spread of the rounds is printed.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

from llama2c import write_random_llama2c

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED_MODELS = os.path.join(os.path.dirname(ROOT), "shared", "models")
TOKENIZER_BIN = os.path.join(SHARED_MODELS, "llama2-tokenizer.bin")
NPM_PACKAGE = "node-llama-cpp@3.21.1"
BUNDLE = os.path.join("node_modules", "node-llama-cpp", "llama",
                      "gitRelease.bundle")
LLAMA_TARGETS = ["llama-bench", "llama-convert-llama2c-to-ggml",
                 "llama-quantize", "llama"]

# stories110M's shape; f32 and an unshared classifier give a 537 MB file.
MODEL = dict(dim=768, hidden=2048, layers=12, heads=12, kv_heads=12,
             vocab=32000, seq_len=1024)
SEED = 0
# "Once upon a time, there was a little" in the LLaMA vocabulary; the
# weights are random, only the ids matter.
CHECK_PROMPT = [1, 9038, 2501, 263, 931, 29892, 727, 471, 263]
CHECK_TOKENS = 32


def log(msg):
    print(msg, flush=True)


def run(cmd, **kw):
    """Runs cmd; exits with its output when it fails."""
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, errors="replace", **kw)
    if proc.returncode != 0:
        sys.exit(f"error: {' '.join(map(str, cmd))} failed "
                 f"({proc.returncode}):\n{proc.stdout[-3000:]}"
                 f"{proc.stderr[-3000:]}")
    return proc


# --------------------------------------------------------------------------
# llama.cpp, built from the npm package's git bundle
# --------------------------------------------------------------------------

GREEDY_C = r"""
// Greedy token ids from llama.cpp: argmax of the logits after each step
// (llama.cpp's greedy sampler), prompt as one batch.
//   greedy_ids MODEL.gguf THREADS N_NEW f32|f16 ID,ID,...
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "llama.h"

static void quiet(enum ggml_log_level level, const char *text, void *data) {
  (void)data;
  if (level >= GGML_LOG_LEVEL_ERROR) fputs(text, stderr);
}

int main(int argc, char **argv) {
  if (argc != 6) {
    fprintf(stderr, "usage: greedy_ids MODEL THREADS N f32|f16 IDS\n");
    return 2;
  }
  int threads = atoi(argv[2]), n_new = atoi(argv[3]);
  llama_token prompt[4096];
  int n_prompt = 0;
  for (char *s = strtok(argv[5], ","); s && n_prompt < 4096;
       s = strtok(NULL, ","))
    prompt[n_prompt++] = atoi(s);
  llama_log_set(quiet, NULL);
  llama_backend_init();
  struct llama_model_params mp = llama_model_default_params();
  struct llama_model *model = llama_model_load_from_file(argv[1], mp);
  if (!model) { fprintf(stderr, "cannot load %s\n", argv[1]); return 1; }
  struct llama_context_params cp = llama_context_default_params();
  cp.n_ctx = n_prompt + n_new + 16;
  cp.n_batch = cp.n_ubatch = n_prompt;
  cp.n_threads = cp.n_threads_batch = threads;
  if (!strcmp(argv[4], "f32")) cp.type_k = cp.type_v = GGML_TYPE_F32;
  struct llama_context *ctx = llama_init_from_model(model, cp);
  if (!ctx) { fprintf(stderr, "cannot create a context\n"); return 1; }
  int n_vocab = llama_vocab_n_tokens(llama_model_get_vocab(model));
  struct llama_batch batch = llama_batch_get_one(prompt, n_prompt);
  llama_token tok;
  for (int i = 0; i < n_new; ++i) {
    if (llama_decode(ctx, batch)) { fprintf(stderr, "decode failed\n"); return 1; }
    const float *logits = llama_get_logits_ith(ctx, -1);
    int best = 0;
    for (int v = 1; v < n_vocab; ++v)
      if (logits[v] > logits[best]) best = v;
    tok = best;
    printf(i ? " %d" : "%d", tok);
    batch = llama_batch_get_one(&tok, 1);
  }
  printf("\n");
  llama_free(ctx);
  llama_model_free(model);
  llama_backend_free();
  return 0;
}
"""


def llama_cpp(work, check_build):
    """Returns the llama.cpp build's bin directory and source tree, building
    what is missing (cached by the bundle's commit)."""
    npm = os.path.join(work, "npm")
    bundle = os.path.join(npm, BUNDLE)
    if not os.path.exists(bundle):
        log(f"installing {NPM_PACKAGE} (npm) into {npm}")
        os.makedirs(npm, exist_ok=True)
        run(["npm", "i", "-E", NPM_PACKAGE, "--ignore-scripts", "--no-audit",
             "--no-fund", "--prefix", npm])
    heads = run(["git", "bundle", "list-heads", bundle]).stdout.split()
    commit = heads[0]
    base = os.path.join(work, "llama.cpp-" + commit[:12])
    src, build = os.path.join(base, "src"), os.path.join(base, "build")
    bindir = os.path.join(build, "bin")
    if not os.path.exists(os.path.join(src, "CMakeLists.txt")):
        log(f"cloning llama.cpp {commit[:12]} from the bundle into {src}")
        shutil.rmtree(src, ignore_errors=True)
        run(["git", "clone", "-q", bundle, src])
        run(["git", "-C", src, "checkout", "-q", commit])
    have = all(os.path.exists(os.path.join(bindir, t)) for t in
               LLAMA_TARGETS[:3])
    if not have or check_build:
        if not os.path.exists(os.path.join(build, "CMakeCache.txt")):
            log("configuring llama.cpp (Release, GGML_NATIVE=ON, CPU only)")
            gen = ["-G", "Ninja"] if shutil.which("ninja") else []
            run(["cmake", "-S", src, "-B", build, *gen,
                 "-DCMAKE_BUILD_TYPE=Release", "-DGGML_NATIVE=ON",
                 "-DLLAMA_CURL=OFF", "-DLLAMA_OPENSSL=OFF",
                 "-DGGML_CUDA=OFF", "-DGGML_VULKAN=OFF", "-DGGML_METAL=OFF",
                 "-DLLAMA_BUILD_TESTS=OFF", "-DLLAMA_BUILD_SERVER=OFF",
                 "-DBUILD_SHARED_LIBS=ON"])
        t = time.perf_counter()
        log("building llama.cpp: " + " ".join(LLAMA_TARGETS) +
            (" (no-op when up to date)" if have else " (about 10 min on "
             "2 cores)"))
        run(["cmake", "--build", build, "-j2", "--target", *LLAMA_TARGETS])
        if not have:
            log(f"built llama.cpp in {time.perf_counter() - t:.0f} s")
    # The greedy-ids tool, against the built libllama.
    tool = os.path.join(bindir, "greedy_ids")
    source = os.path.join(base, "greedy_ids.c")
    current = (os.path.exists(tool) and os.path.exists(source)
               and open(source).read() == GREEDY_C)
    if not current:
        with open(source, "w") as f:
            f.write(GREEDY_C)
        run(["cc", "-O2", "-o", tool, source,
             "-I", os.path.join(src, "include"),
             "-I", os.path.join(src, "ggml", "include"),
             "-L", bindir, "-lllama", "-lggml", "-lggml-base",
             "-Wl,-rpath," + bindir])
    return commit, src, bindir


# --------------------------------------------------------------------------
# The model
# --------------------------------------------------------------------------

def models(work, src, bindir):
    d = os.path.join(work, "models")
    os.makedirs(d, exist_ok=True)
    m = MODEL
    name = (f"random-d{m['dim']}-l{m['layers']}-h{m['heads']}-"
            f"kv{m['kv_heads']}-f{m['hidden']}-v{m['vocab']}-"
            f"s{m['seq_len']}-seed{SEED}")
    binp = os.path.join(d, name + ".bin")
    if not os.path.exists(binp):
        log(f"writing {binp}")
        write_random_llama2c(binp, seed=SEED, shared_classifier=False, **m)
    paths = {"bin": binp}
    f32 = os.path.join(d, name + "-f32.gguf")
    if not os.path.exists(f32) or \
            os.path.getmtime(f32) < os.path.getmtime(binp):
        log("converting to an f32 GGUF (llama-convert-llama2c-to-ggml)")
        if not os.path.exists(TOKENIZER_BIN):
            sys.exit(f"error: {TOKENIZER_BIN} not found")
        run([os.path.join(bindir, "llama-convert-llama2c-to-ggml"),
             "--copy-vocab-from-model", TOKENIZER_BIN,
             "--llama2c-model", binp, "--llama2c-output-model", f32 + ".tmp"])
        os.replace(f32 + ".tmp", f32)
    set_context_length(src, f32, m["seq_len"])
    paths["F32"] = f32
    for q in ("F16", "Q8_0"):
        out = os.path.join(d, f"{name}-{q.lower()}.gguf")
        if not os.path.exists(out) or \
                os.path.getmtime(out) < os.path.getmtime(f32):
            log(f"quantizing to {q} (llama-quantize)")
            run([os.path.join(bindir, "llama-quantize"), f32, out + ".tmp",
                 q])
            os.replace(out + ".tmp", out)
        set_context_length(src, out, m["seq_len"])
        paths[q] = out
    return paths


def set_context_length(src, path, n):
    """llama-convert-llama2c-to-ggml writes llama.context_length = 128 (its
    hard-coded n_ctx), not the checkpoint's seq_len; a reader that holds
    the model to it (tra-llama) could not run 192 positions. Sets it to n in
    place (when it differs)."""
    sys.path.insert(0, os.path.join(src, "gguf-py"))
    from gguf import GGUFReader  # llama.cpp's own reader
    r = GGUFReader(path, "r+")
    field = r.fields["llama.context_length"]
    if int(field.parts[-1][0]) != n:
        log(f"setting llama.context_length {int(field.parts[-1][0])} -> {n} "
            f"in {os.path.basename(path)}")
        field.parts[-1][0] = n
        r.data.flush()
    del r


def gguf_weight_bytes(src, path):
    """Bytes of the weights a decoding step reads (all tensors but the token
    embedding, of which it reads one row), and the tensor types."""
    sys.path.insert(0, os.path.join(src, "gguf-py"))
    from gguf import GGUFReader  # llama.cpp's own reader
    r = GGUFReader(path)
    total, types = 0, {}
    for t in r.tensors:
        types[t.tensor_type.name] = types.get(t.tensor_type.name, 0) + 1
        if t.name != "token_embd.weight":
            total += int(t.n_bytes)
    return total, types


# --------------------------------------------------------------------------
# NumPy float64 reference
# --------------------------------------------------------------------------

def reference_greedy(binp, prompt, n_new):
    """Greedy ids (and the top-1/top-2 logit margin of each) from a float64
    forward pass of the llama2.c checkpoint: the prompt as one causal
    batch, then one token per step (Meta model.py semantics)."""
    sys.path.insert(0, os.path.join(ROOT, "test", "Frontend", "Inputs"))
    from llama2c_reference import load, rmsnorm
    cfg, w = load(binp)
    d, hd, nh, nkv = cfg["dim"], cfg["hd"], cfg["heads"], cfg["kv_heads"]
    rep = nh // nkv
    nmax = len(prompt) + n_new
    kc = np.zeros((cfg["layers"], nmax, nkv, hd))
    vc = np.zeros_like(kc)
    freqs = 1.0 / (10000.0 ** (np.arange(0, hd, 2)[: hd // 2] / hd))

    def rope(x, pos):  # x [T, heads, hd], pos [T]
        ang = pos[:, None, None] * freqs[None, None, :]
        c, s = np.cos(ang), np.sin(ang)
        a, b = x[..., 0::2], x[..., 1::2]
        out = np.empty_like(x)
        out[..., 0::2] = a * c - b * s
        out[..., 1::2] = a * s + b * c
        return out

    def norm(x, g):  # rows
        return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + 1e-5) * g

    def step(tokens, start):
        T = len(tokens)
        pos = np.arange(start, start + T)
        x = w["emb"][tokens].copy()
        for l in range(cfg["layers"]):
            xn = norm(x, w["rms_att"][l])
            q = rope((xn @ w["wq"][l].T).reshape(T, nh, hd), pos)
            k = rope((xn @ w["wk"][l].T).reshape(T, nkv, hd), pos)
            v = (xn @ w["wv"][l].T).reshape(T, nkv, hd)
            kc[l, start:start + T], vc[l, start:start + T] = k, v
            keys, vals = kc[l, :start + T], vc[l, :start + T]
            out = np.empty((T, nh, hd))
            mask = pos[:, None] >= np.arange(start + T)[None, :]
            for h in range(nh):
                s = q[:, h] @ keys[:, h // rep].T / np.sqrt(hd)
                s = np.where(mask, s, -np.inf)
                p = np.exp(s - s.max(axis=1, keepdims=True))
                p /= p.sum(axis=1, keepdims=True)
                out[:, h] = p @ vals[:, h // rep]
            x = x + out.reshape(T, d) @ w["wo"][l].T
            xn = norm(x, w["rms_ffn"][l])
            a, b = xn @ w["w1"][l].T, xn @ w["w3"][l].T
            x = x + (a / (1 + np.exp(-a)) * b) @ w["w2"][l].T
        return norm(x[-1], w["rms_final"]) @ w["cls"].T

    ids, margins = [], []
    logits = step(np.array(prompt), 0)
    pos = len(prompt)
    for i in range(n_new):
        top = np.argsort(logits)[-2:]
        ids.append(int(top[1]))
        margins.append(float(logits[top[1]] - logits[top[0]]))
        if i + 1 < n_new:
            logits = step(np.array([ids[-1]]), pos)
            pos += 1
    return ids, margins


# --------------------------------------------------------------------------
# Engines
# --------------------------------------------------------------------------

def tra_cmd(exe, checkpoint, prompt, steps, args, cache, extra=()):
    return [exe, "run", "--checkpoint", checkpoint, "--hw", "local",
            "--num-threads", str(args.threads),
            "--max-seq-len", str(args.prefill + args.decode),
            "--prompt-ids", ",".join(map(str, prompt)),
            "--steps", str(steps), "--cache-dir", cache, *extra]


def tra_greedy(exe, checkpoint, prompt, n_new, args, cache, extra=()):
    """tra-llama's greedy ids, or (None, error) when it fails."""
    proc = subprocess.run(
        tra_cmd(exe, checkpoint, prompt, len(prompt) + n_new, args, cache,
                ("--print-ids", *extra)),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, errors="replace")
    if proc.returncode != 0:
        lines = [l for l in proc.stderr.strip().splitlines() if l.strip()]
        return None, (lines[-1] if lines else f"exit {proc.returncode}")
    # The ids are the last line (with a vocabulary in the checkpoint, a
    # GGUF, the text comes first).
    lines = [l for l in proc.stdout.splitlines() if l.strip()]
    try:
        return [int(t) for t in lines[-1].split()][:n_new], None
    except (ValueError, IndexError):
        return None, f"no ids in its output: {proc.stdout[-200:]!r}"


def tra_timed(exe, checkpoint, prompt, args, cache, work, extra=()):
    out = os.path.join(work, "tra-bench.json")
    if os.path.exists(out):
        os.remove(out)
    proc = subprocess.run(
        tra_cmd(exe, checkpoint, prompt, args.prefill + args.decode, args,
                cache, ("--warmup", "--bench-json", out, *extra)),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, errors="replace")
    if proc.returncode != 0:
        lines = [l for l in proc.stderr.strip().splitlines() if l.strip()]
        return None, (lines[-1] if lines else f"exit {proc.returncode}")
    with open(out) as f:
        return json.load(f), proc.stderr


def llama_greedy(bindir, gguf, prompt, n_new, threads, kv):
    proc = run([os.path.join(bindir, "greedy_ids"), gguf, str(threads),
                str(n_new), kv, ",".join(map(str, prompt))])
    return [int(t) for t in proc.stdout.split()]


def llama_cpp_bench(bindir, gguf, args):
    """One llama-bench run (-r 1, its own warm-up): (prefill, decode)
    tokens/s."""
    proc = run([os.path.join(bindir, "llama-bench"), "-m", gguf,
                "-t", str(args.threads), "-p", str(args.prefill),
                "-n", str(args.decode), "-r", "1", "-o", "json"])
    pf = dec = None
    for test in json.loads(proc.stdout):
        if test["n_prompt"] and not test["n_gen"]:
            pf = test["avg_ts"]
        elif test["n_gen"] and not test["n_prompt"]:
            dec = test["avg_ts"]
    return pf, dec


# --------------------------------------------------------------------------
# Bandwidth
# --------------------------------------------------------------------------

BANDWIDTH_C = r"""
// Read bandwidth as a decoding step sees it: a vectorised sum over 1 GiB
// of float32 on all OpenMP threads, best of 5 passes. The array is on huge
// pages where the kernel gives them (tra's weights are; 4 KiB pages cost
// a TLB miss each and read about 13% slower on the development VM).
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
int main(void) {
  size_t n = (size_t)1 << 28;  // 1 GiB of float
  float *a = aligned_alloc((size_t)2 << 20, n * sizeof(float));
#ifdef MADV_HUGEPAGE
  madvise(a, n * sizeof(float), MADV_HUGEPAGE);
#endif
  #pragma omp parallel for schedule(static)
  for (size_t i = 0; i < n; ++i) a[i] = (float)(i & 1023) * 1e-3f;
  double best = 0, sink = 0;
  for (int r = 0; r < 5; ++r) {
    double t = omp_get_wtime();
    float s = 0;
    #pragma omp parallel for simd schedule(static) reduction(+ : s)
    for (size_t i = 0; i < n; ++i) s += a[i];
    t = omp_get_wtime() - t;
    sink += s;
    double gbs = n * sizeof(float) / t / 1e9;
    if (gbs > best) best = gbs;
  }
  printf("%.3f %d %g\n", best, omp_get_max_threads(), sink);
  free(a);
  return 0;
}
"""


def bandwidth(work, threads):
    d = os.path.join(work, "bandwidth")
    os.makedirs(d, exist_ok=True)
    src, exe = os.path.join(d, "bandwidth.c"), os.path.join(d, "bandwidth")
    with open(src, "w") as f:
        f.write(BANDWIDTH_C)
    run(["cc", "-O3", "-march=native", "-fopenmp", "-o", exe, src])
    env = dict(os.environ, OMP_NUM_THREADS=str(threads),
               OMP_PROC_BIND="spread")
    out = run([exe], env=env).stdout.split()
    return float(out[0]) * 1e9


def busy_cpu_seconds():
    """Starts measuring the CPU time of processes other than this one and
    its children; returns a function giving the cores they used on average
    since (from /proc/stat's busy time, minus our own)."""
    def busy():
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
        # user nice system idle iowait irq softirq steal (guest is in user)
        return (sum(v[:8]) - v[3] - v[4]) / os.sysconf("SC_CLK_TCK")

    def ours():
        t = os.times()
        return t.user + t.system + t.children_user + t.children_system

    b0, o0, w0 = busy(), ours(), time.perf_counter()

    def cores():
        other = (busy() - b0) - (ours() - o0)
        return max(other, 0.0) / (time.perf_counter() - w0)
    return cores


# --------------------------------------------------------------------------

def stats(values):
    values = [v for v in values if v is not None]
    if not values:
        return None
    return statistics.median(values), min(values), max(values)


def fmt(s):
    if s is None:
        return "-"
    med, lo, hi = s
    return f"{med:8.1f} ({lo:.1f}-{hi:.1f})"


def agreement(ids, ref):
    """Number of leading ids equal to the reference's."""
    n = 0
    for a, b in zip(ids, ref):
        if a != b:
            break
        n += 1
    return n


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"),
                        help="tra build directory (bin/tra-llama)")
    parser.add_argument("--work", default=os.path.join(
        os.path.expanduser("~"), ".cache", "tra-bench"),
        help="cache: llama.cpp build, models, tra's compiled models")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--prefill", type=int, default=128)
    parser.add_argument("--decode", type=int, default=64)
    parser.add_argument("--skip-torch", action="store_true",
                        help="no PyTorch eager rows")
    parser.add_argument("--skip-build-check", action="store_true",
                        help="use the cached llama.cpp binaries as they are "
                        "(no `cmake --build` up-to-date check)")
    args = parser.parse_args()
    if args.rounds < 1 or args.prefill < 2 or args.decode < 1:
        sys.exit("need --rounds >= 1, --prefill >= 2, --decode >= 1")
    if len(CHECK_PROMPT) + CHECK_TOKENS > args.prefill + args.decode:
        sys.exit("the agreement check needs --prefill + --decode >= "
                 f"{len(CHECK_PROMPT) + CHECK_TOKENS}")
    exe = os.path.join(args.build, "bin", "tra-llama")
    if not os.path.exists(exe):
        sys.exit(f"error: {exe} not found (--build BUILD)")
    t_start = time.perf_counter()
    work = os.path.abspath(args.work)
    os.makedirs(work, exist_ok=True)

    commit, src, bindir = llama_cpp(work, not args.skip_build_check)
    paths = models(work, src, bindir)
    wbytes = {q: gguf_weight_bytes(src, paths[q]) for q in
              ("F32", "F16", "Q8_0")}
    bws = [bandwidth(work, args.threads)]  # once more every round
    bw = bws[0]
    m = MODEL
    log(f"\nllama.cpp {commit[:12]} (node-llama-cpp@3.21.1's bundle); "
        f"model: random LLaMA dim {m['dim']}, {m['layers']} layers, "
        f"{m['heads']} heads ({m['kv_heads']} KV), hidden {m['hidden']}, "
        f"vocab {m['vocab']}, unshared classifier, seed {SEED}, "
        f"{os.path.getsize(paths['bin']) / 1e6:.0f} MB .bin")
    for q, (b, types) in wbytes.items():
        log(f"  {q:5s} GGUF {os.path.getsize(paths[q]) / 1e6:6.0f} MB; a "
            f"decoding step reads {b / 1e6:.0f} MB of weights; tensor types "
            + ", ".join(f"{k} x{v}" for k, v in sorted(types.items())))
    log(f"measured read bandwidth ({args.threads} threads, 1 GiB, best of "
        f"5): {bw / 1e9:.2f} GB/s")

    cache = os.path.join(work, "tra-cache")
    tmp = tempfile.mkdtemp(prefix="peer-bench-")

    # ---- greedy agreement ------------------------------------------------
    log(f"\n== greedy agreement: prompt {CHECK_PROMPT}, {CHECK_TOKENS} "
        "tokens")
    t = time.perf_counter()
    ref, margins = reference_greedy(paths["bin"], CHECK_PROMPT, CHECK_TOKENS)
    log(f"NumPy float64 reference ({time.perf_counter() - t:.0f} s): "
        + " ".join(map(str, ref)))
    log(f"  smallest top-1/top-2 logit margin {min(margins):.3g} (step "
        f"{int(np.argmin(margins))})")
    checks = {}   # name -> (ids or None, note, must agree)

    t = time.perf_counter()
    ids, err = tra_greedy(exe, paths["bin"], CHECK_PROMPT, CHECK_TOKENS,
                          args, cache)
    log(f"(tra-llama check run, compiles unless cached: "
        f"{time.perf_counter() - t:.0f} s)")
    checks["tra f32 (.bin)"] = (ids, err, True)
    checks["llama.cpp F32 GGUF, f32 KV"] = (llama_greedy(
        bindir, paths["F32"], CHECK_PROMPT, CHECK_TOKENS, args.threads,
        "f32"), None, True)
    checks["llama.cpp F32 GGUF, f16 KV (default)"] = (llama_greedy(
        bindir, paths["F32"], CHECK_PROMPT, CHECK_TOKENS, args.threads,
        "f16"), None, False)
    for q in ("F16", "Q8_0"):
        checks[f"llama.cpp {q} GGUF"] = (llama_greedy(
            bindir, paths[q], CHECK_PROMPT, CHECK_TOKENS, args.threads,
            "f16"), None, False)
    tra_gguf = {}
    for q, extra in (("F32", ()), ("F16", ()), ("Q8_0", ())):
        ids, err = tra_greedy(exe, paths[q], CHECK_PROMPT, CHECK_TOKENS,
                              args, cache, extra)
        tra_gguf[q] = err is None
        checks[f"tra {q} GGUF"] = (ids, err, q == "F32")
    torch_model = torch_ref = None
    if not args.skip_torch:
        import torch
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import llama_bench as torch_ref
        torch.set_num_threads(args.threads)
        _, torch_model = torch_ref.build_torch_model(
            paths["bin"], args.prefill + args.decode)
        _, _, rows = torch_ref.torch_generate(torch_model, CHECK_PROMPT,
                                                CHECK_TOKENS - 1)
        rows = rows.reshape(-1, m["vocab"])[len(CHECK_PROMPT) - 1:]
        checks["PyTorch eager f32"] = (
            [int(i) for i in np.argmax(rows, axis=1)], None, True)
    failed = []
    for name, (ids, err, strict) in checks.items():
        if ids is None:
            log(f"  {name:38s} not run: {err}")
            if name == "tra f32 (.bin)":
                failed.append(name)
            continue
        n = agreement(ids, ref)
        ok = ids == ref
        verdict = "agree" if ok else f"first {n} of {CHECK_TOKENS} agree"
        if not ok and strict:
            failed.append(name)
            verdict += "  <-- DISAGREES"
        log(f"  {name:38s} {verdict}")
        if not ok:
            log(f"      ids: {' '.join(map(str, ids))}")
    # The quantised files against each other: tra and llama.cpp on the same
    # F16 / Q8_0 weights (llama.cpp also rounds its activations to 8 bits
    # for Q8_0 products, tra keeps them f32, so late tokens may part).
    for q in ("F16", "Q8_0"):
        ours, theirs = checks[f"tra {q} GGUF"][0], checks[f"llama.cpp {q} GGUF"][0]
        if ours is not None and theirs is not None:
            n = agreement(ours, theirs)
            log(f"  tra {q} vs llama.cpp {q}: "
                + ("agree" if ours == theirs else
                   f"first {n} of {CHECK_TOKENS} agree"))

    # ---- speed -------------------------------------------------------------
    rng = np.random.default_rng(1)
    prompt = [1] + [int(x) for x in
                    rng.integers(3, m["vocab"], args.prefill - 1)]
    log(f"\n== speed: prefill {args.prefill} tokens, decode {args.decode} "
        f"tokens, {args.threads} threads, {args.rounds} rounds")
    t = time.perf_counter()
    first, note = tra_timed(exe, paths["bin"], prompt, args, cache, tmp)
    if first is None:
        sys.exit(f"error: tra-llama failed: {note}")
    log(f"tra-llama first run (compiles, untimed): "
        f"{time.perf_counter() - t:.0f} s, compile "
        f"{first['compile_seconds']:.1f} s")
    tra_variants = {"F32": ("bin", ())}
    for q, extra in (("F16", ()), ("Q8_0", ())):
        if tra_gguf[q]:
            tra_variants[q] = (q, extra)
            r, note = tra_timed(exe, paths[q], prompt, args, cache, tmp,
                                extra)  # compiles, untimed
            if r is None:
                del tra_variants[q]
                tra_gguf[q] = False
    rows = {}  # (engine, weights) -> lists

    def add(key, pf, dec):
        rows.setdefault(key, ([], []))
        rows[key][0].append(pf)
        rows[key][1].append(dec)

    others = []
    pairs = {}  # weights -> (prefill ratios, decode ratios), one per round
    for rnd in range(args.rounds):
        busy0 = busy_cpu_seconds()
        # Each weight type's tra and llama.cpp runs back to back, which one
        # first alternating from round to round: this VM's memory bandwidth
        # drifts over minutes, so the ratio of a pair is steadier than the
        # ratio of medians taken minutes apart.
        for q in ("F32", "F16", "Q8_0"):
            def ours():
                if q not in tra_variants:
                    return
                path_key, extra = tra_variants[q]
                r, note = tra_timed(exe, paths[path_key], prompt, args,
                                    cache, tmp, extra)
                if r is None:
                    sys.exit(f"error: tra-llama failed: {note}")
                if r.get("compiled_now"):
                    log("warning: tra-llama compiled again (cache miss)")
                add(("tra", q), r["prefill_tokens_per_s"],
                    r["decode_tokens_per_s"])

            def theirs():
                add(("llama.cpp", q), *llama_cpp_bench(bindir, paths[q],
                                                        args))

            for engine in ((ours, theirs) if rnd % 2 == 0 else
                           (theirs, ours)):
                engine()
            if q in tra_variants:
                pairs.setdefault(q, ([], []))
                for i in (0, 1):
                    tra_v = rows[("tra", q)][i][-1]
                    their_v = rows[("llama.cpp", q)][i][-1]
                    pairs[q][i].append(tra_v / their_v
                                       if tra_v and their_v else None)
        if torch_model is not None:
            pf, dec, _ = torch_ref.torch_generate(torch_model, prompt,
                                                    args.decode)
            add(("PyTorch eager", "F32"), args.prefill / pf,
                args.decode / dec)
        bws.append(bandwidth(work, args.threads))
        others.append(busy0())
        log(f"round {rnd + 1}: " + "; ".join(
            f"{e} {q} {v[0][-1]:.0f}/{v[1][-1]:.1f}"
            for (e, q), v in rows.items()) + " (prefill/decode tokens/s); "
            f"bandwidth {bws[-1] / 1e9:.1f} GB/s; other processes used "
            f"{others[-1]:.2f} cores")

    # ---- table ------------------------------------------------------------
    bw = max(bws)  # the machine's bandwidth: the best measurement
    log("cores used by other processes during each round: "
        + ", ".join(f"{x:.2f}" for x in others) + f" (of {os.cpu_count()};"
        " well above 0 means the engines shared the cores with others: "
        "llama.cpp's spinning thread barrier suffers most)")
    log(f"read bandwidth over {len(bws)} measurements (each best of 5 "
        f"passes): max {bw / 1e9:.2f} GB/s, min {min(bws) / 1e9:.2f} GB/s")
    roof = {q: bw / b for q, (b, _) in wbytes.items()}
    order = [("tra", "F32"), ("llama.cpp", "F32"), ("PyTorch eager", "F32"),
             ("tra", "F16"), ("llama.cpp", "F16"), ("tra", "Q8_0"),
             ("llama.cpp", "Q8_0")]
    log(f"\n== results: tokens/s, median (min-max) of {args.rounds} rounds; "
        f"{args.threads} threads; roofline = {bw / 1e9:.2f} GB/s / weight "
        "bytes per decoding step")
    head = (f"{'engine':14s} {'weights':7s} {'prefill tok/s':>24s} "
            f"{'decode tok/s':>22s} {'roofline':>9s} {'% roof':>7s}")
    log(head)
    log("-" * len(head))
    med = {}
    for e, q in order:
        if e == "PyTorch eager" and torch_model is None:
            continue
        roofq = roof[q]
        if (e, q) not in rows:
            reason = ("tra: GGUF not readable yet" if e == "tra"
                      else "not run")
            log(f"{e:14s} {q:7s} {reason}")
            continue
        pf, dec = stats(rows[(e, q)][0]), stats(rows[(e, q)][1])
        med[(e, q)] = (pf[0] if pf else None, dec[0] if dec else None)
        pct = f"{100 * dec[0] / roofq:6.1f}%" if dec else "-"
        log(f"{e:14s} {q:7s} {fmt(pf):>24s} {fmt(dec):>22s} "
            f"{roofq:9.1f} {pct:>7s}")
    log("")
    if ("tra", "F32") in med and ("llama.cpp", "F32") in med:
        (tp, td), (lp, ld) = med[("tra", "F32")], med[("llama.cpp", "F32")]
        log(f"f32: tra / llama.cpp prefill {tp / lp:.2f}x, decode "
            f"{td / ld:.2f}x (medians); decode at {100 * td / roof['F32']:.0f}"
            f"% (tra) and {100 * ld / roof['F32']:.0f}% (llama.cpp) of the "
            "roofline")
    for q in ("F16", "Q8_0"):
        if ("tra", q) in med and ("llama.cpp", q) in med:
            (tp, td), (lp, ld) = med[("tra", q)], med[("llama.cpp", q)]
            log(f"{q}: tra / llama.cpp prefill {tp / lp:.2f}x, decode "
                f"{td / ld:.2f}x (medians)")
        elif not tra_gguf.get(q):
            log(f"{q}: tra: GGUF not readable yet")
    log("tra / llama.cpp of the runs back to back in each round, median "
        "(min-max) over the rounds:")
    for q, (pf, dec) in pairs.items():
        pf, dec = stats(pf), stats(dec)
        if pf and dec:
            log(f"  {q:5s} prefill {pf[0]:.2f}x ({pf[1]:.2f}-{pf[2]:.2f}), "
                f"decode {dec[0]:.2f}x ({dec[1]:.2f}-{dec[2]:.2f})")
    if ("tra", "F16") in med and ("tra", "F32") in med:
        log(f"tra F16 / tra F32 decode: "
            f"{med[('tra', 'F16')][1] / med[('tra', 'F32')][1]:.2f}x "
            "(medians)")
    if not tra_gguf.get("F32"):
        log("(tra on the f32 GGUF: GGUF not readable yet; tra's f32 row is "
            "the .bin)")
    log("tra's rows: tra-llama run on the .bin (F32) or the GGUF with the "
        "default --weight-dtype: F16 weights stay 16-bit; Q8_0 weights "
        "stay 8-bit (i8 values and f16 block scales, dequantised in "
        "registers by tra_exec_gemm_q8; see docs/Tools.md).")
    log("llama-bench's decode (tg) starts at an empty context; tra's and "
        "PyTorch's decode follow the prefill. llama.cpp's KV cache is f16 "
        "(its default) in the timings. llama2.c run.c: not available "
        "offline, not run.")
    shutil.rmtree(tmp, ignore_errors=True)
    log(f"total time {time.perf_counter() - t_start:.0f} s")
    if failed:
        log("\nERROR: greedy tokens disagree with the float64 reference: "
            + ", ".join(failed))
        sys.exit(1)


if __name__ == "__main__":
    main()
