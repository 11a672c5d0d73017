#!/usr/bin/env python3
"""Kills one rank of a running MPI job and reports how the job ended.

    kill_rank.py EXE DELAY -- MPIRUN_COMMAND...

Starts MPIRUN_COMMAND, waits until its ranks run and DELAY seconds more,
sends SIGKILL to the one
process whose command is EXE with the highest pid (one of the ranks, not
mpirun), and waits at most 60 s for the job. Prints the job's output, then
"job exited with N after S s" or "job hung" (and kills it).
"""
import os
import signal
import subprocess
import sys
import time


def ranks(exe):
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv0 = f.read().split(b"\0")[0].decode()
        except OSError:
            continue
        if os.path.realpath(argv0) == os.path.realpath(exe):
            found.append(int(pid))
    return sorted(found)


def main():
    exe, delay = sys.argv[1], float(sys.argv[2])
    command = sys.argv[sys.argv.index("--") + 1:]
    job = subprocess.Popen(command, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
    # Wait until the ranks run (mpirun may take a while to start them), then
    # DELAY seconds more.
    deadline = time.time() + 30
    victims = ranks(exe)
    while not victims and job.poll() is None and time.time() < deadline:
        time.sleep(0.1)
        victims = ranks(exe)
    time.sleep(delay)
    victims = ranks(exe)
    if not victims:
        job.kill()
        sys.exit("no rank of " + exe + " is running")
    start = time.time()
    os.kill(victims[-1], signal.SIGKILL)
    try:
        out, _ = job.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        job.kill()
        out, _ = job.communicate()
        print(out)
        print("job hung")
        return
    print(out)
    print(f"job exited with {job.returncode} after {time.time() - start:.1f} s")


if __name__ == "__main__":
    main()
