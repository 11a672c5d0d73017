#!/usr/bin/env bash
# The GPU check of issue 14, in two halves (docs/GPU.md):
#
#   scripts/device-check.sh [DIR]      here: compile what the check runs into
#                                      DIR (default build-device/), with the
#                                      runtime library and the CPU references,
#                                      and dry-run it (packaging only)
#   bash DIR/run.sh                    on the GPU machine (the `device` tool,
#                                      carry DIR): run everything, print the
#                                      results, exit non-zero on a mismatch
#
# The GPU machine has CUDA, PyTorch and Python but no LLVM/MLIR, Open MPI,
# OpenBLAS or package registry, and at most 64 MiB travel: the compiled
# programs travel, not the compiler. What runs there:
#   1. the LLaMA block (examples/llama_block.mlir) on the GPU against this
#      machine's CPU outputs (max abs difference <= 1e-5, f32);
#   2. stories260K greedy decoding, one step program call per token, against
#      the ids of `tra-llama run` here;
#   3. a bf16 matmul 8192^3 compiled by tra-compile against torch.matmul
#      (cuBLAS) in the same run: the ratio of their times;
#   4. the engine on the GPU (tra-generate: LocalModel with the weights and
#      KV caches in device memory): stories260K's greedy ids against the
#      CPU's, and a random bf16 LLaMA of 1.1B parameters (TinyLlama's shape,
#      its weights written there by PyTorch, 16-bit on the GPU): the decode
#      rate against the HBM roofline (weight bytes x tokens/s / measured
#      copy bandwidth) and, with a 512-token prefill, both against PyTorch
#      eager on the same weights (scripts/device/llama_bf16.py).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT="${1:-build-device}"
BIN="$ROOT/build/bin"
HW="$ROOT/hw/gpu-1.json"
MODELS="$ROOT/../shared/models"
PY=/usr/bin/python3
if [[ ! -x "$BIN/tra-compile" || ! -x "$BIN/tra-generate" || ! -f "$ROOT/build/lib/libtra_cuda.so" ]]; then
  echo "device-check: build first (scripts/setup.sh); no $BIN/tra-compile, tra-generate or libtra_cuda.so" >&2
  exit 1
fi
rm -rf "$OUT"
mkdir -p "$OUT/lib" "$OUT/ref" "$OUT/fallback"

echo "== compiling for $HW"
# 1. The LLaMA block: GPU program, inputs, and the CPU program's outputs.
"$BIN/tra-compile" examples/llama_block.mlir --entry llama_block --hw "$HW" -o "$OUT/block"
"$BIN/tra-compile" examples/llama_block.mlir --entry llama_block --hw local -o "$OUT/ref/block-cpu"
$PY test/Interpreter/Inputs/reference.py gen block "$OUT/ref" >/dev/null
$PY test/Integration/Inputs/safetensors.py "$OUT/ref/weights.safetensors" \
  attn_norm="$OUT/ref/attn_norm.npy" wq="$OUT/ref/wq.npy" wk="$OUT/ref/wk.npy" \
  wv="$OUT/ref/wv.npy" wo="$OUT/ref/wo.npy" freqs_cos="$OUT/ref/freqs_cos.npy" \
  freqs_sin="$OUT/ref/freqs_sin.npy" ffn_norm="$OUT/ref/ffn_norm.npy" \
  w1="$OUT/ref/w1.npy" w2="$OUT/ref/w2.npy" w3="$OUT/ref/w3.npy"
"$OUT/ref/block-cpu" --input x="$OUT/ref/x.npy" --input pos="$OUT/ref/pos.npy" \
  --input k_cache="$OUT/ref/k_cache.npy" --input v_cache="$OUT/ref/v_cache.npy" \
  --weights "$OUT/ref/weights.safetensors" --output out="$OUT/ref/cpu_out.npy" \
  --output k_cache_out="$OUT/ref/cpu_k.npy" --output v_cache_out="$OUT/ref/cpu_v.npy"
rm -f "$OUT/ref/block-cpu"

