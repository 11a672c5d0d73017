#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/, docs/Fuzzing.md) into build-fuzz/ and
# runs each on its seed corpus (test/fuzz/<target>/) for a fixed time.
#
#   scripts/fuzz.sh [--no-build] [SECONDS_PER_TARGET] [TARGET...]
#
# SECONDS_PER_TARGET defaults to 60; TARGET is json, npy, safetensors, pth,
# pickle, llama2c, tokenizer, gguf, hardware or ir (with or without the
# "fuzz-" prefix), all by default. Each target runs on its corpus in
# build-fuzz/corpus/<target>/ (the seeds, plus what earlier runs found);
# crashing inputs go to build-fuzz/artifacts/<target>/ and logs to
# build-fuzz/logs/<target>.log. Prints per target the seconds it ran, the
# inputs executed, the inputs that added coverage and the crashes, and exits
# non-zero if any target crashed (or failed to start).
#
# Environment: TRA_FUZZ_BUILD_DIR (default build-fuzz), TRA_FUZZ_JOBS
# (compile jobs, default nproc), TRA_FUZZ_ARGS (more libFuzzer flags).
set -euo pipefail
cd "$(dirname "$0")/.."

ALL_TARGETS=(json npy safetensors pth pickle llama2c tokenizer gguf hardware ir)
build=1
if [[ "${1:-}" == "--no-build" ]]; then
  build=0
  shift
fi
seconds=60
if [[ $# -gt 0 && "$1" =~ ^[0-9]+$ ]]; then
  seconds=$1
  shift
fi
targets=()
for t in "${@:-${ALL_TARGETS[@]}}"; do
  t=${t#fuzz-}
  if [[ ! " ${ALL_TARGETS[*]} " == *" $t "* ]]; then
    echo "fuzz.sh: unknown target '$t' (one of: ${ALL_TARGETS[*]})" >&2
    exit 2
  fi
  targets+=("$t")
done

BUILD=${TRA_FUZZ_BUILD_DIR:-build-fuzz}
if ((build)); then
  # libFuzzer's runtime comes with clang (Debian: libclang-rt-22-dev).
  probe=$(mktemp -d)
  printf 'extern "C" int LLVMFuzzerTestOneInput(const char *, unsigned long) { return 0; }\n' \
    > "$probe/probe.cpp"
  if ! clang++-22 -fsanitize=fuzzer "$probe/probe.cpp" -o "$probe/probe" 2>/dev/null; then
    rm -rf "$probe"
    echo "fuzz.sh: clang++-22 -fsanitize=fuzzer does not link; install" \
         "libclang-rt-22-dev (scripts/setup.sh --no-build)" >&2
    exit 1
  fi
  rm -rf "$probe"
  if [[ ! -f "$BUILD/CMakeCache.txt" ]]; then
    cmake -G Ninja -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
      -DTRA_FUZZ=ON -DTRA_ENABLE_SANITIZERS=ON -DTRA_BUILD_UNITTESTS=OFF \
      >/dev/null
  fi
  start=$(date +%s)
  if ! ninja -C "$BUILD" -j "${TRA_FUZZ_JOBS:-$(nproc)}" \
      "${targets[@]/#/fuzz-}" >"$BUILD/build.log" 2>&1; then
    grep -v '^\[' "$BUILD/build.log" >&2
    echo "fuzz.sh: build failed (log: $BUILD/build.log)" >&2
    exit 1
  fi
  echo "fuzz.sh: built ${#targets[@]} targets in $(($(date +%s) - start)) s"
fi

# Leaks are errors; a failed UBSan check stops the target like a crash.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

failed=0
printf '%-12s %8s %12s %8s %8s %8s  %s\n' target seconds executions \
  new-cov corpus crashes status
for t in "${targets[@]}"; do
  bin="$BUILD/fuzz/fuzz-$t"
  corpus="$BUILD/corpus/$t"
  artifacts="$BUILD/artifacts/$t"
  log="$BUILD/logs/$t.log"
  mkdir -p "$corpus" "$artifacts" "$(dirname "$log")"
  # The checked-in seeds, without replacing what earlier runs found.
  cp -n test/fuzz/"$t"/* "$corpus"/ 2>/dev/null || true
  if [[ ! -x "$bin" ]]; then
    printf '%-12s %8s %12s %8s %8s %8s  %s\n' "$t" - - - - - "not built ($bin)"
    failed=1
    continue
  fi
  start=$(date +%s)
  status=ok
  # shellcheck disable=SC2086
  "$bin" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 \
    -print_final_stats=1 -artifact_prefix="$artifacts/" \
    ${TRA_FUZZ_ARGS:-} "$corpus" >"$log" 2>&1 || status=crashed
  elapsed=$(($(date +%s) - start))
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  newcov=$(sed -n 's/^stat::new_units_added: *//p' "$log" | tail -1)
  if [[ -z "$execs" ]]; then
    # A crash ends the run before the final stats: take the last status line.
    execs=$(grep -o '^#[0-9]*' "$log" | tail -1 | tr -d '#')
  fi
  crashes=$(grep -c 'Test unit written to' "$log" || true)
  size=$(find "$corpus" -type f | wc -l)
  if [[ $status != ok ]]; then
    failed=1
    status="CRASHED: $(grep -m1 -o 'Test unit written to .*' "$log" | \
      sed 's/Test unit written to //') (log: $log)"
  fi
  printf '%-12s %8s %12s %8s %8s %8s  %s\n' "$t" "$elapsed" "${execs:-?}" \
    "${newcov:-?}" "$size" "$crashes" "$status"
done
exit $failed
