#!/usr/bin/env python3
"""The GPU check of issue 14 (see scripts/device-check.sh): runs the programs
of this folder on the GPU and compares them with the references computed on
the CPU machine. Prints one line per result; exits 1 if any check fails.

With TRA_DEVICE_DRY_RUN=1: checks that every program starts and, without a
usable GPU (TRA_CUDA_DRIVER pointed at nothing), exits 1 with the one-line
message, and that nothing else is missing."""
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REF = os.path.join(HERE, "ref")
DRY = os.environ.get("TRA_DEVICE_DRY_RUN") == "1"
failures = []


def report(name, ok, detail):
    print(f"{name}: {'OK' if ok else 'FAIL'} ({detail})", flush=True)
    if not ok:
        failures.append(name)


def run(args, env=None):
    start = time.perf_counter()
    proc = subprocess.run([os.path.join(HERE, args[0])] + args[1:],
                          capture_output=True, text=True, env=env)
    return proc, time.perf_counter() - start


def dry_run():
    env = dict(os.environ, TRA_CUDA_DRIVER="/nonexistent/libcuda.so.1")
    for program in ["block", "decode", "matmul_bf16"]:
        proc, _ = run([program, "--output", "x=/nonexistent/never.npy"], env)
        lines = proc.stderr.strip().splitlines()
        ok = (proc.returncode == 1 and len(lines) == 1 and
              "needs an NVIDIA GPU" in lines[0] and "--emulate-on-cpu" in lines[0])
        report(f"dry-run {program}", ok, lines[0] if lines else f"exit {proc.returncode}")
    # The engine: every step library loads, and without a GPU tra-generate
    # refuses in one line.
    for steps in [["stories_decode.so", "stories_prefill.so"],
                  ["llama1b_decode.so", "llama1b_prefill.so"]]:
        args = ["tra-generate", "--checkpoint", f"{REF}/stories/stories260K.bin",
                "--prompt-ids", "1", "--steps", "2"]
        for lib in steps:
            args += ["--program", os.path.join(HERE, lib)]
        proc, _ = run(args, env)
        lines = proc.stderr.strip().splitlines()
        ok = (proc.returncode == 1 and len(lines) == 1 and
              "needs an NVIDIA GPU" in lines[0])
        report(f"dry-run tra-generate {steps[0]}", ok,
               lines[0] if lines else f"exit {proc.returncode}")
    for name in ["x.npy", "cpu_out.npy", "weights.safetensors",
                 "stories/stories260K.bin", "stories/cpu_ids.txt",
                 "stories/freqs_cos.npy", "stories/freqs_sin.npy"]:
        report(f"dry-run ref/{name}", os.path.exists(os.path.join(REF, name)), "present")
    report("dry-run llama_bf16.py", os.path.exists(os.path.join(HERE, "llama_bf16.py")),
           "present")


def check_block():
    with tempfile.TemporaryDirectory() as tmp:
        args = ["block"]
        for name in ["x", "pos", "k_cache", "v_cache"]:
            args += ["--input", f"{name}={REF}/{name}.npy"]
        args += ["--weights", f"{REF}/weights.safetensors", "--repeat", "5", "--profile"]
        outs = {"out": "cpu_out", "k_cache_out": "cpu_k", "v_cache_out": "cpu_v"}
        for name in outs:
            args += ["--output", f"{name}={tmp}/{name}.npy"]
        proc, seconds = run(args)
        if proc.returncode:
            report("llama block", False, proc.stderr.strip())
            return
        worst = 0.0
        for name, ref in outs.items():
            got = np.load(f"{tmp}/{name}.npy").astype(np.float64)
            want = np.load(f"{REF}/{ref}.npy").astype(np.float64)
            worst = max(worst, float(np.abs(got - want).max()))
        profile = [l for l in proc.stderr.splitlines() if l.startswith("profile: @")]
        report("llama block vs CPU", worst <= 1e-5,
               f"max abs difference {worst:.3e}; {profile[0] if profile else ''}")


