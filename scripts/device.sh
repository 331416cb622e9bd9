#!/usr/bin/env bash
# The GPU device runner: one script, named steps. The GPU machine has no Rust and no network,
# so the binaries are built here and the steps run there (../shared/GPU.md).
#
# Here:   scripts/device.sh build
#         release binaries (the CUDA tests, the GPU bench, the CLI, examples/05-multi-gpu;
#         BUILD_FILECOIN=1 adds the Filecoin bench) into .device/ (ignored by git), this
#         script beside them, and sppark's harness from ../shared/bench/sppark when present
#         (SPPARK=0 leaves it out). Then run with carry [".device"], timeout_s 600.
# There:  bash .device/device.sh STEP...            e.g. conformance sppark msm part
#         Steps run in the order given; full logs go to $OUT (packed into one logs-K.tar.gz
#         when they pass 7 files: a call brings back 8); a short table comes last.
#         With no step: conformance sppark msm nttc ncu engine24 part partc engine26.
#
# Steps (correctness before timing: put conformance first):
#   compile      kernels_compile: NVRTC compiles every kernel on the device (BATON_REQUIRE_NVRTC)
#   conformance  cuda_conformance under a watchdog (a binary silent for 45 s gets every thread's
#                state and stack printed and is killed; a stopped run reruns whole, once;
#                CONF_ONLY=1: that binary alone, no rerun), cuda_partition, then
#                cuda_capped (gpu.memory_limit: streamed MSMs, H in two buffers, the per-call
#                partition, engine proofs, the refusal below the minimum), then
#                cuda_msm_variants: every spec of CHECK_VARIANTS (else VARIANTS) against the CPU
#   cli          `baton prove --constraints 65536 --proofs 4 --backend cuda`
#   sppark       sppark's MSM and NTT harness, prebuilt: the reference column of the same call
#   msm          (alias bench-msm) the bench's G1 MSM rows of MSM_LOGS for every VARIANTS spec
#                side by side with BATON_MSM_PHASES, each result checked, and the NTT rows of
#                NTT_LOGS / NTT_BLOCKS (radix 4). Only MSM rows: NTT_LOGS=none REPS=3.
#   bench        the whole GPU bench once: BENCH_MSM, BENCH_NTT, BENCH_G2, BENCH_PART,
#                BENCH_SPARSE (sizes; "none" for none), BENCH_CPU_MAX_LOG (CPU reference rows)
#   ncu          counters of the first dense 2^24 MSM's scatter and accumulation, or with
#                NCU_WHAT=ntt of the first 2^27 NTT's passes, NCU_WHAT=pairs of the first
#                batch-affine round's kernels (1 or 3) and then the accumulation (with
#                NCU_KNOBS=msm_affine_rounds=1, and msm_affine_split=true for the 3);
#                NCU_KNOBS profiles other [gpu]
#                knobs, NCU_TAG names the log (ncu$NCU_TAG.log)
#   part         (aliases partition, bench-partition) the device partition, H + 4 G1 MSMs +
#                B_G2, at PART_LOGS: staged, from device a/b/c, from registered host memory
#   capped-tests cuda_capped alone (the conformance step runs it too)
#   variants     cuda_msm_variants alone over CHECK_VARIANTS (else VARIANTS): a change to
#                a variant's kernels only (the conformance step runs it too)
#   partition-tests  cuda_partition and cuda_capped: the conformance of a change to the
#                partition call that leaves the MSM and NTT kernels alone
#   capped       the partition under gpu.memory_limit: CAPPED_LOGS (26) at CAPS GiB (0,32,24,16;
#                0: none), each limit on its own backend, checked against the uncapped run;
#                a/b/c from CAPPED_ABC ("host,device": uploaded, or evaluated on the device from
#                the recording); GPU_BIN names another build of bench_gpu beside this script,
#                GPU_TAG suffixes its log's name (before and after in one call); CANDIDATE's
#                knobs apply (e.g. CANDIDATE=capped_cut=knob GPU_TAG=-knob)
#   partp        one partition run per PARTP_LOGS size with every MSM's phases, and the G2
#                MSMs of G2_LOGS alone
#   trace        the 2^26 partition's uploads chunk by chunk (BATON_UPLOAD_TRACE)
#   nttc, partc  the NTT / partition rows under CANDIDATE (a spec of [gpu] knobs, e.g.
#                "msm_piece_buckets=own"; conformance then runs under it too)
#   engine24     examples/05-multi-gpu on one GPU, 10 partitions of 2^24
#   engine26     the same at 2^26; ENGINE26_AB=k adds k pairs of runs without and with the
#                key made resident ahead (warm_keys)
#   critical     benches/critical.rs: a CRITICAL 2^CRIT_LOG (20) job idle and while 2 jobs of 10
#                2^CRIT_BUSY_LOG (24) partitions keep the engine busy, three settings in one run;
#                CRIT_BIN names another build of the bench beside this script, CRIT_TAG its log,
#                CRIT_USUAL (200) the seconds it must have left to start; CRIT_HOST_THREADS
#                puts the GPU actor's host copies on that many threads of the device's own;
#                its third table: CPU time, run-queue wait, minor faults and sleeps by thread
#                group per CRITICAL job; CRIT_SETTINGS ("1on,1off,0on") picks the settings;
#                CRIT_ON (e.g. H200) runs it only on a card whose name holds that
#   engine26-nice  ENGINE26_NICE (2) pairs of 10 x 2^26 engine runs, synthesis.nice 0 then 10
#   multi-gpu    proofs per hour with 1 and 2 GPU actors on one stream (a 2-GPU machine):
#                MULTI_LOG (24), MULTI_REQUESTS (8), MULTI_CONCURRENT (4), MULTI_WORKERS (28),
#                MULTI_BG2 (4), MULTI_BUDGET (120GiB), MULTI_BG2_DEVICE (cpu), MULTI_TIMEOUT
#   filecoin     (BUILD_FILECOIN=1) makes the 2 KiB PoRep test parameters with baton's setup,
#                then bench_filecoin synth c2: real-circuit synthesis full vs compiled and the
#                whole C2 against filecoin-proofs' seal_commit_phase2, medians of FC_RUNS (3)
#   c2-32g       (BUILD_FILECOIN=1) a whole 32 GiB PoRep C2 through the engine with a shape key
#                and generated C1s: warm-up (records the circuit), isolated, C2_PROOFS (5) at
#                once; C2_BUDGET (56GiB), C2_WORKERS (14); its proofs do not verify; C2_TAG
#                suffixes the log's name (two runs in one call); with
#                BATON_LOG=warn,baton::gpu::cuda::sparse=debug each device a/b/c's split is logged
#                (baton::gpu::cuda::memory=debug adds the memory policy's stream waits and evictions);
#                C2_BIN names another build of bench_filecoin beside this script; C2_USUAL
#                (420) the seconds it must have left to start (two runs in one call: 200)
#   c2-64g       the same for a 64 GiB sector
#   owed38       sppark, capped-tests, then capped at 2^26 and 2^27 (every limit, host a/b/c) with
#                baton::gpu::cuda::streamed at debug: issue 38's table in one call (~550 s)
#   h-beside     gpu.experimental.capped_h_beside: sppark, then the capped 2^27 partition (host
#                a/b/c, CAPS 0,32,24, 3 runs) under "off", "witness_first" and "on", each
#                streamed MSM logged and summed up last (~450 s); its cuda_capped run is
#                `CANDIDATE=capped_h_beside=witness_first capped-tests` (~110 s)
#   recording-ab the 32 GiB C2 at 24 GiB (C2_PROOFS=2) with BATON_GPU_CAPPED_RECORDING=spare and
#                =evict, the memory policy logged, 290 s each (capped-tests: owed38)
#   c2-caps      the 32 GiB C2 once a limit of C2_CAPS (GiB, 0: none; "0,24"), C2_PROOFS (3) at
#                once, logs c2-32g-capN: the engine under gpu.memory_limit against the uncapped
#                engine of the same lease; add BATON_LOG=warn,baton::gpu::cuda::sparse=debug,
#                baton::gpu::cuda::partition=debug for each partition's a/b/c path and cut;
#                C2_TAG suffixes the logs' names, so that a knob's run (BATON_GPU_<KNOB>=...
#                before the command, e.g. BATON_GPU_CAPPED_RECORDING=spare) sits beside the
#                default's in one call
#   sparse       the bench's sparse a/b/c rows alone (plain and packed witness), SPARSE_LOGS (22,24)
#   owed1, owed2 the runs issues 36-38 still owe, chosen by the card, as two calls of one lease
#                (owed1, then owed2 on the same warm machine; ~500 s each). H200: conformance
#                and sppark, CRITICAL; then the 32 GiB C2 with five at once and the capped 2^27
#                rows at every limit. H100: conformance and sppark, the 32 GiB C2 under a
#                24 GiB limit; then the uncapped C2 beside it (docs/bench-log/2026-12-07.md,
#                "Eighth session")
#   quick        compile conformance cli, then a short bench (MSM 2^20/2^22, NTT to 2^24,
#                partition 2^20, 3 runs)
# Knobs: VARIANTS (";"-separated [gpu] specs the bench times side by side), CHECK_VARIANTS,
# CANDIDATE, REPS (5), DEADLINE (560 s: a step starts only if the time left covers its usual
# length, else the table says it was skipped), MSM_LOGS (20,22,24,26), NTT_LOGS (27),
# NTT_BLOCKS (9), PART_LOGS (24,26). BATON_* variables a step does not set pass through.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

