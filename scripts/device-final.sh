#!/usr/bin/env bash
# The final GPU run, ONE device call, sized for under 8 minutes on the lent H200 (the previous
# script, measured by parts on 2026-12-01: conformance 62 s, sppark 34 s, bench ~300 s, engine
# 27 s at 2^24 + 87 s at 2^26). In order, correctness before any timing:
#   conformance  cuda_conformance, cuda_partition, then cuda_msm_variants: every MSM variant
#                (baton::gpu::options::MSM_VARIANTS, or FINAL_VARIANTS) on its own backend
#                against the CPU (G1 2^10..2^22+1000 random/PoRep-like/edge cases, G2, a device
#                partition, a proof bellperson verifies and a wrong input fails);
#   sppark       sppark's MSM and NTT (prebuilt, the reference column of the same call);
#   bench        baton's GPU bench: the G1 MSM rows (2^20..2^26, dense and PoRep-like, medians
#                of FINAL_REPS) for every variant side by side, each result checked; NTT and
#                the device partition (2^24, 2^26, with B_G2) and the compiled-circuit rows
#                (a/b/c from a recorded R1CS, FINAL_SPARSE 2^22, 2^24) once, on the default;
#   engine       examples/05-multi-gpu at 2^24 (FINAL_ENGINE="24 26" adds 2^26, ~90 s more).
# A step starts only if the time left before FINAL_DEADLINE (540 s) covers its usual length
# (otherwise the summary says it was skipped), so the call ends inside the device tool's limit.
# Full logs go to $OUT; the summary comes last, the variant table and its verdicts in it.
#
# Here:   scripts/build-device.sh && cp -r ../shared/bench/sppark .device/sppark
#         (then copy .device/ into the checkout the device tool sends, e.g. main's .device/)
# Device: run with carry [".device"], timeout_s 600, the command `bash .device/device-final.sh`
#
# Steps (FINAL_STEPS, default "conformance sppark bench engine"; also compile, ncu, filecoin). Knobs:
# FINAL_VARIANTS (";"-separated variant specs for the test and the bench), FINAL_MSM /
# FINAL_NTT / FINAL_PART / FINAL_SPARSE (bench sizes), FINAL_REPS (5), FINAL_ENGINE ("24"), FINAL_DEADLINE.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bin=${FINAL_BIN:-$here}
OUT=${OUT:-/tmp/baton-device-out}
mkdir -p "$OUT"
export BATON_CACHE_DIR=${BATON_CACHE_DIR:-/tmp/baton-cache}
export RUST_LOG=${RUST_LOG:-warn} BATON_LOG=${BATON_LOG:-warn}
if [ -n "${FINAL_VARIANTS:-}" ]; then export BATON_MSM_VARIANTS=$FINAL_VARIANTS; fi
steps=${FINAL_STEPS:-conformance sppark bench engine}
deadline=${FINAL_DEADLINE:-540}
summary=()
t_start=$SECONDS

