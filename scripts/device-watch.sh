#!/usr/bin/env bash
# One device call on the GPU tree (fourth session's call M, fifth session's call N;
# BENCHMARKS.md): conformance under a watchdog instead of `timeout` (a test binary silent for
# 45 s gets every thread's state, the mapping holding the futex it sleeps on and its pc
# printed, and is killed; a stopped run reruns whole, once) with every MSM variant of
# VARIANTS checked against the CPU, then sppark and the bench in the same call (the MSM rows of
# every variant with BATON_MSM_PHASES, the 2^27 NTT), ncu counters of the dense 2^24 MSM's
# scatter and accumulation, the engine at 2^24, the device partition at 2^24/2^26 and the
# engine at 2^26, each while DEADLINE (560 s) leaves time. STEPS picks the steps. CANDIDATE (a
# variant spec, e.g. "msm_piece_buckets=own") runs the conformance and partition
# tests under those knobs (BATON_TEST_GPU_VARIANT) and adds the steps nttc (the 2^27 NTT) and
# partc (the device partition) with them, beside the defaults' rows. CHECK_VARIANTS replaces
# VARIANTS for the variant conformance only (e.g. piece counts the bench need not time).
# Here:   scripts/build-device.sh && cp -r ../shared/bench/sppark .device/sppark
# Device: carry [".device"], timeout_s 600, `bash .device/device-watch.sh`
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
export BATON_CACHE_DIR=/tmp/baton-cache RUST_LOG=warn BATON_LOG=warn
DEADLINE=${DEADLINE:-560}
VARIANTS=${VARIANTS:-"default;msm_piece_buckets=own;msm_scatter_digits=recompute"}
# The variants the conformance checks against the CPU (VARIANTS unless set).
CHECK_VARIANTS=${CHECK_VARIANTS:-}
CANDIDATE=${CANDIDATE:-}
# The device partition's sizes (the part and partc steps).
PART_LOGS=${PART_LOGS:-24,26}
# Steps run, in this order: conformance sppark msm nttc ncu engine24 part partc partp engine26 trace
# (trace only when named). NTT_LOGS and NTT_BLOCKS: the msm step's NTT sizes and blocks (27, 9);
# MSM_LOGS its MSM sizes (20,22,24,26; "none" for none).
STEPS=" ${STEPS:-conformance sppark msm nttc ncu engine24 part partc engine26} "
# The candidate's knobs as the bench and the engine read them (BATON_GPU_<KEY>=value).
cand_env=()
IFS=',' read -ra cand_parts <<< "$CANDIDATE"
for kv in "${cand_parts[@]}"; do k=${kv%%=*}; [ -n "$k" ] && cand_env+=("BATON_GPU_${k^^}=${kv#*=}"); done
has() { [[ "$STEPS" == *" $1 "* ]]; }
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
    # Every thread's stack (the binaries keep their symbols; the image has cuda-gdb, no gdb).
    local gdb; gdb=$(command -v cuda-gdb || echo /usr/local/cuda/bin/cuda-gdb)
    if [ -x "$gdb" ]; then
        timeout 60 "$gdb" -p "$pid" -batch -ex "set pagination off" -ex "thread apply all bt 40" \
            > "$OUT/stacks-$pid.log" 2>&1
        echo "stacks: $OUT/stacks-$pid.log (rc=$?)"
        grep -E "^Thread |^#" "$OUT/stacks-$pid.log" | grep -v "in ?? ()" | cut -c1-200 | head -120
    fi
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
if has conformance; then
    gv="${CANDIDATE:-default}"  # the knobs the conformance and partition tests run under
    # Modules loaded eagerly (first added against a stall blamed on lazy loading; the stall was
    # the CPU NTT's twiddle table built inside its own parallel stages, a rayon/OnceLock
    # deadlock fixed in b1f480a: BENCHMARKS.md, twenty-first session). A stopped run is
    # rerun whole, once, and the watchdog still takes every thread's stack first.
    # CONF_ONLY=1: cuda_conformance alone, no rerun.
    BATON_TEST_GPU_VARIANT=$gv watched conformance 45 env CUDA_MODULE_LOADING=EAGER "$here/cuda_conformance" --test-threads 1 --nocapture
    if [ $? -eq 99 ] && [ -z "${CONF_ONLY:-}" ]; then BATON_TEST_GPU_VARIANT=$gv watched conformance_rerun 60 env CUDA_MODULE_LOADING=EAGER "$here/cuda_conformance" --test-threads 1 --nocapture; fi
    if [ -z "${CONF_ONLY:-}" ]; then
        BATON_TEST_GPU_VARIANT=$gv watched partition 45 "$here/cuda_partition" --test-threads 1 --nocapture
        BATON_MSM_VARIANTS="${CHECK_VARIANTS:-$VARIANTS}" watched variants 60 "$here/cuda_msm_variants" --test-threads 1 --nocapture
    fi
    echo "conformance done at $((SECONDS - t0)) s"