if [ "${1:-}" = build ]; then
    cd "$here/.."
    export CARGO_PROFILE_RELEASE_DEBUG=0
    out=.device
    rm -rf "$out"
    mkdir -p "$out"
    set -e
    pick() { # cargo JSON messages on stdin -> executable of target $1
        python3 -c '
import json, sys
name = sys.argv[1]
for line in sys.stdin:
    try:
        m = json.loads(line)
    except ValueError:
        continue
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"] == name:
        print(m["executable"])
' "$1" | tail -1
    }
    tests=$(cargo test --release --features cuda --test cuda_conformance --test cuda_partition \
        --test cuda_msm_variants --test cuda_capped --test kernels_compile --no-run \
        --message-format=json)
    bench=$(cargo bench --features cuda --bench gpu --no-run --message-format=json)
    crit=$(cargo bench --features cuda --bench critical --no-run --message-format=json)
    cli=$(cargo build --release --features cuda --bin baton --example 05-multi-gpu --message-format=json)
    for t in cuda_conformance kernels_compile cuda_partition cuda_msm_variants cuda_capped; do
        cp "$(pick $t <<<"$tests")" "$out/$t"
    done
    cp "$(pick gpu <<<"$bench")" "$out/bench_gpu"
    cp "$(pick critical <<<"$crit")" "$out/bench_critical"
    cp "$(pick baton <<<"$cli")" "$out/baton"
    cp "$(pick 05-multi-gpu <<<"$cli")" "$out/05-multi-gpu"
    if [ "${BUILD_FILECOIN:-0}" = 1 ]; then
        fc=$(cargo bench --features cuda,filecoin,test-util --bench filecoin --no-run --message-format=json)
        cp "$(pick filecoin <<<"$fc")" "$out/bench_filecoin"
    fi
    cp scripts/device.sh "$out/"
    if [ "${SPPARK:-1}" = 1 ] && [ -d ../shared/bench/sppark ]; then
        cp -r ../shared/bench/sppark "$out/sppark"
    fi
    if command -v strip >/dev/null; then
        # Debug info only: the symbols stay, so that a stack taken on the device (the
        # conformance watchdog, cuda-gdb) names its functions.
        strip --strip-debug "$out"/* 2>/dev/null || true
    fi
    du -sh "$out"/* | tail -n 12
    exit 0
fi

OUT=${OUT:-/tmp/baton-device-out}
mkdir -p "$OUT"
export BATON_CACHE_DIR=${BATON_CACHE_DIR:-/tmp/baton-cache}
export RUST_LOG=${RUST_LOG:-warn} BATON_LOG=${BATON_LOG:-warn}
DEADLINE=${DEADLINE:-560}
REPS=${REPS:-5}
VARIANTS=${VARIANTS:-"default;msm_piece_buckets=own;msm_scatter_digits=recompute"}
CHECK_VARIANTS=${CHECK_VARIANTS:-}
CANDIDATE=${CANDIDATE:-}
PART_LOGS=${PART_LOGS:-24,26}
steps=("$@")
[ ${#steps[@]} -eq 0 ] && steps=(conformance sppark msm nttc ncu engine24 part partc engine26)
known=" h-beside compile conformance cli sppark msm bench-msm nttc bench quick ncu part partition bench-partition capped capped-tests variants partition-tests partc partp trace engine24 engine26 engine26-nice critical multi-gpu filecoin c2-32g c2-64g c2-caps sparse owed1 owed2 owed38 recording-ab "
for step in "${steps[@]}"; do
    [[ "$known" == *" $step "* ]] || { echo "unknown step: $step (known:$known)"; exit 2; }
done
t0=$SECONDS
left() { echo $((DEADLINE - (SECONDS - t0))); }
table=()

# The candidate's knobs as the bench and the engine read them (BATON_GPU_<KEY>=value).
knob_env() { # spec -> BATON_GPU_ assignments, one a line
    local kv
    IFS=',' read -ra kvs <<< "$1"
    for kv in "${kvs[@]}"; do
        local k=${kv%%=*}
        [ -n "$k" ] && echo "BATON_GPU_${k^^}=${kv#*=}"
    done
}
mapfile -t cand_env < <(knob_env "$CANDIDATE")

# run NAME USUAL LIMIT COMMAND...: skipped if the time left is below USUAL seconds, else the
# command under a timeout of min(LIMIT, time left), logged to $OUT/NAME.log, rc and seconds
# recorded for the table.
run() {
    local name=$1 usual=$2 limit=$3
    shift 3
    local l; l=$(left)
    if [ "$l" -lt "$usual" ]; then
        table+=("$(printf '%-18s skipped (%s s left, takes ~%s s)' "$name" "$l" "$usual")")
        echo "---- $name skipped: $l s left"
        return
    fi
    [ "$limit" -gt "$l" ] && limit=$l
    local s=$SECONDS
    echo "==== $name: $*" | tee "$OUT/$name.log"
    timeout "$limit" "$@" >>"$OUT/$name.log" 2>&1
    local rc=$?
    table+=("$(printf '%-18s rc=%-3s %4s s' "$name" "$rc" "$((SECONDS - s))")")
    echo "---- $name rc=$rc in $((SECONDS - s)) s (at $((SECONDS - t0)) s)"
}

bench() { # label usual, then env assignments: one run of the GPU bench
    local label=$1 usual=$2
    shift 2
    run "bench-$label" "$usual" "$(( $(left) - 10 ))" env BATON_BENCH_G2= BATON_BENCH_PART_BEFORE=0 \
        BATON_BENCH_SPARSE=none BATON_BENCH_REPS="$REPS" BATON_BENCH_CPU_MAX_LOG=20 "$@" \
        "$here/${GPU_BIN:-bench_gpu}"
}

capped_usual() { # seconds a capped step takes: each size recorded, then each limit and source
    local s=0 log caps srcs
    caps=$(tr ',' '\n' <<< "${CAPS:-0,32,24,16}" | grep -c .)
    srcs=$(tr ',' '\n' <<< "${CAPPED_ABC:-host,device}" | grep -c .)
    # 2^26 measured on an H100 (docs/bench-log/2026-12-07.md, BB1-BB3): recording ~32 s, each
    # limit ~21 s there; 2^27's figures are estimates from those, not measured.
    for log in $(tr ',' ' ' <<< "${CAPPED_LOGS:-26}"); do
        case $log in
            26) s=$((s + 35 + 22 * caps * srcs)) ;;
            # 2^27 on the H200 (docs/bench-log/2026-12-07.md, EE2): the key's bases and the
            # recording ~90 s, each limit ~19 s at five runs.
            27) s=$((s + 90 + 18 * caps * srcs)) ;;
            *) s=$((s + 20 + 10 * caps * srcs)) ;;
        esac
    done
    echo "$s"
}

c2() { # name usual proofs sector (c2-32g, c2-64g), then env assignments: one C2 bench run
    local name=$1 usual=$2 proofs=$3 sector=$4
    shift 4
    run "$name" "$usual" 590 env "$@" BATON_MEMORY_BUDGET="${C2_BUDGET:-56GiB}" \
        BATON_SYNTHESIS_WORKERS="${C2_WORKERS:-14}" BATON_BENCH_PROOFS="$proofs" \
        "$here/${C2_BIN:-bench_filecoin}" "$sector"
}

engine() { # log workers budget usual [gpu knobs [tag]]
    run "engine$1${6:-}" "$4" 300 "$here/05-multi-gpu" --log "$1" --devices 1 --backend cuda \
        --requests 1 --partitions 10 --concurrent 1 --workers "$2" --bg2-workers 2 \
        --budget "$3" --bg2-device auto --gpu "${5:-}"
}

where() { # pid hexaddr -> mapping line
    local pid=$1 a=$((16#${2#0x}))
    while read -r range perms off dev inode path; do
        local lo=$((16#${range%-*})) hi=$((16#${range#*-}))
        if [ "$a" -ge "$lo" ] && [ "$a" -lt "$hi" ]; then echo "${path:-[anon]} $perms +$(printf %x $((a - lo)))"; return; fi
    done < /proc/"$pid"/maps
    echo "(unmapped)"
}
diag() { # pid: every thread's syscall, futex mapping and pc, then every thread's stack
    local pid=$1
    nvidia-smi --query-gpu=utilization.gpu,memory.used --format=csv,noheader
    for t in /proc/"$pid"/task/*; do
        local tid; tid=$(basename "$t")
        read -r nr a0 a1 a2 a3 a4 a5 sp pc < "$t"/syscall
        echo "tid $tid $(cat "$t"/comm) nr=$nr utime=$(awk '{print $14}' "$t"/stat) futex=[$(where "$pid" "$a0")] op=$a1 pc=[$(where "$pid" "$pc")]"
    done
    # The binaries keep their symbols; the image has cuda-gdb, no gdb.
    local gdb; gdb=$(command -v cuda-gdb || echo /usr/local/cuda/bin/cuda-gdb)
    if [ -x "$gdb" ]; then
        timeout 60 "$gdb" -p "$pid" -batch -ex "set pagination off" -ex "thread apply all bt 40" \
            > "$OUT/stacks-$pid.log" 2>&1
        echo "stacks: $OUT/stacks-$pid.log (rc=$?)"
        grep -E "^Thread |^#" "$OUT/stacks-$pid.log" | grep -v "in ?? ()" | cut -c1-200 | head -120
    fi
}
watched() { # label, seconds of silence, command...: rc 99 when the watchdog killed it
    local label=$1 quiet=$2
    shift 2
    local log="$OUT/$label.log" s0=$SECONDS
    "$@" >"$log" 2>&1 &
    local pid=$! last=$SECONDS size=0
    while kill -0 "$pid" 2>/dev/null; do
        sleep 1
        local sz; sz=$(stat -c %s "$log")
        if [ "$sz" != "$size" ]; then size=$sz; last=$SECONDS; fi
        if [ $((SECONDS - last)) -ge "$quiet" ]; then
            echo "== $label: silent for $quiet s; last lines:"; tail -3 "$log"
            diag "$pid"; kill -9 "$pid"; wait "$pid"; echo "== $label: killed"
            table+=("$(printf '%-18s killed (silent %s s) %4s s' "$label" "$quiet" "$((SECONDS - s0))")")
            return 99
        fi
    done
    wait "$pid"
    local rc=$?
    echo "== $label: rc=$rc"; grep "^test result\|FAILED\|panicked" "$log" | head
    table+=("$(printf '%-18s rc=%-3s %4s s' "$label" "$rc" "$((SECONDS - s0))")")
    return $rc
}

conformance() {
    local gv="${CANDIDATE:-default}" # the knobs the conformance and partition tests run under
    # Modules loaded eagerly (first added against a stall blamed on lazy loading; the stall was
    # the CPU NTT's twiddle table built inside its own parallel stages, a rayon/OnceLock
    # deadlock fixed in b1f480a: docs/bench-log/2026-12-03.md, "The first-run stall, found").
    # A stopped run is rerun whole, once, and the watchdog takes every thread's stack first.
    # 90 s of silence: a fresh machine's first backend open once took over 45 s (before the
    # first test's first line), and the rerun that followed cost 132 s.
    BATON_TEST_GPU_VARIANT=$gv watched conformance 90 env CUDA_MODULE_LOADING=EAGER \
        "$here/cuda_conformance" --test-threads 1 --nocapture
    if [ $? -eq 99 ] && [ -z "${CONF_ONLY:-}" ]; then
        BATON_TEST_GPU_VARIANT=$gv watched conformance_rerun 60 env CUDA_MODULE_LOADING=EAGER \
            "$here/cuda_conformance" --test-threads 1 --nocapture
    fi
    if [ -z "${CONF_ONLY:-}" ]; then
        BATON_TEST_GPU_VARIANT=$gv watched partition 45 "$here/cuda_partition" --test-threads 1 --nocapture
        BATON_TEST_GPU_VARIANT=$gv watched capped 45 "$here/cuda_capped" --test-threads 1 --nocapture
        BATON_MSM_VARIANTS="${CHECK_VARIANTS:-$VARIANTS}" watched variants 60 \
            "$here/cuda_msm_variants" --test-threads 1 --nocapture
    fi
}

ncu_step() {
    local sel k
    if [ "${NCU_WHAT:-msm}" = ntt ]; then
        sel=(BATON_BENCH_MSM=none BATON_BENCH_NTT=27 BATON_BENCH_NTT_BLOCKS=9 BATON_BENCH_NTT_RADIX=4)
        k=(-k regex:'^ntt_pass_r4$' -c 4)
    elif [ "${NCU_WHAT:-msm}" = pairs ]; then # give NCU_KNOBS=msm_affine_rounds=1 with it
        sel=(BATON_BENCH_MSM=24 BATON_BENCH_NTT=none)
        k=(-k regex:'^msm_(pairs_round|pairs_den|batch_inverse|pairs_finish|accumulate)$' -c 4)
    else
        sel=(BATON_BENCH_MSM=24 BATON_BENCH_NTT=none)
        k=(-k regex:'^msm_(scatter|accumulate)$' -c 2)
    fi
    local stalls
    stalls=$(printf 'smsp__average_warps_issue_stalled_%s_per_issue_active.ratio,' long_scoreboard short_scoreboard wait math_pipe_throttle mio_throttle lg_throttle no_instruction not_selected selected dispatch_stall barrier branch_resolving drain imc_miss membar sleeping tex_throttle misc)
    local knobs; mapfile -t knobs < <(knob_env "${NCU_KNOBS:-}")
    # ncu drops empty variables from the environment, so "none" selects no size.
    run "ncu${NCU_TAG:-}" 60 "$(( $(left) - 5 ))" env BATON_MSM_VARIANTS=default "${knobs[@]}" \
        "${sel[@]}" BATON_BENCH_PARTITION=none BATON_BENCH_G2=none BATON_BENCH_SPARSE=none \
        BATON_BENCH_REPS=1 BATON_BENCH_CPU_MAX_LOG=0 \
        "${NCU:-/usr/local/cuda/bin/ncu}" --clock-control none "${k[@]}" \
        --section SpeedOfLight --section Occupancy --section ComputeWorkloadAnalysis --section WarpStateStats \
        --metrics "${stalls}sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_fmaheavy_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_alu.avg.pct_of_peak_sustained_active,sm__issue_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum" \
        "$here/bench_gpu"
}

multi_gpu() {
    export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
    nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv > "$OUT/gpus.txt"
    run multi-gpu 120 "${MULTI_TIMEOUT:-300}" "$here/05-multi-gpu" --log "${MULTI_LOG:-24}" \
        --devices 1,2 --backend cuda --requests "${MULTI_REQUESTS:-8}" --partitions 10 \
        --concurrent "${MULTI_CONCURRENT:-4}" --workers "${MULTI_WORKERS:-28}" \
        --bg2-workers "${MULTI_BG2:-4}" --budget "${MULTI_BUDGET:-120GiB}" \
        --bg2-device "${MULTI_BG2_DEVICE:-cpu}"
}

nested_start() { # a step made of other steps of this script, each under its own DEADLINE:
    # they hand their rows of the step table back through DEVICE_NESTED (nested_end reads them)
    me=$here/device.sh
    export DEVICE_NESTED=/tmp/baton-device-steps.$$
    : > "$DEVICE_NESTED"
}
nested_end() {
    mapfile -t -O "${#table[@]}" table < "$DEVICE_NESTED"
    rm -f "$DEVICE_NESTED"
    unset DEVICE_NESTED
}

nvidia-smi --query-gpu=name,driver_version,memory.used,memory.total,clocks.sm,clocks.max.sm \
    --format=csv,noheader | tee "$OUT/gpu.txt"
echo "threads: $(nproc)" | tee -a "$OUT/gpu.txt"

for step in "${steps[@]}"; do
    case $step in
    compile) run compile 30 120 env BATON_REQUIRE_NVRTC=1 "$here/kernels_compile" --test-threads 1 ;;
    conformance) conformance ;;
    cli) run cli 20 120 "$here/baton" prove --constraints 65536 --proofs 4 --backend cuda ;;
    sppark) run sppark 30 100 env USE_PREBUILT=1 bash "$here/sppark/run.sh" ;;
    msm | bench-msm)
        bench msm 60 BATON_MSM_PHASES=1 BATON_MSM_VARIANTS="$VARIANTS" \
            BATON_BENCH_MSM="${MSM_LOGS:-20,22,24,26}" BATON_BENCH_NTT="${NTT_LOGS:-27}" \
            BATON_BENCH_NTT_BLOCKS="${NTT_BLOCKS:-9}" BATON_BENCH_NTT_RADIX=4 BATON_BENCH_PARTITION= ;;
    nttc)
        [ -n "$CANDIDATE" ] && bench nttc 20 "${cand_env[@]}" BATON_MSM_VARIANTS=default \
            BATON_BENCH_MSM= BATON_BENCH_NTT="${NTT_LOGS:-27}" \
            BATON_BENCH_NTT_BLOCKS="${NTT_BLOCKS:-9}" BATON_BENCH_NTT_RADIX=4 BATON_BENCH_PARTITION= ;;
    bench)
        bench all 230 BATON_MSM_VARIANTS="$VARIANTS" BATON_BENCH_MSM="${BENCH_MSM:-20,22,24,26}" \
            BATON_BENCH_NTT="${BENCH_NTT:-24,26,27}" BATON_BENCH_G2="${BENCH_G2:-}" \
            BATON_BENCH_PARTITION="${BENCH_PART:-24,26}" BATON_BENCH_SPARSE="${BENCH_SPARSE:-22,24}" \
            BATON_BENCH_CPU_MAX_LOG="${BENCH_CPU_MAX_LOG:-20}" ;;
    quick)
        run compile 30 120 env BATON_REQUIRE_NVRTC=1 "$here/kernels_compile" --test-threads 1
        conformance
        run cli 20 120 "$here/baton" prove --constraints 65536 --proofs 4 --backend cuda
        REPS=3 bench quick 30 BATON_MSM_VARIANTS=default BATON_BENCH_MSM=20,22 \
            BATON_BENCH_NTT=20,22,24 BATON_BENCH_PARTITION=20 ;;
    ncu) ncu_step ;;
    part | partition | bench-partition)
        bench part 40 BATON_MSM_VARIANTS=default BATON_BENCH_MSM= BATON_BENCH_NTT= \
            BATON_BENCH_PARTITION="$PART_LOGS" ;;
    variants)
        BATON_MSM_VARIANTS="${CHECK_VARIANTS:-$VARIANTS}" watched variants 60 \
            "$here/cuda_msm_variants" --test-threads 1 --nocapture ;;
    capped-tests)
        BATON_TEST_GPU_VARIANT="${CANDIDATE:-default}" watched capped 45 "$here/cuda_capped" \
            --test-threads 1 --nocapture ;;
    partition-tests)
        BATON_TEST_GPU_VARIANT="${CANDIDATE:-default}" watched partition 45 \
            "$here/cuda_partition" --test-threads 1 --nocapture
        BATON_TEST_GPU_VARIANT="${CANDIDATE:-default}" watched capped 45 "$here/cuda_capped" \
            --test-threads 1 --nocapture ;;
    capped)
        bench "capped${GPU_TAG:-}" "$(capped_usual)" "${cand_env[@]}" BATON_MSM_VARIANTS=default BATON_BENCH_MSM=none \
            BATON_BENCH_NTT=none BATON_BENCH_PARTITION=none BATON_BENCH_CAPPED="${CAPPED_LOGS:-26}" \
            BATON_BENCH_CAPS="${CAPS:-0,32,24,16}" BATON_BENCH_CAPPED_ABC="${CAPPED_ABC:-host,device}" ;;
    partc)
        [ -n "$CANDIDATE" ] && bench partc 40 "${cand_env[@]}" BATON_MSM_VARIANTS=default \
            BATON_BENCH_MSM= BATON_BENCH_NTT= BATON_BENCH_PARTITION="$PART_LOGS" ;;
    partp)
        # A wait after every MSM: one run, not of record for the wall time.
        bench partp 30 BATON_MSM_PHASES=1 BATON_BENCH_REPS=1 BATON_MSM_VARIANTS=default \
            BATON_BENCH_MSM= BATON_BENCH_NTT= BATON_BENCH_PARTITION="${PARTP_LOGS:-26}" \
            BATON_BENCH_G2="${G2_LOGS:-}" ;;
    trace)
        bench trace 30 BATON_UPLOAD_TRACE=1 BATON_BENCH_REPS=1 BATON_MSM_VARIANTS=default \
            BATON_BENCH_MSM= BATON_BENCH_NTT= BATON_BENCH_PARTITION=26 ;;
    engine24) engine 24 16 80GiB 35 ;;
    engine26)
        # A 2^26 partition holds ~8 GiB on the host and the tiled key ~31 GiB: ten workers
        # (the whole request synthesizing at once) fit the 128 GiB host.
        engine 26 10 84GiB 100
        for i in $(seq 1 "${ENGINE26_AB:-0}"); do
            engine 26 10 84GiB 100 warm_keys=false "-cold$i"
            engine 26 10 84GiB 100 "" "-warm$i"
        done ;;
    critical)
        # CRIT_ON (e.g. H200): only on a card whose name has it (a bound measured elsewhere already).
        if [ -n "${CRIT_ON:-}" ] && ! grep -q "$CRIT_ON" "$OUT/gpu.txt"; then
            table+=("$(printf '%-18s skipped (not on %s)' critical "$CRIT_ON")")
            continue
        fi
        run "critical${CRIT_TAG:-}" "${CRIT_USUAL:-200}" 400 env CRIT_BUSY_LOG="${CRIT_BUSY_LOG:-24}" \
            CRIT_LOG="${CRIT_LOG:-20}" CRIT_PARTS=10 CRIT_JOBS=2 CRIT_RUNS="${CRIT_RUNS:-5}" \
            CRIT_BUDGET=100GiB "$here/${CRIT_BIN:-bench_critical}" ;;
    engine26-nice)
        for i in $(seq 1 "${ENGINE26_NICE:-2}"); do
            BATON_SYNTHESIS_NICE=0 engine 26 10 84GiB 100 "" "-nice0-$i"
            BATON_SYNTHESIS_NICE=10 engine 26 10 84GiB 100 "" "-nice10-$i"
        done ;;
    multi-gpu) multi_gpu ;;
    filecoin)
        run filecoin 240 450 env BATON_TEST_CACHE="${FC_CACHE:-/tmp/baton-fc}" \
            BATON_BENCH_RUNS="${FC_RUNS:-3}" "$here/bench_filecoin" synth c2 ;;
    c2-32g | c2-64g)
        c2 "$step${C2_TAG:-}" "${C2_USUAL:-420}" "${C2_PROOFS:-5}" "$step" ;;
    c2-caps)
        # The 32 GiB C2 under each limit of C2_CAPS, one engine a limit, in one lease: issue 38's
        # engine target is 10 x 2^27 at 24 GiB within 1.3x of the uncapped proof.
        IFS=',' read -ra c2caps <<< "${C2_CAPS:-0,24}"
        for cap in "${c2caps[@]}"; do
            lim=()
            [ "$cap" != 0 ] && lim=(BATON_GPU_MEMORY_LIMIT="${cap}GiB")
            c2 "c2-32g-cap$cap${C2_TAG:-}" "${C2_USUAL:-200}" "${C2_PROOFS:-3}" c2-32g "${lim[@]}"
        done ;;
    owed1 | owed2)
        # Each part is other steps of this script (nested_start); this run prints the figures.
        nested_start
        partlog=BATON_LOG=warn,baton::gpu::cuda::sparse=debug,baton::gpu::cuda::partition=debug
        [ "$step" = owed1 ] && DEADLINE=320 bash "$me" sppark conformance
        case "$step:$(grep -c H200 "$OUT/gpu.txt")" in
        owed1:0) env "$partlog" C2_CAPS=24 C2_PROOFS=2 C2_USUAL=170 DEADLINE=230 bash "$me" c2-caps ;;
        owed1:*)
            CRIT_ON=H200 CRIT_USUAL=90 CRIT_SETTINGS=1on CRIT_RUNS=8 DEADLINE=230 bash "$me" critical ;;
        owed2:0) env "$partlog" C2_CAPS=0 C2_PROOFS=2 C2_USUAL=170 DEADLINE=560 bash "$me" c2-caps ;;
        owed2:*)
            C2_PROOFS=5 C2_USUAL=200 DEADLINE=270 bash "$me" c2-32g
            CAPPED_LOGS=27 CAPS=0,32,24,16 CAPPED_ABC=host DEADLINE=300 bash "$me" capped ;;
        esac
        nested_end ;;
    recording-ab)
        # gpu.capped_recording: the 32 GiB C2 at 24 GiB under "spare" (the default) and under
        # "evict" (spare first, so evict has the warmer page cache), memory logged. On the H200
        # host a C2 of two proofs takes ~260 s (its warm-up ~142 s; 2026-12-07, EE4).
        nested_start
        memlog=BATON_LOG=warn,baton::gpu::cuda::sparse=debug,baton::gpu::cuda::partition=debug,baton::gpu::cuda::memory=debug
        env "$memlog" BATON_GPU_CAPPED_RECORDING=spare C2_TAG=-spare C2_CAPS=24 C2_PROOFS=2 \
            C2_USUAL=250 DEADLINE=290 bash "$me" c2-caps
        env "$memlog" BATON_GPU_CAPPED_RECORDING=evict C2_TAG=-evict C2_CAPS=24 C2_PROOFS=2 \
            C2_USUAL=250 DEADLINE=290 bash "$me" c2-caps
        nested_end ;;
    h-beside)
        nested_start
        DEADLINE=60 bash "$me" sppark
        for v in off witness_first on; do
            env BATON_LOG=warn,baton::gpu::cuda::streamed=debug,baton::gpu::cuda::partition=debug \
                CANDIDATE=capped_h_beside=$v GPU_TAG=-$v CAPPED_LOGS=27 CAPS="${CAPS:-0,32,24}" \
                CAPPED_ABC=host REPS=3 DEADLINE=150 bash "$me" capped
        done
        # Each streamed MSM's median seconds and rate by variant, group, size and whether it ran
        # beside the witness's (a log line per MSM: `points=... seconds=... beside=...`).
        python3 - "$OUT"/bench-capped-*.log <<'PY'
import re, statistics, sys
for path in sys.argv[1:]:
    rows = {}
    for line in open(path, errors="replace"):
        if "streamed MSM of a partition" not in line:
            continue
        f = dict(re.findall(r'(\w+)=("[^"]*"|\S+)', line))
        key = (f.get("group", "?").strip('"'), f.get("points"), f.get("beside", "false"))
        rows.setdefault(key, []).append((float(f["seconds"]), float(f["gb_per_s"])))
    for (g, n, b), v in sorted(rows.items()):
        print(f"{path.rsplit('/', 1)[-1]:28} {g} {n:>10} beside={b:5} x{len(v):<3} "
              f"median {statistics.median(s for s, _ in v):.3f} s "
              f"at {statistics.median(r for _, r in v):.1f} GB/s")
PY
        nested_end ;;
    owed38)
        # Issue 38 on one card in one call: sppark, cuda_capped under the default knobs, then
        # the capped partition at 2^26 and 2^27 (host a/b/c) with each streamed MSM's time and
        # rate logged (where a capped partition's time goes against its copies' floor).
        nested_start
        DEADLINE=150 bash "$me" sppark capped-tests
        env BATON_LOG=warn,baton::gpu::cuda::streamed=debug CAPPED_LOGS=26,27 CAPS=0,32,24,16 \
            CAPPED_ABC=host DEADLINE=400 bash "$me" capped
        nested_end ;;
    sparse)
        bench sparse 30 BATON_MSM_VARIANTS=default BATON_BENCH_MSM=none BATON_BENCH_NTT=none \
            BATON_BENCH_PARTITION=none BATON_BENCH_SPARSE="${SPARSE_LOGS:-22,24}" ;;
    esac
done

if [ -n "${DEVICE_NESTED:-}" ]; then # a part of owed1/owed2: its caller prints the figures
    [ ${#table[@]} -gt 0 ] && printf '%s\n' "${table[@]}" >> "$DEVICE_NESTED"
    exit 0
fi
# The figures, then the table of steps last, so the call's tail keeps it.
echo
[ -f "$OUT/sppark.log" ] && { echo "-- sppark"; grep "^| " "$OUT/sppark.log" | tail -22; }
for f in "$OUT"/bench-*.log; do
    [ -f "$f" ] || continue
    echo "-- $(basename "$f" .log)"
    sed -n '/^## G1 MSM variants/,/^(end of the variant table)/p' "$f"
    grep "^| \|^device partition" "$f" | head -60
    grep -h "WRONG" "$f" | head -10
done
[ -f "$OUT/bench-partp.log" ] && { echo "-- phases"; grep "^msm phases" "$OUT/bench-partp.log" | sed 's/msm phases: //' | head -40; }
[ -f "$OUT/bench-trace.log" ] && { echo "-- upload trace"; grep "^upload trace" "$OUT/bench-trace.log" | sed 's/upload trace: //' | head -24; }
for f in "$OUT"/ncu*.log; do
    [ -f "$f" ] && grep -E "^  [a-z_0-9]+ \(|Duration|Throughput|Registers|Achieved Occupancy|Issue|pipe|stalled|inst_executed" "$f" | head -80
done
for f in "$OUT"/engine*.log "$OUT"/multi-gpu.log; do
    [ -f "$f" ] && { echo "-- $(basename "$f" .log)"; grep "stage means\|^|\|constraints,\|proofs/h\|busy" "$f" | head -12; }
done
for f in "$OUT"/critical*.log; do
    [ -f "$f" ] && { echo "-- $(basename "$f" .log)"; grep "^|\|ready in" "$f"; }
done
[ -f "$OUT/cli.log" ] && { echo "-- cli"; grep "verified\|proofs" "$OUT/cli.log" | tail -3; }
for f in "$OUT"/c2-*.log; do
    [ -f "$f" ] || continue
    echo "-- $(basename "$f" .log)"
    grep -v "^progress" "$f" | grep "proof(s) in\|stage means\|GiB\|WARN\|ERROR" | head -40
    grep "^progress" "$f" | tail -3
    grep "device a/b/c" "$f" | tail -3 | cut -c1-400
    grep "room:" "$f" | tail -4 | cut -c1-300
    grep "partition call prepared" "$f" | tail -2 | cut -c1-300
done
[ -f "$OUT/filecoin.log" ] && { echo "-- filecoin"; grep "^|\|^PoRep\|^run \|^(medians\|^engine stage" "$OUT/filecoin.log"; }
echo
echo "==== steps (total $((SECONDS - t0)) s)"
for s in "${table[@]}"; do echo "$s"; done
for f in compile conformance conformance_rerun partition capped variants; do
    [ -f "$OUT/$f.log" ] && echo "$f: $(grep -h '^test result' "$OUT/$f.log" | tail -1) $(grep -c 'FAILED\|panicked' "$OUT/$f.log") failures"
done
# A call brings back at most 8 files: past 7, this run's logs (stacks included) go into one
# archive, logs-K.tar.gz, beside gpu.txt and the archives of earlier runs in the call.
n=$(find "$OUT" -maxdepth 1 -type f | wc -l)
if [ "$n" -gt 7 ]; then
    k=1
    while [ -e "$OUT/logs-$k.tar.gz" ]; do k=$((k + 1)); done
    (cd "$OUT" && find . -maxdepth 1 -type f ! -name 'logs-*.tar.gz' ! -name gpu.txt -printf '%P\n' |
        tar czf "logs-$k.tar.gz" --remove-files -T -) &&
        echo "(logs packed into logs-$k.tar.gz: the call brings back 8 files at most)"
fi
