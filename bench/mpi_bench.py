#!/usr/bin/python3
"""Benchmarks of distributed tra executables (issue 5).

    /usr/bin/python3 bench/mpi_bench.py [--build DIR] [--n N] [--repeat N]
        [--rounds N] [--work DIR] [--only speedup|bytes|overlap ...]

Prints, measured in this one run (never asserted):

  speedup  a compute-bound chain y = (x w1) w2 of f32 N x N matrices
           (default N = 4096) compiled for one CPU device and for two CPU
           nodes (the optimizer's plan), run as 1 rank x 1 thread and as
           2 ranks x 1 thread (mpirun on this machine): the speedup
           t(1 rank) / t(2 ranks) (target >= 1.7). Each time is the fastest
           of --repeat runs inside the process (the executable's --repeat
           and --profile), the slowest rank for the 2-rank job; the two
           jobs take turns for --rounds rounds.
  bytes    the bytes the ranks actually send (counted by the MPI runtime,
           `--profile`) against the optimizer's estimate (`tra-compile
           --explain`, "bytes moved"): the LLaMA block of
           examples/llama_block.mlir on hw/cpu-8nodes.json (8 ranks), and a
           two-layer LLaMA (examples/models/llama.py --preset small, one
           sequence of 128 tokens) on hw/dgx-8.json emulated on CPUs
           (8 ranks); target: equal within 1%.
  overlap  communication overlapping computation: a hand-written plan on
           two CPU ranks that computes h = exp(x) (rows split), then an
           unrelated matmul p = a b (rows split), then gathers h onto both
           ranks (each sends --overlap-rows/2 x --overlap-cols floats) and
           uses it. Compiled twice from the same plan: with the default
           non-blocking moves (h's send is posted before the matmul, its
           receive waited for after it) and with `tra-compile
           --blocking-moves` (the exchange after the matmul). Prints both
           times (slowest rank, fastest of the rounds) and the ratio
           t(blocking) / t(non-blocking); above 1 means the overlap pays.

Run it on an idle machine for numbers worth noting.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MPIRUN = ["mpirun", "--allow-run-as-root", "--oversubscribe"]


def run(cmd, **kwargs):
    return subprocess.run(cmd, check=True, capture_output=True, text=True,
                          **kwargs)


def cpu_nodes(path, count):
    """A hardware file of `count` CPU nodes like hw/cpu-8nodes.json."""
    with open(os.path.join(ROOT, "hw", "cpu-8nodes.json")) as f:
        hw = json.load(f)
    hw["name"] = f"cpu-{count}nodes"
    hw["nodes"][0]["count"] = count
    with open(path, "w") as f:
        json.dump(hw, f)
    return path


def chain_model(path, n):
    t = f"tensor<{n}x{n}xf32>"
    with open(path, "w") as f:
        f.write(f"""func.func @chain(%x: {t} {{tra.name = "x"}}, %w1: {t} {{tra.name = "w1"}},
                  %w2: {t} {{tra.name = "w2"}}) -> ({t} {{tra.name = "y"}}) {{
  %h = tra.einsum "ik,kj->ij" mul (%x, %w1) : ({t}, {t}) -> {t}
  %y = tra.einsum "ik,kj->ij" mul (%h, %w2) : ({t}, {t}) -> {t}
  return %y : {t}
}}
""")
    return path


def fastest_ms(stderr):
    """Fastest run of one process (`profile: @F ran in ... min X ms`)."""
    m = re.search(r"min ([0-9.]+) ms", stderr)
    if not m:
        sys.exit("no profile line in:\n" + stderr)
    return float(m.group(1))


def slowest_rank_ms(stderr):
    """Slowest rank's median (`profile: rank R: @F ran in X ms`)."""
    times = [float(t) for t in
             re.findall(r"profile: rank \d+: @\S+ ran in ([0-9.]+) ms", stderr)]
    if not times:
        sys.exit("no rank profile lines in:\n" + stderr)
    return max(times)


def bytes_sent(stderr):
    return sum(int(b) for b in
               re.findall(r"profile: rank \d+: .* sent (\d+) bytes", stderr))


def estimated_bytes(compiler, model, hw, extra=()):
    out = run([compiler, model, "--hw", hw, "--explain", *extra]).stdout
    m = re.search(r"bytes moved: (\d+) B", out)
    if not m:
        sys.exit("no 'bytes moved' in the explanation of " + model)
    return int(m.group(1))


