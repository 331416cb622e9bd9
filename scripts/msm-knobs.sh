#!/usr/bin/env bash
# Runs on the GPU machine: the G1 MSM bench rows under each msm_accumulate tuning variant
# (gpu.msm_acc_minb register cap x gpu.msm_prefetch, as BATON_GPU_* variables), one process each (the kernels are
# compiled per variant), GPU only. Binaries from scripts/build-device.sh in .device/.
#   MSM_KNOBS="4:0 3:1 2:1" MSM_LOGS=24,26 scripts/msm-knobs.sh
set -uo pipefail
cd "$(dirname "$0")/.."
export BATON_CACHE_DIR=${BATON_CACHE_DIR:-/tmp/baton-cache}
for v in ${MSM_KNOBS:-4:0 3:1 2:1}; do
    minb=${v%%:*} pf=${v##*:}
    echo "==== msm_acc_minb=$minb msm_prefetch=$pf"
    BATON_GPU_MSM_ACC_MINB=$minb BATON_GPU_MSM_PREFETCH=$pf BATON_BENCH_MSM="${MSM_LOGS:-24}" \
        BATON_BENCH_NTT= BATON_BENCH_PARTITION= BATON_BENCH_G2= \
        BATON_BENCH_CPU_MAX_LOG=0 BATON_BENCH_REPS="${MSM_REPS:-3}" \
        timeout "${MSM_TIMEOUT:-120}" .device/bench_gpu 2>&1 | grep -E "^\| G1|panicked|differs"
done
