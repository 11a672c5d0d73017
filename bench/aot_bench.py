#!/usr/bin/python3
"""Benchmarks of ahead-of-time compiled tra executables (issue 4).

    /usr/bin/python3 bench/aot_bench.py [--build DIR] [--compiler PATH]
        [--hw FILE] [--threads N] [--repeat N] [--rounds N] [--work DIR]
        [--only NAME ...]

Prints, measured in this one run (never asserted):

  matmul   f32 2048x2048x2048 through a compiled executable vs a direct
           cblas_sgemm call (bench/sgemm_ref.c), both on --threads threads:
           the time ratio tra / cblas (target <= 1.05).
  mlp      a 4-layer MLP (batch 256, width 2048, bias + ReLU) compiled vs
           PyTorch on --threads threads: the ratio tra / torch (target <= 1).
  compile  the compile time of examples/llama_block.mlir (target < 5 s).

Times are the fastest of --repeat runs of the compiled function inside one
process (`--repeat` and `--profile` of the executable), so file I/O and
process start are not counted; the references are timed the same way. The
compiled program and its reference take turns for --rounds rounds and each
keeps its fastest time, which makes the ratios robust against other load on
the machine (run it on an idle machine for numbers worth noting).
The compiler is --compiler (default: DIR/bin/tra-compile, run with
--hw HW --emit=exe; a compiler named otherwise is run as
COMPILER MODEL -o OUT).

Each benchmark prints its own line; the generated loops run on the same
--threads as BLAS (OpenMP, see docs/Lowering.md).
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROFILE = re.compile(r"min ([0-9.]+) ms, median ([0-9.]+) ms")


def run(cmd, **kwargs):
    """Runs `cmd`, failing loudly with its output."""
    result = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
    if result.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{result.stdout}{result.stderr}")
    return result


def compile_model(args, model, out, entry=None):
    """Compiles `model` to the executable `out`; returns the seconds taken."""
    cmd = [args.compiler, model, "-o", out] + (["--entry", entry] if entry else [])
    if os.path.basename(args.compiler) == "tra-compile":
        cmd += ["--hw", args.hw, "--emit=exe"]
    start = time.perf_counter()
    run(cmd)
    return time.perf_counter() - start


def time_executable(args, exe, inputs):
    """Runs `exe` with `inputs` (name -> path); returns the fastest ms."""
    cmd = [exe, "--threads", str(args.threads), "--repeat", str(args.repeat),
           "--profile"]
    for name, path in inputs.items():
        cmd += ["--input", f"{name}={path}"]
    match = PROFILE.search(run(cmd).stderr)
    if not match:
        sys.exit(f"{exe}: no profile line in its output")
    return float(match.group(1))


def alternate(args, first, second):
    """Runs the timers `first` and `second` in turns; returns their minima."""
    times = [(first(), second()) for _ in range(args.rounds)]
    return min(t[0] for t in times), min(t[1] for t in times)


def save(work, name, array):
    path = os.path.join(work, name + ".npy")
    np.save(path, array)
    return path


def bench_matmul(args, work):
    n = 2048
    model = os.path.join(work, "matmul.mlir")
    with open(model, "w") as f:
        f.write(f"""func.func @main(%a: tensor<{n}x{n}xf32> {{tra.name = "a"}},
                %b: tensor<{n}x{n}xf32> {{tra.name = "b"}})
    -> (tensor<{n}x{n}xf32> {{tra.name = "c"}}) {{
  %c = tra.einsum "ij,jk->ik" mul (%a, %b)
      : (tensor<{n}x{n}xf32>, tensor<{n}x{n}xf32>) -> tensor<{n}x{n}xf32>
  return %c : tensor<{n}x{n}xf32>
}}
""")
    exe = os.path.join(work, "matmul")
    compile_model(args, model, exe)
    rng = np.random.default_rng(0)
    inputs = {k: save(work, k, rng.standard_normal((n, n), dtype=np.float32))
              for k in "ab"}
    ref = os.path.join(work, "sgemm_ref")
    run(["clang-22", "-O2", os.path.join(ROOT, "bench", "sgemm_ref.c"), "-o",
         ref, "-lopenblas"])

    def time_ref():
        out = run([ref, str(n), str(n), str(n), str(args.threads),
                   str(args.repeat)]).stdout
        return float(out.split()[1])

    tra_ms, ref_ms = alternate(args, lambda: time_executable(args, exe, inputs),
                               time_ref)
    print(f"matmul {n}^3 f32, {args.threads} threads: tra {tra_ms:.1f} ms, "
          f"cblas_sgemm {ref_ms:.1f} ms, ratio tra/cblas {tra_ms / ref_ms:.3f}"
          f" (target <= 1.05)")


def mlp_model(batch, width, layers):
    """The MLP in tra: h = relu(h W^T + b) per layer."""
    x, w, v = (f"tensor<{batch}x{width}xf32>", f"tensor<{width}x{width}xf32>",
               f"tensor<{width}xf32>")
    params = [f'%x: {x} {{tra.name = "x"}}']
    body = []
    h = "%x"
    for i in range(layers):
        params += [f'%w{i}: {w} {{tra.name = "w{i}"}}',
                   f'%b{i}: {v} {{tra.name = "b{i}"}}']
        body.append(f'  %p{i} = tra.einsum "bi,oi->bo" mul ({h}, %w{i}) : ({x}, {w}) -> {x}')
        body.append(f'  %h{i} = tra.map "bo,o->bo" (%p{i}, %b{i}) : ({x}, {v}) -> {x} {{\n'
                    f'  ^bb0(%s: f32, %c: f32):\n'
                    f'    %zero = arith.constant 0.0 : f32\n'
                    f'    %t = arith.addf %s, %c : f32\n'
                    f'    %r = arith.maximumf %t, %zero : f32\n'
                    f'    tra.yield %r : f32\n  }}')
        h = f"%h{i}"
    return (f"func.func @main({', '.join(params)}) -> ({x} {{tra.name = \"y\"}}) {{\n"
            + "\n".join(body) + f"\n  return {h} : {x}\n}}\n")


def time_torch(args, inputs, layers):
    """Times the same MLP in PyTorch; returns the fastest ms."""
    import torch
    torch.set_num_threads(args.threads)
    t = {k: torch.from_numpy(np.load(p)) for k, p in inputs.items()}
    times = []
    with torch.no_grad():
        for _ in range(args.repeat + 1):
            start = time.perf_counter()
            h = t["x"]
            for i in range(layers):
                h = torch.relu(torch.nn.functional.linear(h, t[f"w{i}"], t[f"b{i}"]))
            times.append((time.perf_counter() - start) * 1e3)
    return min(times[1:])


def bench_mlp(args, work):
    batch, width, layers = 256, 2048, 4
    model = os.path.join(work, "mlp.mlir")
    with open(model, "w") as f:
        f.write(mlp_model(batch, width, layers))
    exe = os.path.join(work, "mlp")
    compile_model(args, model, exe)
    rng = np.random.default_rng(1)
    inputs = {"x": save(work, "x", rng.standard_normal((batch, width), dtype=np.float32))}
    for i in range(layers):
        inputs[f"w{i}"] = save(work, f"w{i}", rng.standard_normal(
            (width, width), dtype=np.float32) / np.float32(np.sqrt(width)))
        inputs[f"b{i}"] = save(work, f"b{i}", rng.standard_normal(width, dtype=np.float32))
    tra_ms, torch_ms = alternate(args,
                                 lambda: time_executable(args, exe, inputs),
                                 lambda: time_torch(args, inputs, layers))
    print(f"mlp {layers} x {width}, batch {batch}, {args.threads} threads: "
          f"tra {tra_ms:.1f} ms, torch {torch_ms:.1f} ms, ratio tra/torch "
          f"{tra_ms / torch_ms:.3f} (target <= 1)")


def bench_compile(args, work):
    seconds = compile_model(args, os.path.join(ROOT, "examples", "llama_block.mlir"),
                            os.path.join(work, "llama_block"), entry="llama_block")
    print(f"compile examples/llama_block.mlir: {seconds:.2f} s (target < 5 s)")


BENCHES = {"matmul": bench_matmul, "mlp": bench_mlp, "compile": bench_compile}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--compiler")
    parser.add_argument("--hw", default=os.path.join(ROOT, "hw", "cpu-1node.json"),
                        help="hardware description for tra-compile")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--work")
    parser.add_argument("--only", nargs="*", choices=sorted(BENCHES))
    args = parser.parse_args()
    args.compiler = args.compiler or os.path.join(args.build, "bin", "tra-compile")
    if not os.path.exists(args.compiler):
        sys.exit(f"no compiler at {args.compiler}; pass --build or --compiler")
    with tempfile.TemporaryDirectory(dir=args.work) as work:
        for name in args.only or BENCHES:
            BENCHES[name](args, work)


if __name__ == "__main__":
    main()
