#!/usr/bin/env bash
# Builds, here, the binaries scripts/device-check.sh runs on the GPU machine (which has no Rust):
# the CUDA conformance and kernel-compile tests, the GPU bench and the baton CLI, release mode
# without debug info, stripped, into .device/ (ignored by git; send it with `carry: [".device"]`).
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

tests=$(cargo test --release --features cuda --test cuda_conformance --test kernels_compile --no-run --message-format=json)
bench=$(cargo bench --features cuda --bench gpu --no-run --message-format=json)
cli=$(cargo build --release --features cuda --bin baton --example 05-multi-gpu --message-format=json)
cp "$(pick cuda_conformance <<<"$tests")" "$out/cuda_conformance"
cp "$(pick kernels_compile <<<"$tests")" "$out/kernels_compile"
cp "$(pick gpu <<<"$bench")" "$out/bench_gpu"
cp "$(pick baton <<<"$cli")" "$out/baton"
cp "$(pick 05-multi-gpu <<<"$cli")" "$out/05-multi-gpu"
if command -v strip >/dev/null; then
    strip "$out"/* || true
fi
du -ch "$out"/* | tail -n 5
