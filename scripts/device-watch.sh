#!/usr/bin/env bash
# One device call on the final GPU tree (fourth session's call M, BENCHMARKS.md): conformance
# under a watchdog instead of `timeout` (a test binary silent for 45 s gets every thread's
# state, the mapping holding the futex it sleeps on and its pc printed, and is killed; a
# stopped NTT test reruns once alone), then sppark and the bench in the same call (MSM rows
# with BATON_MSM_PHASES, NTT on the defaults, the device partition at 2^24/2^26/2^27), then
# the engine at 2^24 and 2^26 while DEADLINE (560 s) leaves time.
# Here:   scripts/build-device.sh && cp -r ../shared/bench/sppark .device/sppark
# Device: carry [".device"], timeout_s 600, `bash .device/device-watch.sh`
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
export BATON_CACHE_DIR=/tmp/baton-cache RUST_LOG=warn BATON_LOG=warn
DEADLINE=${DEADLINE:-560}
t0=$SECONDS
left() { echo $((DEADLINE - (SECONDS - t0))); }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
where() { # pid hexaddr -> mapping line
    local pid=$1 a=$((16#${2#0x}))
    while read -r range perms off dev inode path; do
        local lo=$((16#${range%-*})) hi=$((16#${range#*-}))
        if [ "$a" -ge "$lo" ] && [ "$a" -lt "$hi" ]; then echo "${path:-[anon]} $perms +$(printf %x $((a - lo)))"; return; fi
    done < /proc/"$pid"/maps
    echo "(unmapped)"
}
diag() {
    local pid=$1
    nvidia-smi --query-gpu=utilization.gpu,memory.used --format=csv,noheader
    for t in /proc/"$pid"/task/*; do
        local tid; tid=$(basename "$t")
        read -r nr a0 a1 a2 a3 a4 a5 sp pc < "$t"/syscall
        echo "tid $tid $(cat "$t"/comm) nr=$nr utime=$(awk '{print $14}' "$t"/stat) futex=[$(where "$pid" "$a0")] op=$a1 pc=[$(where "$pid" "$pc")]"
    done
}
watched() { # label, seconds-of-silence, command...
    local label=$1 quiet=$2; shift 2
    local log="$OUT/$label.log"
    "$@" >"$log" 2>&1 &
    local pid=$! last=$SECONDS size=0
    while kill -0 "$pid" 2>/dev/null; do
        sleep 1
        local s; s=$(stat -c %s "$log")
        if [ "$s" != "$size" ]; then size=$s; last=$SECONDS; fi
        if [ $((SECONDS - last)) -ge "$quiet" ]; then
            echo "== $label: silent for $quiet s; last lines:"; tail -3 "$log"
            diag "$pid"; kill -9 "$pid"; wait "$pid"; echo "== $label: killed"; return 99
        fi
    done
    wait "$pid"; local rc=$?
    echo "== $label: rc=$rc"; grep "^test result\|FAILED\|panicked" "$log" | head
    return $rc
}
watched conformance 45 "$here/cuda_conformance" --test-threads 1 --nocapture
if [ $? -eq 99 ]; then watched ntt_rerun 45 "$here/cuda_conformance" --exact ntt_and_h_match_cpu_for_every_block --test-threads 1 --nocapture; fi
watched partition 45 "$here/cuda_partition" --test-threads 1 --nocapture
BATON_MSM_VARIANTS="default" watched variants 60 "$here/cuda_msm_variants" --test-threads 1 --nocapture
echo "conformance done at $((SECONDS - t0)) s"
USE_PREBUILT=1 timeout 100 bash "$here/sppark/run.sh" > "$OUT/sppark.log" 2>&1; echo "sppark rc=$? at $((SECONDS - t0)) s"
BATON_MSM_PHASES=1 BATON_MSM_VARIANTS="default" BATON_BENCH_MSM=20,22,24,26 \
  BATON_BENCH_NTT=24,26,27 BATON_BENCH_NTT_BLOCKS=9 BATON_BENCH_NTT_RADIX=4 BATON_BENCH_G2= \
  BATON_BENCH_PARTITION=24,26,27 BATON_BENCH_PART_BEFORE=0 BATON_BENCH_SPARSE=none \
  BATON_BENCH_REPS=5 BATON_BENCH_CPU_MAX_LOG=20 \
  timeout "$(( $(left) - 10 ))" "$here/bench_gpu" > "$OUT/bench.log" 2>&1; echo "bench rc=$? at $((SECONDS - t0)) s"
for log in 24 26; do
    if [ "$log" -ge 26 ]; then workers=10 budget=84GiB need=100; else workers=16 budget=80GiB need=35; fi
    if [ "$(left)" -lt "$need" ]; then echo "engine $log skipped: $(left) s left"; continue; fi
    timeout "$(left)" "$here/05-multi-gpu" --log "$log" --devices 1 --backend cuda --requests 1 \
        --partitions 10 --concurrent 1 --workers "$workers" --bg2-workers 2 --budget "$budget" \
        --bg2-device auto > "$OUT/engine$log.log" 2>&1; echo "engine $log rc=$? at $((SECONDS - t0)) s"
done
echo; grep "^| " "$OUT/sppark.log" | tail -22
echo; grep "^| \|^device partition" "$OUT/bench.log" | head -40
echo; grep "^msm phases" "$OUT/bench.log" | awk '!seen[$3 $4 $5]++' | head -12
for f in "$OUT"/engine*.log; do [ -f "$f" ] && { echo "-- $f"; grep "stage means\|^|\|constraints,\|proofs/h\|busy" "$f" | head -12; }; done
