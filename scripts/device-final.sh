#!/usr/bin/env bash
# The final GPU run, ONE device call (~8.5 min on the lent H200, measured by parts on
# 2026-12-01: conformance 62 s, sppark 34 s, bench ~300 s, engine 27 s + 87 s; compile 28 s
# more when asked; use timeout_s 600 and FINAL_STEPS to drop a step if the budget is short):
# conformance (per-call paths and the device partition, proofs through CUDA verified with
# bellperson),
# sppark's MSM and NTT (prebuilt, same call, the reference column), baton's GPU bench (MSM,
# NTT, partitions per call and on the device), then the engine example (examples/05-multi-gpu,
# one GPU) at 2^24 and 2^26. Full logs go to $OUT; a short table comes last.
#
# Here:   scripts/build-device.sh && cp -r ../shared/bench/sppark .device/sppark
#         (then copy .device/ into the checkout the device tool sends, e.g. main's .device/)
# Device: run with carry [".device"] and the command `bash .device/device-final.sh`
#
# Steps (FINAL_STEPS, default "conformance sppark bench engine"; also compile, ncu; the kernels
# compile on the device anyway when the conformance tests open it). Knobs:
# FINAL_MSM / FINAL_NTT / FINAL_PART / FINAL_SPARSE (bench sizes), FINAL_REPS (5), FINAL_ENGINE ("24 26").
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bin=${FINAL_BIN:-$here}
OUT=${OUT:-/tmp/baton-device-out}
mkdir -p "$OUT"
export BATON_CACHE_DIR=${BATON_CACHE_DIR:-/tmp/baton-cache}
export RUST_LOG=${RUST_LOG:-warn} BATON_LOG=${BATON_LOG:-warn}
steps=${FINAL_STEPS:-conformance sppark bench engine}
summary=()
t_start=$SECONDS

step() { # name, timeout seconds, command...: log to $OUT/name.log, record status and time
    local name=$1 limit=$2
    shift 2
    local t0=$SECONDS
    echo "==== $name: $*" | tee "$OUT/$name.log"
    timeout "$limit" "$@" >>"$OUT/$name.log" 2>&1
    local rc=$?
    summary+=("$(printf '%-14s rc=%-3s %4ss' "$name" "$rc" "$((SECONDS - t0))")")
    echo "---- $name rc=$rc in $((SECONDS - t0)) s"
}

has() { [[ " $steps " == *" $1 "* ]]; }

nvidia-smi --query-gpu=name,driver_version,memory.used,memory.total,clocks.sm,clocks.max.sm \
    --format=csv | tee "$OUT/gpu.txt"
echo "threads: $(nproc)" | tee -a "$OUT/gpu.txt"

if has compile; then
    step compile 120 env BATON_REQUIRE_NVRTC=1 "$bin/kernels_compile" --test-threads 1
fi
if has conformance; then
    # One test at a time: they share the device and time their own work.
    step conformance 300 sh -c "'$bin/cuda_conformance' --test-threads 1 --nocapture && '$bin/cuda_partition' --test-threads 1 --nocapture"
fi
if has sppark; then
    step sppark 240 env USE_PREBUILT=1 bash "$here/sppark/run.sh"
fi
if has bench; then
    step bench 420 env BATON_BENCH_MSM="${FINAL_MSM:-20,22,24,26}" \
        BATON_BENCH_NTT="${FINAL_NTT:-24,26,27}" BATON_BENCH_G2="${FINAL_G2:-}" \
        BATON_BENCH_PARTITION="${FINAL_PART:-24,26}" BATON_BENCH_REPS="${FINAL_REPS:-5}" \
        BATON_BENCH_SPARSE="${FINAL_SPARSE:-22,24}" \
        BATON_BENCH_CPU_MAX_LOG="${FINAL_CPU_MAX_LOG:-20}" "$bin/bench_gpu"
fi
if has engine; then
    for log in ${FINAL_ENGINE:-24 26}; do
        # A 2^26 partition holds ~8 GiB on the host and the tiled key ~31 GiB: ten workers
        # (the whole request synthesizing at once) fit the 128 GiB host.
        if [ "$log" -ge 26 ]; then workers=10 budget=84GiB; else workers=16 budget=80GiB; fi
        step "engine$log" 300 "$bin/05-multi-gpu" --log "$log" --devices 1 --backend cuda \
            --requests 1 --partitions 10 --concurrent 1 --workers "$workers" \
            --bg2-workers 2 --budget "$budget" --bg2-device auto
    done
fi
if has ncu; then
    # Hardware counters of the hot kernels at 2^24 (clocks left alone): one dense MSM's
    # bucket accumulation and the passes of one NTT.
    ncu=${NCU:-/usr/local/cuda/bin/ncu}
    # ncu drops empty variables from the environment: "none" selects no size.
    export BATON_BENCH_MSM=24 BATON_BENCH_NTT=24 BATON_BENCH_PARTITION=none \
        BATON_BENCH_G2=none BATON_BENCH_REPS=1 BATON_BENCH_CPU_MAX_LOG=0
    step ncu 150 sh -c "'$ncu' --clock-control none -k regex:'^msm_accumulate\$' -c 1 \
        --section SpeedOfLight --section Occupancy --section WarpStateStats \
        --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis '$bin/bench_gpu' && \
        '$ncu' --clock-control none -k regex:'^ntt_pass\$' -s 3 -c 3 --section SpeedOfLight \
        --section WarpStateStats '$bin/bench_gpu'"
fi

{
    echo
    echo "==== summary (total $((SECONDS - t_start)) s)"
    for s in "${summary[@]}"; do echo "$s"; done
    grep -h "^test result\|^test .* FAILED\|panicked" "$OUT"/conformance.log "$OUT"/compile.log 2>/dev/null | head -20
    grep -h "^partition 2\|^compute_h 2\|engine on the device" "$OUT"/conformance.log 2>/dev/null | tail -12
    [ -f "$OUT/sppark.log" ] && { echo; echo "---- sppark"; grep "^|" "$OUT/sppark.log" | tail -30; }
    [ -f "$OUT/bench.log" ] && { echo; sed -n '/^## baton GPU bench/,$p' "$OUT/bench.log"; }
    [ -f "$OUT/ncu.log" ] && { echo; echo "---- ncu"; grep -E "msm_accumulate|ntt_pass|Throughput|Registers|Achieved Occupancy|Stall|Warp Cycles|Issue|Duration" "$OUT/ncu.log" | head -60; }
    for f in "$OUT"/engine*.log; do
        [ -f "$f" ] || continue
        echo
        echo "---- $(basename "$f" .log)"
        grep "stage means\|^|\|constraints," "$f"
    done
} | tee "$OUT/summary.txt"