fi
if has sppark; then
    USE_PREBUILT=1 timeout 100 bash "$here/sppark/run.sh" > "$OUT/sppark.log" 2>&1; echo "sppark rc=$? at $((SECONDS - t0)) s"
fi
engine() { # log workers budget need [gpu knobs [log tag]]
    if [ "$(left)" -lt "$4" ]; then echo "engine $1 skipped: $(left) s left"; return; fi
    local log="$OUT/engine$1${6:-}.log"
    timeout "$(left)" "$here/05-multi-gpu" --log "$1" --devices 1 --backend cuda --requests 1 \
        --partitions 10 --concurrent 1 --workers "$2" --bg2-workers 2 --budget "$3" \
        --bg2-device auto --gpu "${5:-}" > "$log" 2>&1; echo "engine $1${6:-} rc=$? at $((SECONDS - t0)) s"
}
bench() { # label, then env assignments
    local label=$1; shift
    env BATON_BENCH_G2= BATON_BENCH_PART_BEFORE=0 BATON_BENCH_SPARSE=none \
      BATON_BENCH_REPS=5 BATON_BENCH_CPU_MAX_LOG=20 "$@" \
      timeout "$(( $(left) - 10 ))" "$here/bench_gpu" > "$OUT/bench-$label.log" 2>&1
    echo "bench $label rc=$? at $((SECONDS - t0)) s"
}
has msm && bench msm BATON_MSM_PHASES=1 BATON_MSM_VARIANTS="$VARIANTS" BATON_BENCH_MSM="${MSM_LOGS:-20,22,24,26}" \
    BATON_BENCH_NTT="${NTT_LOGS:-27}" BATON_BENCH_NTT_BLOCKS="${NTT_BLOCKS:-9}" BATON_BENCH_NTT_RADIX=4 BATON_BENCH_PARTITION=
[ -n "$CANDIDATE" ] && has nttc && bench nttc "${cand_env[@]}" BATON_MSM_VARIANTS=default BATON_BENCH_MSM= \
    BATON_BENCH_NTT="${NTT_LOGS:-27}" BATON_BENCH_NTT_BLOCKS="${NTT_BLOCKS:-9}" BATON_BENCH_NTT_RADIX=4 BATON_BENCH_PARTITION=
if has ncu && [ "$(left)" -gt 60 ]; then
    # Counters of the first dense 2^24 MSM's scatter and accumulation (clocks left alone; ncu
    # drops empty variables from the environment, so "none" selects no size), or with
    # NCU_WHAT=ntt of the four passes of the first 2^27 NTT.
    if [ "${NCU_WHAT:-msm}" = ntt ]; then
        ncu_sel=(BATON_BENCH_MSM=none BATON_BENCH_NTT=27 BATON_BENCH_NTT_BLOCKS=9 BATON_BENCH_NTT_RADIX=4)
        ncu_k=(-k regex:'^ntt_pass_r4$' -c 4)
    else
        ncu_sel=(BATON_BENCH_MSM=24 BATON_BENCH_NTT=none)
        ncu_k=(-k regex:'^msm_(scatter|accumulate)$' -c 2)
    fi
    stalls=$(printf 'smsp__average_warps_issue_stalled_%s_per_issue_active.ratio,' long_scoreboard short_scoreboard wait math_pipe_throttle mio_throttle lg_throttle no_instruction not_selected selected dispatch_stall barrier branch_resolving drain imc_miss membar sleeping tex_throttle misc)
    # NCU_KNOBS (e.g. "field_karatsuba=mul") profiles those [gpu] knobs instead of the defaults;
    # NCU_TAG names the log (ncu$NCU_TAG.log), so one call can profile both.
    ncu_env=()
    IFS=',' read -ra ncu_parts <<< "${NCU_KNOBS:-}"
    for kv in "${ncu_parts[@]}"; do k=${kv%%=*}; [ -n "$k" ] && ncu_env+=("BATON_GPU_${k^^}=${kv#*=}"); done
    env BATON_MSM_VARIANTS=default "${ncu_env[@]}" "${ncu_sel[@]}" BATON_BENCH_PARTITION=none \
      BATON_BENCH_G2=none BATON_BENCH_SPARSE=none BATON_BENCH_REPS=1 BATON_BENCH_CPU_MAX_LOG=0 \
      timeout "$(( $(left) - 5 ))" /usr/local/cuda/bin/ncu --clock-control none "${ncu_k[@]}" \
      --section SpeedOfLight --section Occupancy --section ComputeWorkloadAnalysis --section WarpStateStats \
      --metrics "${stalls}sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_fmaheavy_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_alu.avg.pct_of_peak_sustained_active,sm__issue_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum" \
      "$here/bench_gpu" > "$OUT/ncu${NCU_TAG:-}.log" 2>&1; echo "ncu${NCU_TAG:-} rc=$? at $((SECONDS - t0)) s"
