#!/usr/bin/env bash
# Whether two commits compile to the same machine code, without a GPU: for each commit, the
# production kernels through NVRTC (scripts/kernel_check.py at that commit, the given
# defines), ptxas -arch=sm_90, then cuobjdump -sass, and the two listings compared. A change
# whose SASS is byte-identical under the backend's defines keeps the device results measured
# before it (conformance, timings).
#   scripts/sass-same.sh OLD_REV [NEW_REV]          (NEW_REV: the work tree when left out)
# DEFINES overrides the define set; the default is the backend's default options
# (src/gpu/kernels.rs `nvrtc_options`; a test there fails when this copy goes stale).
# Needs NVRTC (.ci/run installs it into target/nvrtc) and, from PyPI into a folder of their
# own (pip will not add packages to the NVRTC folder): `pip install --target target/cudatools
# "nvidia-cuda-nvcc==13.0.*" "nvidia-cuda-cuobjdump==13.2.*" "nvidia-cuda-nvdisasm==13.2.*"`.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
[ $# -ge 1 ] || { echo "usage: $0 OLD_REV [NEW_REV]" >&2; exit 2; }
nv=${NVRTC_DIR:-$root/target/nvrtc}/nvidia/cu13
export LD_LIBRARY_PATH="$nv/lib:${LD_LIBRARY_PATH:-}"
export PATH="${CUDA_TOOLS_DIR:-$root/target/cudatools}/nvidia/cu13/bin:$PATH"
for tool in ptxas cuobjdump nvdisasm; do
    command -v "$tool" >/dev/null || { echo "$tool not found (see the header of $0)" >&2; exit 2; }
done
DEFINES=${DEFINES:-"MSM_ACC_MINB=3 MSM_PREFETCH=0 MSM_ACC_MUL=1 MSM_KEYLESS=1 MSM_ONES_COMPACT=1
FIELD_SQR=1 FIELD_LAZY=1 FIELD_KARA=0 NTT_R4_MAXREG=96 MSM_PAIRS_PER=16u MSM_CHAIN_SPAN=32u MSM_CHAIN_LEVELS=3"}
args=()
for d in $DEFINES; do args+=(-D "$d"); done

tmp=$(mktemp -d)
cleanup() {
    git -C "$root" worktree remove --force "$tmp/old" 2>/dev/null || true
    git -C "$root" worktree remove --force "$tmp/new" 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT

# sass TREE OUT: the SASS listing of TREE's production kernels, offsets dropped.
sass() {
    (cd "$1" && python3 scripts/kernel_check.py --production "${args[@]}" --ptx "$tmp/k.ptx" >/dev/null)
    ptxas -arch=sm_90 "$tmp/k.ptx" -o "$tmp/k.cubin"
    cuobjdump -sass "$tmp/k.cubin" | grep -v '^\s*/\*[0-9a-f]*\*/\s*$' >"$2"
}

git worktree add -q --detach "$tmp/old" "$1"
sass "$tmp/old" "$tmp/old.sass"
if [ $# -ge 2 ]; then
    git worktree add -q --detach "$tmp/new" "$2"
    sass "$tmp/new" "$tmp/new.sass"
else
    sass "$root" "$tmp/new.sass"
fi
if cmp -s "$tmp/old.sass" "$tmp/new.sass"; then
    echo "same SASS: $(wc -l <"$tmp/new.sass") lines (defines: $(echo $DEFINES))"
else
    echo "SASS differs (defines: $(echo $DEFINES)):"
    diff "$tmp/old.sass" "$tmp/new.sass" | grep -c '^[<>]' | xargs echo "  changed lines:"
    grep -o 'Function : [A-Za-z0-9_]*' "$tmp/old.sass" | sort >"$tmp/old.f"
    grep -o 'Function : [A-Za-z0-9_]*' "$tmp/new.sass" | sort >"$tmp/new.f"
    diff "$tmp/old.f" "$tmp/new.f" || true
    exit 1
fi