def greedy(program, steps):
    """stories260K's greedy ids from BOS: one call of `program` (a one-token
    step) per token, the KV caches carried between calls as .npy files, the
    RoPE tables those of ref/. Returns the ids and the seconds per call."""
    layers = 5
    with tempfile.TemporaryDirectory() as tmp:
        caches = {}
        for l in range(layers):
            for kind in ["k", "v"]:
                caches[f"layers.{l}.{kind}_cache"] = np.zeros((512, 4, 8), np.float32)
        token, ids, times = 1, [], []
        for pos in range(steps):
            np.save(f"{tmp}/tokens.npy", np.array([token], np.int64))
            np.save(f"{tmp}/pos.npy", np.array(pos, np.int64))
            args = [program, "--weights", f"{REF}/stories/stories260K.bin",
                    "--input", f"tokens={tmp}/tokens.npy", "--input", f"pos={tmp}/pos.npy",
                    "--input", f"freqs_cos={REF}/stories/freqs_cos.npy",
                    "--input", f"freqs_sin={REF}/stories/freqs_sin.npy",
                    "--output", f"logits={tmp}/logits.npy"]
            for name, value in caches.items():
                np.save(f"{tmp}/{name}.npy", value)
                args += ["--input", f"{name}={tmp}/{name}.npy",
                         "--output", f"{name}_out={tmp}/{name}_out.npy"]
            proc, seconds = run(args)
            times.append(seconds)
            if proc.returncode:
                raise RuntimeError(proc.stderr.strip())
            for name in caches:
                caches[name] = np.load(f"{tmp}/{name}_out.npy")
            token = int(np.argmax(np.load(f"{tmp}/logits.npy")[0]))
            ids.append(str(token))
    return ids, times


def check_stories(steps):
    want = open(f"{REF}/stories/cpu_ids.txt").read().split()[:steps]
    try:
        ids, times = greedy("decode", steps)
    except RuntimeError as e:
        report("stories260K greedy ids vs CPU", False, str(e))
        return
    report("stories260K greedy ids vs CPU", ids == want,
           f"{steps} ids {' '.join(ids[:10])} ...; CPU {' '.join(want[:10])} ...; "
           f"{1e3 * min(times):.0f} ms per step process")


def check_matmul():
    import torch
    n = 8192
    gen = torch.Generator().manual_seed(0)
    a = torch.randn(n, n, generator=gen).to(torch.bfloat16)
    b = torch.randn(n, n, generator=gen).to(torch.bfloat16)
    with tempfile.TemporaryDirectory() as tmp:
        np.save(f"{tmp}/a.npy", a.float().numpy())
        np.save(f"{tmp}/b.npy", b.float().numpy())
        proc, _ = run(["matmul_bf16", "--input", f"a={tmp}/a.npy", "--input",
                       f"b={tmp}/b.npy", "--output", f"c={tmp}/c.npy",
                       "--repeat", "10", "--profile"])
        if proc.returncode:
            report("bf16 matmul 8192^3", False, proc.stderr.strip())
            return
        line = [l for l in proc.stderr.splitlines() if l.startswith("profile: @")][0]
        tra_ms = float(line.split("min ")[1].split(" ms")[0])
        got = torch.from_numpy(np.load(f"{tmp}/c.npy"))
    ga, gb = a.cuda(), b.cuda()
    want = (ga @ gb).float().cpu()
    err = float(((got - want).abs().max() / want.abs().max()).item())
    for _ in range(3):
        ga @ gb
    torch.cuda.synchronize()
    times = []
    for _ in range(10):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        ga @ gb
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    torch_ms = min(times)
    tflops = 2 * n ** 3 / (tra_ms * 1e-3) / 1e12
    report("bf16 matmul 8192^3 vs torch.matmul", err < 2e-2 and torch_ms / tra_ms >= 0.9,
           f"tra {tra_ms:.3f} ms ({tflops:.0f} Tflop/s), torch {torch_ms:.3f} ms, "
           f"ratio {torch_ms / tra_ms:.2f}x, max relative error {err:.2e}")


def check_engine_stories(steps):
    """tra-generate on the GPU (LocalModel, weights and caches on the
    device): stories260K's greedy ids from BOS, and with a 3-token prefill."""
    want = open(f"{REF}/stories/cpu_ids.txt").read().split()[:steps]
    proc, seconds = run(["tra-generate", "--checkpoint", f"{REF}/stories/stories260K.bin",
                         "--program", os.path.join(HERE, "stories_decode.so"),
                         "--program", os.path.join(HERE, "stories_prefill.so"),
                         "--prompt-ids", "1", "--steps", str(steps), "--print-ids"])
    ids = proc.stdout.split()
    report("engine on the GPU: stories260K greedy ids vs CPU",
           proc.returncode == 0 and ids == want,
           f"{' '.join(ids[:10])} ...; CPU {' '.join(want[:10])} ...; "
           f"{seconds:.2f} s; {proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else ''}")
    # A 3-token prompt (the model's own first ids) through the prefill step.
    prompt = ["1"] + want[:2]
    proc, _ = run(["tra-generate", "--checkpoint", f"{REF}/stories/stories260K.bin",
                   "--program", os.path.join(HERE, "stories_decode.so"),
                   "--program", os.path.join(HERE, "stories_prefill.so"),
                   "--prompt-ids", ",".join(prompt), "--steps", str(steps), "--print-ids"])
    ids = proc.stdout.split()
    report("engine on the GPU: stories260K after a 3-token prefill vs CPU",
           proc.returncode == 0 and ids == want[2:],
           f"{' '.join(ids[:8])} ...; {proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else ''}")