fi
has engine24 && engine 24 16 80GiB 35
has part && bench part BATON_MSM_VARIANTS=default BATON_BENCH_MSM= BATON_BENCH_NTT= BATON_BENCH_PARTITION="$PART_LOGS"
[ -n "$CANDIDATE" ] && has partc && bench partc "${cand_env[@]}" BATON_MSM_VARIANTS=default BATON_BENCH_MSM= \
    BATON_BENCH_NTT= BATON_BENCH_PARTITION="$PART_LOGS"
# Each MSM's steps inside the partition (BATON_MSM_PHASES: a wait after every MSM, so one
# untimed-of-record run) and the G2 MSMs of G2_LOGS alone, for where the partition's time goes.
has partp && bench partp BATON_MSM_PHASES=1 BATON_BENCH_REPS=1 BATON_MSM_VARIANTS=default BATON_BENCH_MSM= \
    BATON_BENCH_NTT= BATON_BENCH_PARTITION="${PARTP_LOGS:-26}" BATON_BENCH_G2="${G2_LOGS:-}"
has engine26 && engine 26 10 84GiB 100
# The 2^26 request again, with and without the key made resident ahead (ENGINE26_AB pairs).
for i in $(seq 1 "${ENGINE26_AB:-0}"); do
    has engine26 && engine 26 10 84GiB 100 warm_keys=false "-cold$i"
    has engine26 && engine 26 10 84GiB 100 "" "-warm$i"
done
# Each staged upload's DMA per chunk against the host's copies and waits (BATON_UPLOAD_TRACE):
# the 2^26 partition from host a/b/c (a, b, c beside the witness's MSMs) and a/b/c alone.
has trace && bench trace BATON_UPLOAD_TRACE=1 BATON_BENCH_REPS=1 BATON_MSM_VARIANTS=default BATON_BENCH_MSM= \
    BATON_BENCH_NTT= BATON_BENCH_PARTITION=26
echo; grep "^| " "$OUT/sppark.log" | tail -22
echo; cat "$OUT"/bench-*.log | grep "^| \|^device partition" | head -100
[ -f "$OUT/bench-partp.log" ] && { echo "-- phases"; grep "^msm phases" "$OUT/bench-partp.log" | sed 's/msm phases: //' | head -40; }

[ -f "$OUT/ncu${NCU_TAG:-}.log" ] && grep -E "^  [a-z_]+ \(|Duration|Throughput|Registers|Achieved Occupancy|Issue|pipe|stalled|inst_executed" "$OUT/ncu${NCU_TAG:-}.log" | head -80
for f in "$OUT"/engine*.log; do [ -f "$f" ] && { echo "-- $f"; grep "stage means\|^|\|constraints,\|proofs/h\|busy" "$f" | head -12; }; done
# Last, so the call's tail keeps it: every test binary's verdict.
[ -f "$OUT/bench-trace.log" ] && { echo "-- upload trace"; grep "^upload trace" "$OUT/bench-trace.log" | sed 's/upload trace: //' | head -24; }
echo "-- conformance verdicts"; for f in conformance conformance_rerun partition variants; do
    [ -f "$OUT/$f.log" ] && echo "$f: $(grep -h '^test result' "$OUT/$f.log" | tail -1) $(grep -c 'FAILED\|panicked' "$OUT/$f.log") failures"
done
