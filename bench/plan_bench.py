#!/usr/bin/python3
"""Planning time of the cost-based optimizer (issue 17).

    /usr/bin/python3 bench/plan_bench.py [--build DIR] [--rounds N]
        [--models 7b,65b] [--sizes 1,16,128] [--work DIR]

For LLaMA-7B and LLaMA-65B (examples/models/*.mlir) on DGX servers
(hw/dgx-8.json: 8 A100 per server; with more than one server, `"count"` set
to the number of servers and a 50 GB/s, 5 us network, files this script
writes), runs `tra-compile MODEL --hw FILE --emit=plan --explain` --rounds
times and prints, per model and server count, the planner's own `planned in`
(median, min-max), the process's peak memory, and the plan's estimated step
time (which must not change between rounds). The targets of issue 17:
LLaMA-65B on 128 devices (16 servers) under 5 s, on 1024 devices (128
servers) under 60 s, within 4 GiB. The ratio printed is target / median
(above 1 meets the target); "vs 8" is the median against the one-server
plan of the same model measured in this run (how planning scales with the
device count). Never asserted in tests.

Run it on an idle machine for numbers worth noting; 128 servers takes about
a minute a round on 2 cores.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGETS = {("65b", 16): 5.0, ("65b", 128): 60.0}
MEMORY_TARGET = 4 << 30


def dgx_servers(path, count):
    """hw/dgx-8.json with `count` servers on a 50 GB/s network."""
    with open(os.path.join(ROOT, "hw", "dgx-8.json")) as f:
        hw = json.load(f)
    if count > 1:
        hw["name"] = f"dgx-8x{count}"
        hw["nodes"][0]["count"] = count
        hw["network"] = {"kind": "infiniband", "bandwidth": 50e9,
                         "latency": 5e-6}
    with open(path, "w") as f:
        json.dump(hw, f, indent=1)
    return path


def seconds(text):
    value, unit = text.split()
    return float(value) * {"s": 1.0, "ms": 1e-3, "us": 1e-6}[unit]


def plan_once(compiler, model, hw):
    """Planned-in seconds, estimated step text and peak RSS of one run."""
    with tempfile.TemporaryFile("w+") as log:
        proc = subprocess.Popen(
            [compiler, model, "--hw", hw, "--emit=plan", "--explain",
             "-o", os.devnull], stdout=log, stderr=subprocess.STDOUT,
            text=True)
        # wait4 gives this child's own peak memory (KiB on Linux).
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        log.seek(0)
        text = log.read()
    if proc.returncode != 0:
        sys.exit(f"plan_bench: {compiler} {model} --hw {hw} failed:\n"
                 f"{text[-2000:]}")
    planned = re.search(r"planned in ([0-9.]+ m?s)", text)
    step = re.search(r"estimated step time: ([0-9.]+ m?s)", text)
    if not planned or not step:
        sys.exit(f"plan_bench: no 'planned in' / 'estimated step time' in "
                 f"the EXPLAIN of {model} on {hw}")
    return seconds(planned.group(1)), step.group(1), usage.ru_maxrss * 1024


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--models", default="7b,65b")
    parser.add_argument("--sizes", default="1,16,128",
                        help="numbers of 8-GPU servers")
    parser.add_argument("--work", help="folder for the hardware files")
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    compiler = os.path.join(args.build, "bin", "tra-compile")
    if not os.access(compiler, os.X_OK):
        sys.exit(f"plan_bench: {compiler} not found; build first "
                 f"(ninja -C build)")
    sizes = [int(s) for s in args.sizes.split(",")]
    if any(s < 1 for s in sizes):
        parser.error("--sizes are positive server counts")
    work = args.work or tempfile.mkdtemp(prefix="tra-plan-bench-")
    os.makedirs(work, exist_ok=True)
    print(f"planning time, {args.rounds} rounds each "
          f"(hardware files in {work})")
    print(f"{'model':6} {'GPUs':>5} {'median':>9} {'min-max':>17} "
          f"{'vs 8':>7} {'target':>7} {'ratio':>6} {'peak RSS':>9}  "
          f"estimated step")
    failed = False
    for name in args.models.split(","):
        model = os.path.join(ROOT, "examples", "models", f"llama-{name}.mlir")
        if not os.path.exists(model):
            sys.exit(f"plan_bench: no model {model}")
        one_server = None
        for count in sizes:
            hw = dgx_servers(os.path.join(work, f"dgx-8x{count}.json"), count)
            times, steps, peak = [], set(), 0
            for _ in range(args.rounds):
                t, step, rss = plan_once(compiler, model, hw)
                times.append(t)
                steps.add(step)
                peak = max(peak, rss)
            if len(steps) != 1:
                print(f"plan_bench: the estimated step of {name} on "
                      f"{8 * count} GPUs changed between rounds: {steps}")
                failed = True
            median = statistics.median(times)
            if count == 1:
                one_server = median
            target = TARGETS.get((name, count))
            print(f"{name:6} {8 * count:5} {median:8.3f}s "
                  f"{min(times):7.3f}-{max(times):7.3f}s "
                  f"{(median / one_server if one_server else float('nan')):6.1f}x "
                  f"{(f'{target:.0f}s' if target else '-'):>7} "
                  f"{(f'{target / median:.2f}' if target else '-'):>6} "
                  f"{peak / 2**20:7.0f}MiB  {', '.join(sorted(steps))}")
            if peak > MEMORY_TARGET:
                print(f"  above the 4 GiB memory target")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