# 2. stories260K: the one-token step for the GPU, the checkpoint, the RoPE
# tables (those of runtime/lib/Llama.cpp, in f32), and the ids the same
# greedy loop gives with the step compiled for this CPU, which must be
# tra-llama's own.
S="$OUT/ref/stories"
mkdir -p "$S"
"$BIN/tra-llama" emit --checkpoint "$MODELS/stories260K.bin" --seq 1 -o "$S/decode.mlir"
"$BIN/tra-compile" "$S/decode.mlir" --hw "$HW" -o "$OUT/decode"
"$BIN/tra-compile" "$S/decode.mlir" --hw local -o "$S/decode-cpu"
cp "$MODELS/stories260K.bin" "$S/"
$PY - "$S" <<'PY'
import sys
import numpy as np
hd, seq, theta = 8, 512, np.float32(10000.0)
i = np.arange(hd // 2, dtype=np.float32)
freq = np.float32(1.0) / np.power(theta, np.float32(2) * i / np.float32(hd))
angle = np.arange(seq, dtype=np.float32)[:, None] * freq[None, :]
np.save(sys.argv[1] + "/freqs_cos.npy", np.cos(angle).astype(np.float32))
np.save(sys.argv[1] + "/freqs_sin.npy", np.sin(angle).astype(np.float32))
PY
cp scripts/device/check.py "$OUT/"
$PY "$OUT/check.py" reference "$S/decode-cpu"
"$BIN/tra-llama" run --checkpoint "$MODELS/stories260K.bin" --hw local --steps 32 \
  --print-ids --no-cache 2>/dev/null > "$S/tra-llama_ids.txt"
if [[ "$(cat "$S/cpu_ids.txt")" != "$(tr -s ' \n' ' ' < "$S/tra-llama_ids.txt" | sed 's/ $//')" ]]; then
  echo "device-check: the step loop's CPU ids differ from tra-llama run's:" >&2
  cat "$S/cpu_ids.txt" "$S/tra-llama_ids.txt" >&2
  exit 1
fi
rm -f "$S/decode-cpu"

# 4. The engine on the GPU: tra-generate (no LLVM/MLIR) and step libraries
# for gpu-1: stories260K's prefill (3 tokens) and decode steps, and the
# 1.1B bf16 model's 512-token prefill and decode steps (compiled from a
# checkpoint whose weights are a hole: the steps depend only on the shapes
# and dtypes; the GPU machine writes real random weights).
cp "$BIN/tra-generate" "$OUT/"
"$BIN/tra-llama" emit --checkpoint "$MODELS/stories260K.bin" --seq 3 -o "$S/prefill.mlir"
"$BIN/tra-compile" "$S/decode.mlir" --entry forward --hw "$HW" --emit=lib -o "$OUT/lib/stories_decode"
"$BIN/tra-compile" "$S/prefill.mlir" --entry forward --hw "$HW" --emit=lib -o "$OUT/lib/stories_prefill"
L="$(mktemp -d)"
trap 'rm -rf "$L"' EXIT
$PY scripts/device/llama_bf16.py hf-sparse "$L/hf"
"$BIN/tra-llama" emit --checkpoint "$L/hf" --weight-dtype=checkpoint --seq 1 -o "$L/decode.mlir"
"$BIN/tra-llama" emit --checkpoint "$L/hf" --weight-dtype=checkpoint --seq 512 -o "$L/prefill.mlir"
"$BIN/tra-compile" "$L/decode.mlir" --entry forward --hw "$HW" --emit=lib -o "$OUT/lib/llama1b_decode"
"$BIN/tra-compile" "$L/prefill.mlir" --entry forward --hw "$HW" --emit=lib -o "$OUT/lib/llama1b_prefill"
rm -rf "$L"
# Beside libtra_cuda.so, which they and tra-generate find through $ORIGIN.
mv "$OUT"/lib/*.so "$OUT/"
rm -f "$OUT"/lib/*.o "$OUT"/lib/*.h

# 3. A bf16 matmul 8192^3.
cat > "$OUT/ref/matmul_bf16.mlir" <<'MLIR'
func.func @main(%a: tensor<8192x8192xbf16> {tra.name = "a"}, %b: tensor<8192x8192xbf16> {tra.name = "b"})
    -> (tensor<8192x8192xbf16> {tra.name = "c"}) {
  %c = tra.einsum "ij,jk->ik" mul (%a, %b) : (tensor<8192x8192xbf16>, tensor<8192x8192xbf16>) -> tensor<8192x8192xbf16>
  return %c : tensor<8192x8192xbf16>
}
MLIR
"$BIN/tra-compile" "$OUT/ref/matmul_bf16.mlir" --hw "$HW" -o "$OUT/matmul_bf16"

# The runtime library beside the programs (their RPATH has $ORIGIN), and this
# machine's C++ runtime in case the GPU machine's is older.
cp "$ROOT/build/lib/libtra_cuda.so" "$OUT/"
for lib in libstdc++.so.6 libgcc_s.so.1; do
  path=$(ldd "$OUT/block" | awk -v l="$lib" '$1 == l {print $3}')
  [[ -n "$path" ]] && cp -L "$path" "$OUT/fallback/"
done
cp scripts/device/run.sh scripts/device/check.py scripts/device/llama_bf16.py "$OUT/"
rmdir "$OUT/lib"

size=$(du -sb "$OUT" | cut -f1)
echo "== package $OUT: $((size / 1024)) KiB ($(find "$OUT" -type f | wc -l) files)"
if (( size > 60 * 1024 * 1024 )); then
  echo "device-check: the package is over 60 MiB; the device tool carries at most 64" >&2
  exit 1
fi

echo "== dry run here (no GPU: each program must refuse cleanly)"
TRA_DEVICE_DRY_RUN=1 PYTHON=$PY bash "$OUT/run.sh"
echo "device-check: ready; on the GPU machine run: bash $OUT/run.sh"
