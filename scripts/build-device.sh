#!/usr/bin/env bash
# Builds, here, the binaries scripts/device-check.sh and scripts/device-final.sh run on the GPU
# machine (which has no Rust): the CUDA conformance, partition, MSM-variant and kernel-compile tests, the GPU
# bench, the baton CLI and the multi-GPU example, release mode without debug info, stripped,
# into .device/ (ignored by git; send it with `carry: [".device"]`), with the device scripts
# beside them (BUILD_FILECOIN=1 adds the Filecoin bench, bench_filecoin). Add the sppark
# harness with `cp -r ../shared/bench/sppark .device/sppark`.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_PROFILE_RELEASE_DEBUG=0
out=.device
rm -rf "$out"
mkdir -p "$out"

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

tests=$(cargo test --release --features cuda --test cuda_conformance --test cuda_partition --test cuda_msm_variants --test kernels_compile --no-run --message-format=json)
bench=$(cargo bench --features cuda --bench gpu --no-run --message-format=json)
cli=$(cargo build --release --features cuda --bin baton --example 05-multi-gpu --message-format=json)
cp "$(pick cuda_conformance <<<"$tests")" "$out/cuda_conformance"
cp "$(pick kernels_compile <<<"$tests")" "$out/kernels_compile"
cp "$(pick cuda_partition <<<"$tests")" "$out/cuda_partition"
cp "$(pick cuda_msm_variants <<<"$tests")" "$out/cuda_msm_variants"
cp "$(pick gpu <<<"$bench")" "$out/bench_gpu"
cp "$(pick baton <<<"$cli")" "$out/baton"
cp "$(pick 05-multi-gpu <<<"$cli")" "$out/05-multi-gpu"
if [ "${BUILD_FILECOIN:-0}" = 1 ]; then
    # The Filecoin bench (device-final.sh's optional `filecoin` step): real 2 KiB PoRep
    # synthesis full vs compiled, and the whole C2 compiled / full / filecoin-proofs.
    fc=$(cargo bench --features cuda,filecoin,test-util --bench filecoin --no-run --message-format=json)
    cp "$(pick filecoin <<<"$fc")" "$out/bench_filecoin"
fi
cp scripts/device-check.sh scripts/device-final.sh scripts/device-watch.sh "$out/"
if command -v strip >/dev/null; then
    # Debug info only: the symbols stay, so that a stack taken on the device
    # (device-watch.sh, cuda-gdb) names its functions.
    strip --strip-debug "$out"/* 2>/dev/null || true
fi
du -ch "$out"/* | tail -n 8