step() { # name, usual seconds, timeout seconds, command...: log to $OUT/name.log
    local name=$1 usual=$2 limit=$3
    shift 3
    local left=$((deadline - (SECONDS - t_start)))
    if [ "$left" -lt "$usual" ]; then
        summary+=("$(printf '%-14s skipped: %ss left, it takes ~%ss' "$name" "$left" "$usual")")
        echo "---- $name skipped ($left s left)"
        return
    fi
    [ "$limit" -gt "$left" ] && limit=$left
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
    step compile 60 120 env BATON_REQUIRE_NVRTC=1 "$bin/kernels_compile" --test-threads 1
fi
if has conformance; then
    # One test at a time: they share the device and time their own work.
    step conformance 120 240 sh -c "'$bin/cuda_conformance' --test-threads 1 --nocapture; a=\$?; \
        '$bin/cuda_partition' --test-threads 1 --nocapture; b=\$?; \
        '$bin/cuda_msm_variants' --test-threads 1 --nocapture; c=\$?; \
        [ \$a -eq 0 ] && [ \$b -eq 0 ] && [ \$c -eq 0 ]"
fi
if has sppark; then
    step sppark 30 120 env USE_PREBUILT=1 bash "$here/sppark/run.sh"
fi
if has bench; then
    step bench 230 360 env BATON_BENCH_MSM="${FINAL_MSM:-20,22,24,26}" \
        BATON_BENCH_NTT="${FINAL_NTT:-24,26,27}" BATON_BENCH_G2="${FINAL_G2:-}" \
        BATON_BENCH_PARTITION="${FINAL_PART:-24,26}" BATON_BENCH_PART_BEFORE=0 \
        BATON_BENCH_SPARSE="${FINAL_SPARSE:-22,24}" \
        BATON_BENCH_REPS="${FINAL_REPS:-5}" \
        BATON_BENCH_CPU_MAX_LOG="${FINAL_CPU_MAX_LOG:-20}" "$bin/bench_gpu"
fi
if has engine; then
    for log in ${FINAL_ENGINE:-24}; do
        # A 2^26 partition holds ~8 GiB on the host and the tiled key ~31 GiB: ten workers
        # (the whole request synthesizing at once) fit the 128 GiB host.
        if [ "$log" -ge 26 ]; then workers=10 budget=84GiB usual=90; else workers=16 budget=80GiB usual=30; fi
        step "engine$log" "$usual" 200 "$bin/05-multi-gpu" --log "$log" --devices 1 --backend cuda \
            --requests 1 --partitions 10 --concurrent 1 --workers "$workers" \
            --bg2-workers 2 --budget "$budget" --bg2-device auto
    done
fi
if has filecoin; then
    # Not in the default steps (needs BUILD_FILECOIN=1 at build time). Makes the 2 KiB PoRep
    # test parameters with baton's setup on the device first (not timed), then the real
    # circuit's synthesis full vs compiled and the whole C2 through the engine compiled / full /
    # filecoin-proofs' own seal_commit_phase2, medians of FINAL_FC_RUNS.
    step filecoin 240 450 env BATON_TEST_CACHE="${FINAL_FC_CACHE:-/tmp/baton-fc}" \
        BATON_BENCH_RUNS="${FINAL_FC_RUNS:-3}" "$bin/bench_filecoin" synth c2
fi
if has ncu; then
    # Hardware counters of the hot kernels at 2^24 (clocks left alone): one dense MSM's
    # bucket accumulation (per variant: FINAL_VARIANTS) and the passes of one NTT.
    ncu=${NCU:-/usr/local/cuda/bin/ncu}
    # ncu drops empty variables from the environment: "none" selects no size.
    export BATON_BENCH_MSM=24 BATON_BENCH_NTT=24 BATON_BENCH_PARTITION=none \
        BATON_BENCH_G2=none BATON_BENCH_REPS=1 BATON_BENCH_CPU_MAX_LOG=0
    step ncu 100 150 sh -c "'$ncu' --clock-control none -k regex:'^msm_accumulate\$' -c 1 \
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
    grep -h "^variant .*: \(ok\|FAILED\)\|^  .*: " "$OUT"/conformance.log 2>/dev/null | head -40
    grep -h "^partition 2\|^compute_h 2\|^ntt block\|engine on the device" "$OUT"/conformance.log 2>/dev/null | tail -12
    [ -f "$OUT/sppark.log" ] && { echo; echo "---- sppark"; grep "^|" "$OUT/sppark.log" | tail -30; }
    if [ -f "$OUT/bench.log" ]; then
        echo
        sed -n '/^## G1 MSM variants/,/^(end of the variant table)/p' "$OUT/bench.log"
        if grep -q "^## baton GPU bench" "$OUT/bench.log"; then
            sed -n '/^## baton GPU bench/,$p' "$OUT/bench.log"
        else # cut short: the rows as they were printed
            grep "^| " "$OUT/bench.log"
        fi
        grep -h "WRONG" "$OUT/bench.log" | head -10
    fi
    [ -f "$OUT/ncu.log" ] && { echo; echo "---- ncu"; grep -E "msm_accumulate|ntt_pass|Throughput|Registers|Achieved Occupancy|Stall|Warp Cycles|Issue|Duration" "$OUT/ncu.log" | head -60; }
    if [ -f "$OUT/filecoin.log" ]; then
        echo
        echo "---- filecoin"
        grep "^|\|^PoRep\|^run \|^(medians\|^engine stage" "$OUT/filecoin.log"
    fi
    for f in "$OUT"/engine*.log; do
        [ -f "$f" ] || continue
        echo
        echo "---- $(basename "$f" .log)"
        grep "stage means\|^|\|constraints," "$f"
    done
} | tee "$OUT/summary.txt"