def check_llama_bf16(prompt_len=512, decode=64):
    """The 1.1B bf16 model: tra-generate's prefill and decode rates on the
    GPU against the HBM roofline and PyTorch eager on the same weights."""
    import json
    py = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        ckpt = os.path.join(tmp, "llama1b")
        made = subprocess.run([py, os.path.join(HERE, "llama_bf16.py"), "meta", ckpt],
                              capture_output=True, text=True)
        if made.returncode:
            report("bf16 1.1B model", False, made.stderr.strip()[-400:])
            return
        vocab = 32000
        prompt = [1] + [(7 * i + 3) % vocab for i in range(1, prompt_len)]
        bench = os.path.join(tmp, "tra.json")
        proc, _ = run(["tra-generate", "--checkpoint", ckpt,
                       "--program", os.path.join(HERE, "llama1b_decode.so"),
                       "--program", os.path.join(HERE, "llama1b_prefill.so"),
                       "--prompt-ids", ",".join(map(str, prompt)),
                       "--steps", str(prompt_len + decode), "--print-ids",
                       "--warmup", "--bench-json", bench])
        if proc.returncode:
            report("bf16 1.1B model on tra-generate", False, proc.stderr.strip()[-400:])
            return
        tra = json.load(open(bench))
        tra_ids = proc.stdout.split()
        ref = os.path.join(tmp, "torch.json")
        base = subprocess.run([py, os.path.join(HERE, "llama_bf16.py"), "torch", ckpt,
                               str(prompt_len), str(decode), ref],
                              capture_output=True, text=True)
        if base.returncode:
            report("bf16 1.1B model on PyTorch eager", False, base.stderr.strip()[-400:])
            return
        torch_result = json.load(open(ref))
    same = 0
    for a, b in zip(tra_ids, map(str, torch_result["ids"])):
        if a != b:
            break
        same += 1
    decode_rate = tra["decode_tokens_per_s"]
    roofline = torch_result["weight_bytes"] * decode_rate / torch_result["copy_bytes_per_s"]
    ratio = decode_rate / torch_result["decode_tokens_per_s"]
    report("bf16 1.1B decode: HBM roofline and vs PyTorch eager",
           roofline >= 0.8 and ratio >= 1.5,
           f"tra {decode_rate:.1f} tok/s = {100 * roofline:.0f}% of "
           f"{torch_result['weight_bytes'] / 1e9:.2f} GB x tok/s at "
           f"{torch_result['copy_bytes_per_s'] / 1e9:.0f} GB/s copy bandwidth; "
           f"PyTorch eager {torch_result['decode_tokens_per_s']:.1f} tok/s, ratio {ratio:.2f}x "
           f"(need 80% and 1.5x); first {same} greedy ids equal")
    prefill = tra["prefill_tokens_per_s"]
    report(f"bf16 1.1B prefill of {prompt_len} tokens vs PyTorch eager",
           prefill / torch_result["prefill_tokens_per_s"] >= 1.0,
           f"tra {prefill:.0f} tok/s, PyTorch eager "
           f"{torch_result['prefill_tokens_per_s']:.0f} tok/s, ratio "
           f"{prefill / torch_result['prefill_tokens_per_s']:.2f}x (need 1.0x)")


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "reference":
        # Here, on the CPU: the ids the GPU must give, by the same loop.
        ids, _ = greedy(os.path.abspath(sys.argv[2]), 32)
        open(f"{REF}/stories/cpu_ids.txt", "w").write(" ".join(ids) + "\n")
        print("reference ids:", " ".join(ids))
        return
    if DRY:
        dry_run()
    else:
        for check in [check_block, lambda: check_stories(32), check_matmul,
                      lambda: check_engine_stories(32), check_llama_bf16]:
            try:
                check()
            except Exception as e:  # a broken check is a failed check
                report(getattr(check, "__name__", "check"), False, repr(e))
    if failures:
        print(f"FAILED: {', '.join(failures)}")
        sys.exit(1)
    print("all checks passed")


if __name__ == "__main__":
    main()
