#!/usr/bin/env bash
# Registers, stack frame, spills and code size of the MSM kernels under each variant of the
# [gpu] MSM knobs, on a machine without a GPU: the production kernels through NVRTC
# (scripts/kernel_check.py, the options the backend passes), then ptxas -arch=sm_90 -v.
# Needs NVRTC and ptxas from PyPI (nvidia-cuda-nvrtc, nvidia-cuda-nvcc 13.0): .ci/run installs
# NVRTC into target/nvrtc; ptxas goes into a folder of its own, since pip will not add to a
# folder that already holds an nvidia/ tree: `pip install --target target/cudatools
# "nvidia-cuda-nvcc==13.0.*"` (scripts/sass-same.sh uses the same folder).
#   scripts/ptxas-report.sh ["MSM_ACC_INLINE=0 MSM_ACC_MINB=5" ...]   (one quoted set per variant)
set -euo pipefail
cd "$(dirname "$0")/.."
nv=${NVRTC_DIR:-$PWD/target/nvrtc}/nvidia/cu13
export LD_LIBRARY_PATH="$nv/lib:${LD_LIBRARY_PATH:-}"
ptxas=${PTXAS:-${CUDA_TOOLS_DIR:-$PWD/target/cudatools}/nvidia/cu13/bin/ptxas}
kernels=${KERNELS:-msm_accumulate msm_scatter msm_seg_keys msm_nontrivial msm_accumulate_g2}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ $# -eq 0 ]; then
    set -- "" "MSM_ACC_INLINE=0" "MSM_KEYLESS=1"
fi
echo "| defines | kernel | registers | stack frame | spill stores/loads | SASS bytes |"
echo "|---|---|---|---|---|---|"
for v in "$@"; do
    args=()
    for d in $v; do args+=(-D "$d"); done
    python3 scripts/kernel_check.py --production "${args[@]}" --ptx "$tmp/k.ptx" >/dev/null
    "$ptxas" -arch=sm_90 -v "$tmp/k.ptx" -o "$tmp/k.cubin" 2>"$tmp/v.txt"
    for k in $kernels; do
        python3 - "$tmp/v.txt" "$tmp/k.cubin" "$k" "${v:-(none)}" <<'EOF'
import re, subprocess, sys
log, cubin, k, label = sys.argv[1:]
lines = open(log).read().splitlines()
regs = frame = spill = "?"
for i, l in enumerate(lines):
    if l.endswith(f"Function properties for {k}"):
        m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", lines[i + 1])
        if m:
            frame, spill = m.group(1), f"{m.group(2)}/{m.group(3)}"
        m = re.search(r"Used (\d+) registers", lines[i + 2])
        if m:
            regs = m.group(1)
        break
size = "?"
out = subprocess.run(["readelf", "-SW", cubin], capture_output=True, text=True).stdout
for l in out.splitlines():
    if "]" in l:
        f = l.split("]", 1)[1].split()
        if f and f[0] == f".text.{k}":
            size = str(int(f[4], 16))
print(f"| {label} | {k} | {regs} | {frame} | {spill} | {size} |")
EOF
    done
done
