#!/usr/bin/env bash
# Runs every test of tra on a fresh Debian 12 machine:
#   1. installs missing packages and builds the release configuration
#      (scripts/setup.sh),
#   2. runs CTest: the GoogleTest suites, the lit suite (FileCheck tests,
#      interpreter tests against NumPy/PyTorch) and the docs check,
#   3. builds the ASan+UBSan configuration and runs the same suites under it,
#   4. builds the libFuzzer targets (build-fuzz/) and runs each on its seed
#      corpus for TRA_FUZZ_SECONDS (10) seconds (scripts/fuzz.sh).
# Set TRA_SKIP_ASAN=1 to skip step 3, TRA_SKIP_FUZZ=1 to skip step 4 during
# development.
set -euo pipefail
cd "$(dirname "$0")/.."

jobs=$(nproc)
scripts/setup.sh
ctest --preset release -j "$jobs"

if [[ "${TRA_SKIP_ASAN:-0}" != 1 ]]; then
  echo "== ASan+UBSan build =="
  TRA_PRESET=asan scripts/setup.sh
  # See test/lit.cfg.py for why user poisoning is off.
  ASAN_OPTIONS=detect_leaks=1:allow_user_poisoning=0 \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --preset asan -j "$jobs"
fi

if [[ "${TRA_SKIP_FUZZ:-0}" != 1 ]]; then
  echo "== fuzzing (libFuzzer + ASan + UBSan) =="
  scripts/fuzz.sh "${TRA_FUZZ_SECONDS:-10}"
fi
