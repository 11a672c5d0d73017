#!/usr/bin/env bash
# Runs, on a machine with an NVIDIA GPU, the check that scripts/device-check.sh
# prepared in this folder: bash run.sh. With TRA_DEVICE_DRY_RUN=1 (what
# device-check.sh does here) it only checks that the package is complete and
# that every program starts and refuses cleanly without a GPU.
set -uo pipefail
cd "$(dirname "$0")"
echo "== machine"
uname -m; (ldd --version 2>&1 | head -1) || true
if command -v nvidia-smi >/dev/null; then
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
fi

# cuBLAS 13 (or 12) where the CUDA toolkit or PyTorch keeps it.
if ! /sbin/ldconfig -p 2>/dev/null | grep -q 'libcublas.so.1[23]'; then
  for dir in /usr/local/cuda/lib64 /usr/local/cuda-*/lib64 \
             $(python3 -c 'import site, glob; print(" ".join(glob.glob(site.getsitepackages()[0] + "/nvidia/cu*/lib") + glob.glob(site.getsitepackages()[0] + "/nvidia/cublas/lib")))' 2>/dev/null); do
    if ls "$dir"/libcublas.so.1[23]* >/dev/null 2>&1; then
      export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
      echo "cuBLAS from $dir"
      break
    fi
  done
fi
# This machine's C++ runtime when the local one is too old for the programs.
if ./block --list 2>&1 | grep -q "GLIBCXX\|GCC_\|not found"; then
  echo "using the packaged libstdc++ (fallback/)"
  export LD_LIBRARY_PATH="$PWD/fallback${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
if ! ./block --list >/dev/null; then
  echo "run.sh: the programs do not start here:" >&2
  ldd ./block >&2
  exit 1
fi
exec "${PYTHON:-python3}" check.py