def bench_speedup(args, compiler, work):
    n = args.n
    model = chain_model(os.path.join(work, "chain.mlir"), n)
    one, two = os.path.join(work, "chain1"), os.path.join(work, "chain2")
    run([compiler, model, "--hw", os.path.join(ROOT, "hw", "cpu-1node.json"),
         "--device-threads", "1", "--emit=exe", "-o", one])
    run([compiler, model, "--hw", cpu_nodes(os.path.join(work, "cpu2.json"), 2),
         "--device-threads", "1", "--emit=exe", "-o", two])
    rng = np.random.default_rng(0)
    flags = []
    for name in ("x", "w1", "w2"):
        path = os.path.join(work, name + ".npy")
        np.save(path, (rng.standard_normal((n, n)) / np.sqrt(n)).astype(np.float32))
        flags += ["--input", f"{name}={path}"]
    common = flags + ["--threads", "1", "--repeat", str(args.repeat),
                      "--profile"]
    t1 = t2 = float("inf")
    for _ in range(args.rounds):
        t1 = min(t1, fastest_ms(run([one, *common,
                                     "--output", "y=" + os.path.join(work, "y1.npy")]).stderr))
        t2 = min(t2, slowest_rank_ms(run(MPIRUN + ["-np", "2", two, *common,
                                                   "--output", "y=" + os.path.join(work, "y2.npy")]).stderr))
    y1 = np.load(os.path.join(work, "y1.npy"))
    y2 = np.load(os.path.join(work, "y2.npy"))
    err = float(np.abs(y1 - y2).max())
    print(f"speedup  chain of two {n}^3 f32 matmuls: 1 rank x 1 thread "
          f"{t1:.1f} ms, 2 ranks x 1 thread {t2:.1f} ms: speedup "
          f"{t1 / t2:.2f} (target >= 1.7; outputs differ by {err:.2g})")


def random_inputs(exe, directory):
    os.makedirs(directory, exist_ok=True)
    out = run([sys.executable,
               os.path.join(ROOT, "test", "Integration", "Inputs",
                            "random_inputs.py"), exe, directory]).stdout
    return out.split()


def bench_bytes(args, compiler, work):
    cases = []
    block = os.path.join(ROOT, "examples", "llama_block.mlir")
    cases.append(("llama block, cpu-8nodes", block,
                  os.path.join(ROOT, "hw", "cpu-8nodes.json"),
                  ["--entry", "llama_block"], []))
    small = os.path.join(work, "small.mlir")
    run([sys.executable, os.path.join(ROOT, "examples", "models", "llama.py"),
         "--preset", "small", "--batch", "1", "--seq", "128", "--cache", "256",
         "--dtype", "f32", "-o", small])
    cases.append(("small LLaMA, dgx-8 emulated", small,
                  os.path.join(ROOT, "hw", "dgx-8.json"), [],
                  ["--emulate-on-cpu"]))
    for i, (label, model, hw, entry, emulate) in enumerate(cases):
        estimate = estimated_bytes(compiler, model, hw, entry)
        exe = os.path.join(work, f"dist{i}")
        one = os.path.join(work, f"one{i}")
        run([compiler, model, "--hw", hw, *entry, *emulate, "--emit=exe",
             "-o", exe])
        run([compiler, model, "--hw", os.path.join(ROOT, "hw", "cpu-1node.json"),
             *entry, "--emit=exe", "-o", one])
        flags = random_inputs(one, os.path.join(work, f"in{i}"))
        ranks = int(re.search(r"-np (\d+)",
                              run([exe, "--list"]).stderr).group(1))
        err = run(MPIRUN + ["-np", str(ranks), exe, *flags, "--profile",
                            "--threads", "1"]).stderr
        sent = bytes_sent(err)
        diff = abs(sent - estimate) / max(1, estimate)
        print(f"bytes    {label} ({ranks} ranks): sent {sent} B, estimated "
              f"{estimate} B: difference {100 * diff:.2f}% (target <= 1%)")


