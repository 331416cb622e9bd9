#!/usr/bin/env bash
# Runs on the GPU machine: only the G1 MSM rows of the GPU bench, for the MSM variants given
# (";"-separated specs of [gpu] knobs, BATON_MSM_VARIANTS; default the built-in list,
# baton::gpu::options::MSM_VARIANTS), side by side in one process, each result checked.
# Binaries from scripts/build-device.sh in .device/.
#   MSM_VARIANTS="default;msm_mul=call,msm_acc_minb=3" MSM_LOGS=24,26 scripts/msm-knobs.sh
set -uo pipefail
cd "$(dirname "$0")/.."
export BATON_CACHE_DIR=${BATON_CACHE_DIR:-/tmp/baton-cache}
if [ -n "${MSM_VARIANTS:-}" ]; then export BATON_MSM_VARIANTS=$MSM_VARIANTS; fi
BATON_BENCH_MSM="${MSM_LOGS:-24}" BATON_BENCH_NTT=none BATON_BENCH_PARTITION=none \
    BATON_BENCH_G2=none BATON_BENCH_CPU_MAX_LOG=0 BATON_BENCH_REPS="${MSM_REPS:-3}" \
    timeout "${MSM_TIMEOUT:-300}" .device/bench_gpu 2>&1 | sed -n '/^## G1 MSM variants/,$p;/WRONG/p'
