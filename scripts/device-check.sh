#!/usr/bin/env bash
# Runs on the GPU machine (no Rust there): the binaries scripts/build-device.sh put in .device/.
# Full logs go to $OUT; a short table comes last.
#
#   scripts/device-check.sh quick   conformance tests, kernel compile, CLI proofs on cuda, short bench
#   scripts/device-check.sh full    the full bench (env BATON_BENCH_* passes through)
set -uo pipefail
cd "$(dirname "$0")/.."
mode=${1:-quick}
bin=.device
OUT=${OUT:-/tmp/baton-device-out}
mkdir -p "$OUT"
# PTX and CLI keys stay on the machine, out of $OUT.
export BATON_CACHE_DIR=${BATON_CACHE_DIR:-/tmp/baton-cache}
export RUST_LOG=${RUST_LOG:-warn}
summary=()

step() { # name, command...: tee the log, record status and seconds
    local name=$1
    shift
    local t0=$SECONDS
    echo "==== $name: $*" | tee "$OUT/$name.log"
    "$@" 2>&1 | tee -a "$OUT/$name.log"
    local rc=${PIPESTATUS[0]}
    summary+=("$(printf '%-22s rc=%-3s %4ss' "$name" "$rc" "$((SECONDS - t0))")")
}

nvidia-smi --query-gpu=name,driver_version,memory.used,memory.total --format=csv | tee "$OUT/gpu.txt"

if [ "$mode" = quick ]; then
    step kernels_compile env BATON_REQUIRE_NVRTC=1 "$bin/kernels_compile"
    step conformance "$bin/cuda_conformance" --nocapture
    step cli_prove "$bin/baton" prove --constraints 65536 --proofs 4 --backend cuda
    step bench_short env BATON_BENCH_MSM="${BATON_BENCH_MSM:-20,22}" \
        BATON_BENCH_NTT="${BATON_BENCH_NTT:-20,22,24}" \
        BATON_BENCH_PARTITION="${BATON_BENCH_PARTITION:-20}" \
        BATON_BENCH_REPS="${BATON_BENCH_REPS:-3}" "$bin/bench_gpu"
else
    step bench_full "$bin/bench_gpu"
fi

echo
echo "==== summary ($mode)"
for s in "${summary[@]}"; do echo "$s"; done
grep -h "^test result" "$OUT"/*.log 2>/dev/null
grep -h "^test .* FAILED\|panicked" "$OUT"/*.log 2>/dev/null | head -20
grep -h "verified\|proofs" "$OUT/cli_prove.log" 2>/dev/null | tail -3
for f in "$OUT"/bench_*.log; do
    [ -f "$f" ] && sed -n '/^## baton GPU bench/,$p' "$f"
done