def overlap_model(path, rows, cols, m):
    """The hand-written 2-rank plan of the overlap case."""
    x = f"tensor<{rows}x{cols}xf32>"
    a = f"tensor<{m}x{m}xf32>"
    split = "#tra_plan.dist<[2, 1] on [0, 1]>"
    rep = "#tra_plan.dist<[1, 1] on [[0, 1]]>"
    with open(path, "w") as f:
        f.write(f"""func.func @overlap(%x: {x} {{tra.name = "x", tra_plan.dist = {split}}},
                    %a: {a} {{tra.name = "a", tra_plan.dist = {split}}},
                    %b: {a} {{tra.name = "b", tra_plan.dist = {rep}}})
    -> ({x} {{tra.name = "h"}}, {a} {{tra.name = "p"}})
    attributes {{tra_plan.num_devices = 2 : i64}} {{
  %h = tra.map (%x) {{tra_plan.operands = [{split}], tra_plan.results = [{split}], tra_plan.split = #tra_plan.split<a = 2>}} : ({x}) -> {x} {{
  ^bb0(%v: f32):
    %e = math.exp %v : f32
    tra.yield %e : f32
  }}
  %p = tra.einsum "ik,kj->ij" mul (%a, %b) {{tra_plan.operands = [{split}, {rep}], tra_plan.results = [{split}], tra_plan.split = #tra_plan.split<i = 2>}} : ({a}, {a}) -> {a}
  %hr = tra_plan.repartition %h from <[2, 1] on [0, 1]> to <[1, 1] on [[0, 1]]> : {x}
  return %hr, %p : {x}, {a}
}}
""")
    return path


def bench_overlap(args, compiler, work):
    rows, cols, m = args.overlap_rows, args.overlap_cols, args.overlap_m
    model = overlap_model(os.path.join(work, "overlap.mlir"), rows, cols, m)
    hw = cpu_nodes(os.path.join(work, "cpu2.json"), 2)
    exes = {}
    for mode, extra in (("non-blocking", []), ("blocking", ["--blocking-moves"])):
        exes[mode] = os.path.join(work, "overlap-" + mode)
        run([compiler, model, "--hw", hw, "--device-threads", "1", *extra,
             "--emit=exe", "-o", exes[mode]])
    rng = np.random.default_rng(0)
    flags = []
    for name, shape in (("x", (rows, cols)), ("a", (m, m)), ("b", (m, m))):
        path = os.path.join(work, "overlap-" + name + ".npy")
        np.save(path, (rng.standard_normal(shape) / np.sqrt(shape[1])).astype(np.float32))
        flags += ["--input", f"{name}={path}"]
    common = flags + ["--threads", "1", "--repeat", str(args.repeat),
                      "--profile"]
    times = {mode: float("inf") for mode in exes}
    for _ in range(args.rounds):
        for mode, exe in exes.items():
            out = os.path.join(work, f"overlap-{mode}-h.npy")
            times[mode] = min(times[mode], slowest_rank_ms(run(
                MPIRUN + ["-np", "2", exe, *common, "--output", "h=" + out]).stderr))
    same = np.array_equal(np.load(os.path.join(work, "overlap-non-blocking-h.npy")),
                          np.load(os.path.join(work, "overlap-blocking-h.npy")))
    t_nb, t_b = times["non-blocking"], times["blocking"]
    print(f"overlap  gather of {rows}x{cols} f32 rows behind a {m}^3 matmul "
          f"(2 ranks x 1 thread): blocking {t_b:.1f} ms, non-blocking "
          f"{t_nb:.1f} ms: ratio {t_b / t_nb:.2f} (outputs "
          f"{'identical' if same else 'DIFFER'})")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--n", type=int, default=4096)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--work", default=None)
    parser.add_argument("--only", nargs="*", default=None)
    parser.add_argument("--overlap-rows", type=int, default=4096)
    parser.add_argument("--overlap-cols", type=int, default=2048)
    parser.add_argument("--overlap-m", type=int, default=1024)
    args = parser.parse_args()
    compiler = os.path.join(args.build, "bin", "tra-compile")
    benches = {"speedup": bench_speedup, "bytes": bench_bytes,
               "overlap": bench_overlap}
    with tempfile.TemporaryDirectory(dir=args.work) as work:
        for name, bench in benches.items():
            if args.only is None or name in args.only:
                bench(args, compiler, work)


if __name__ == "__main__":
    main()
