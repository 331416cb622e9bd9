#!/usr/bin/env bash
# Runs on a machine with 2+ GPUs (issue 5): proofs per hour with 1 and 2 GPU actors on the same
# stream of synthetic PoRep-like 2^24 partitions, then (optionally) the 2^26 partition bench row
# on one GPU. Binaries come from scripts/build-device.sh in .device/ (MULTI_BIN names another folder).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/baton-device-out}
mkdir -p "$OUT"
export BATON_CACHE_DIR=${BATON_CACHE_DIR:-/tmp/baton-cache}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv | tee "$OUT/gpus.txt"
nproc | tee "$OUT/nproc.txt"
LOG=${MULTI_LOG:-24}
timeout ${MULTI_TIMEOUT:-300} "${MULTI_BIN:-.device}"/05-multi-gpu --log "$LOG" --devices 1,2 --backend cuda \
    --requests "${MULTI_REQUESTS:-8}" --partitions 10 --concurrent "${MULTI_CONCURRENT:-4}" \
    --workers "${MULTI_WORKERS:-28}" --bg2-workers "${MULTI_BG2:-4}" --budget "${MULTI_BUDGET:-120GiB}" \
    --bg2-device "${MULTI_BG2_DEVICE:-cpu}" \
    2>&1 | tee "$OUT/multi_gpu.log"
if [ -n "${PARTITION_26:-}" ]; then
    BATON_BENCH_MSM= BATON_BENCH_NTT= BATON_BENCH_PARTITION=26 BATON_BENCH_REPS=2 \
        timeout ${PART_TIMEOUT:-200} .device/bench_gpu 2>&1 | tee "$OUT/partition26.log"
fi
echo "==== summary"
grep "^|\|stage means\|constraints," "$OUT/multi_gpu.log"
[ -f "$OUT/partition26.log" ] && grep "partition\|compute_h" "$OUT/partition26.log"
