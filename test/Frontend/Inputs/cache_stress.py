"""Concurrent users of one library cache, and compiles killed at random
points (issue 18). Used by cache-concurrency.test.

  cache_stress.py concurrent TRA_LLAMA CHECKPOINT CACHE N
      starts N `tra-llama run` at once on the cold cache directory CACHE:
      every one must succeed with the same ids; each program is compiled
      once (the others wait for it and load it), and the cache holds one
      valid entry per program (its manifest matches its bytes).
  cache_stress.py killed TRA_LLAMA CHECKPOINT CACHE SEED ROUNDS
      kills a `tra-llama run` with SIGKILL at a random moment ROUNDS times
      (during compiling, linking, publishing), each time on the same cache;
      then a run must succeed with the reference ids, having loaded only
      entries that verify (a damaged one is rebuilt, named on stderr).
  cache_stress.py reshard TRA_LLAMA CHECKPOINT HW OUT SEED ROUNDS CHECK...
      kills `tra-llama reshard -o OUT` with SIGKILL at a random moment ROUNDS
      times: OUT must then be absent or complete (the command CHECK... with
      OUT appended, e.g. check_split.py, must pass); then a reshard to OUT
      succeeds and passes CHECK.
Prints one summary line; exits 1 with the reason on any failure.
"""
import glob
import hashlib
import os
import random
import signal
import subprocess
import sys
import time


def run_args(tra_llama, checkpoint, cache):
    return [tra_llama, "run", "--checkpoint", checkpoint, "--hw", "local",
            "--prompt-ids", "1,400,500", "--steps", "12", "--print-ids",
            "--cache-dir", cache]


def fail(message):
    print("cache_stress: FAILED: " + message)
    sys.exit(1)


def check_entries(cache):
    """Every .so has a manifest that matches it; returns the entry count."""
    libraries = sorted(glob.glob(os.path.join(cache, "*.so")))
    for library in libraries:
        manifest = library + ".sha256"
        if not os.path.exists(manifest):
            fail(library + " has no manifest")
        data = open(library, "rb").read()
        want = "sha256 %s\nsize %d\n" % (hashlib.sha256(data).hexdigest(),
                                         len(data))
        if open(manifest).read() != want:
            fail(manifest + " does not match its library")
    for manifest in glob.glob(os.path.join(cache, "*.sha256")):
        if not os.path.exists(manifest[:-len(".sha256")]):
            fail(manifest + " has no library")
    leftovers = glob.glob(os.path.join(cache, "*.tmp-*"))
    return len(libraries), leftovers


def ids_of(stdout):
    lines = [l for l in stdout.splitlines() if l.strip()]
    return lines[-1] if lines else ""


def concurrent(tra_llama, checkpoint, cache, n):
    procs = [subprocess.Popen(run_args(tra_llama, checkpoint, cache),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for _ in range(n)]
    outputs = [p.communicate(timeout=600) for p in procs]
    for p, (out, err) in zip(procs, outputs):
        if p.returncode != 0:
            fail("a run exited %d: %s" % (p.returncode, err.strip()))
    ids = {ids_of(out) for out, _ in outputs}
    if len(ids) != 1:
        fail("the runs disagree: %s" % sorted(ids))
    compiled = sum(err.count("tra-llama: compiled @forward")
                   for _, err in outputs)
    loaded = sum(err.count("tra-llama: loaded cached @forward")
                 for _, err in outputs)
    entries, leftovers = check_entries(cache)
    if leftovers:
        fail("temporary files left: %s" % leftovers)
    if compiled != entries:
        fail("%d compiles for %d cache entries" % (compiled, entries))
    print("cache_stress: %d runs agree on [%s]; %d entries compiled once "
          "each, loaded %d times" % (n, ids.pop(), entries, loaded))


def killed(tra_llama, checkpoint, cache, seed, rounds):
    reference = subprocess.run(run_args(tra_llama, checkpoint, cache + "-ref"),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, timeout=600)
    if reference.returncode != 0:
        fail("the reference run failed: " + reference.stderr)
    want = ids_of(reference.stdout)
    rng = random.Random(seed)
    for _ in range(rounds):
        p = subprocess.Popen(run_args(tra_llama, checkpoint, cache),
                             stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0.2, 8.0))
        p.send_signal(signal.SIGKILL)
        p.wait()
    # Whatever the kills left, a run loads only entries that verify.
    final = subprocess.run(run_args(tra_llama, checkpoint, cache),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, timeout=600)
    if final.returncode != 0:
        fail("the run after the kills failed: " + final.stderr)
    if ids_of(final.stdout) != want:
        fail("after the kills: [%s], expected [%s]" %
             (ids_of(final.stdout), want))
    entries, _ = check_entries(cache)
    print("cache_stress: %d kills, then [%s] as before; %d entries verify"
          % (rounds, want, entries))


def reshard(tra_llama, checkpoint, hw, out, seed, rounds, check):
    args = [tra_llama, "reshard", "--quiet", "--checkpoint", checkpoint,
            "--hw", hw, "-o", out]

    def checked(when):
        if not os.path.exists(out):
            return False
        done = subprocess.run(check[:1] + [check[1], out] + check[2:],
                              stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
        if done.returncode != 0:
            fail("%s: %s is incomplete: %s" % (when, out, done.stdout))
        return True

    rng = random.Random(seed)
    complete = 0
    for i in range(rounds):
        p = subprocess.Popen(args, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0.0, 1.5))
        p.send_signal(signal.SIGKILL)
        p.wait()
        complete += checked("after kill %d" % (i + 1))
    final = subprocess.run(args, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, timeout=600)
    if final.returncode != 0:
        fail("the reshard after the kills failed: " + final.stderr)
    if not checked("after the last reshard"):
        fail("no output after the last reshard")
    print("cache_stress: %d kills of reshard (%d left a complete directory, "
          "the others none); then a complete one" % (rounds, complete))


def main():
    mode = sys.argv[1]
    if mode == "reshard":
        reshard(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5],
                int(sys.argv[6]), int(sys.argv[7]), sys.argv[8:])
        return
    if mode == "concurrent":
        concurrent(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]))
    elif mode == "killed":
        killed(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]),
               int(sys.argv[6]))
    else:
        fail("unknown mode " + mode)


if __name__ == "__main__":
    main()
