#!/usr/bin/env bash
# Installs every system package tra needs (Debian 12, apt-get only) and builds
# the project with CMake + Ninja against the Debian LLVM/MLIR 22 packages.
#
#   scripts/setup.sh            install + release build into build/
#   scripts/setup.sh --no-build install only
#   TRA_PRESET=asan scripts/setup.sh   ASan+UBSan debug build into build-asan/
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(
  cmake ninja-build git
  llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools clang-22
  libclang-rt-22-dev
  libopenmpi-dev openmpi-bin libopenblas-dev libomp-22-dev
  libgtest-dev pybind11-dev python3-dev python3-numpy python3-torch python3-sentencepiece
  python3-pytest
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq \
    "${missing[@]}" >/dev/null
fi

if [[ "${1:-}" == "--no-build" ]]; then exit 0; fi

PRESET="${TRA_PRESET:-release}"
cmake --preset "$PRESET" >/dev/null
cmake --build --preset "$PRESET"
