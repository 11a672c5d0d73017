#!/usr/bin/env bash
# tra-llama train from scratch, resume, then generate (examples/training/README.md).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
bin="$root/build/bin"
out="${1:-$(mktemp -d)/tiny-llama}"
mkdir -p "$out"

# The model (stories260K's shape) and the data: 100 random ids, repeated.
cat > "$out/model.json" <<'JSON'
{"dim": 64, "hidden_dim": 172, "n_layers": 5, "n_heads": 8, "n_kv_heads": 4,
 "vocab_size": 512, "max_seq_len": 64}
JSON
python3 -c "import numpy as np; np.save('$out/tokens.npy', np.tile(np.random.default_rng(0).integers(0, 512, 100), 50))"

# 40 AdamW steps with warm-up and cosine decay, a checkpoint every 20.
"$bin/tra-llama" train --config "$out/model.json" --data "$out/tokens.npy" \
  -o "$out/run" --steps 40 --batch 4 --seq-len 32 --lr 3e-3 \
  --warmup-steps 5 --save-every 20

# 10 more steps from the newest checkpoint (run/latest names it).
"$bin/tra-llama" train --resume "$out/run" --data "$out/tokens.npy" \
  -o "$out/resumed" --steps 10 --batch 4 --seq-len 32 --lr 3e-4

# The trained model continues the stream from BOS.
echo "the stream after id 1:"
python3 -c "import numpy as np; t = np.load('$out/tokens.npy'); i = list(t).index(1); print(' '.join(map(str, t[i + 1:i + 11])))"
echo "tra-llama run:"
"$bin/tra-llama" run --checkpoint "$out/resumed/step-50/model.bin" --steps 11 --print-ids 2>/dev/null
