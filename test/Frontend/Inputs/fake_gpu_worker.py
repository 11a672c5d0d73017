#!/usr/bin/env python3
"""Runs tra-llama-worker under mpirun on step programs compiled for the
host but presented as GPU programs (unittests/Engine/FakeGpuShim.cpp), so
that the engine's GPU path (RankModel with the CUDA accelerator) runs on the
fake driver of unittests/Cuda with real numbers.

    fake_gpu_worker.py RANKS CACHE_DIR SHIM_DIR WORKER [WORKER ARGS...]

CACHE_DIR holds exactly the two distributed step libraries
(forward-dist-*.so) of one model (prefill and decode); the environment must
already name the fake driver and NCCL (%fake_cuda, FAKE_NCCL_DIR).
"""
import glob
import os
import subprocess
import sys


def main():
    ranks, cache, shims, worker = sys.argv[1:5]
    libraries = sorted(glob.glob(os.path.join(cache, "forward-dist-*.so")))
    if len(libraries) != 2:
        sys.exit(f"expected two step libraries in {cache}, found {libraries}")
    env = dict(os.environ)
    env["FAKE_GPU_SHIM_A"], env["FAKE_GPU_SHIM_B"] = libraries
    command = ["mpirun", "--allow-run-as-root", "--oversubscribe", "-np", ranks,
               worker,
               "--program", os.path.join(shims, "libTRAFakeGpuShim_a.so"),
               "--program", os.path.join(shims, "libTRAFakeGpuShim_b.so")]
    sys.exit(subprocess.call(command + sys.argv[5:], env=env))


if __name__ == "__main__":
    main()
