#!/usr/bin/env bash
# The main job: install what is missing, build, then run the stories260K
# LLaMA (../shared/models/stories260K.bin) on this machine's hardware
# description (--hw local): greedy generation from BOS, printing token ids.
#   scripts/run.sh [extra tra-llama options, e.g. --steps 128 --hw hw/dgx-8.json]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
MODEL="${TRA_MODEL:-../shared/models/stories260K.bin}"
exec build/bin/tra-llama run --checkpoint "$MODEL" --hw local --steps 64 \
  --print-ids "$@"
