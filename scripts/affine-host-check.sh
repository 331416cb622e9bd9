#!/usr/bin/env bash
# Checks the batch-affine arithmetic on the CPU (no GPU, no CUDA): scripts/host/affine_check.cpp
# compiles kernels/field/inv.cuh and kernels/ec/affine.cuh (with the field and curve headers they
# need) with g++, the PTX carry chain emulated as for scripts/field-host-check.sh. Two builds: the
# host's defaults (FIELD_SQR=1, FIELD_LAZY=1: the dedicated squaring inside the inversion) with
# 200,000 Fp inversions, and the headers' own (0, 0) with 100,000; Fr 100,000 in both. Each must
# find f_inv_window(a) * a == 1 (and f_inv_window(0) == 0), and ec_affine_add_pairs equal to the
# XYZZ sums (ec/xyzz.cuh) made affine on every case of a pair, every point on y^2 = x^3 + 4. The
# printed inversions and pair additions must then agree with Python's integers: the inverse, the
# curve equation, and the chord and tangent formulas computed here from scratch. Last, the round
# kernel of kernels/msm/pairs.cuh runs three rounds as the GPU would (each block's threads as CPU
# threads at a barrier): every bucket keeps its sum (C++20 for std::barrier); then the same
# round as its three split kernels (msm_pairs_den, msm_batch_inverse, msm_pairs_finish).
# -O3: the emulated products are the run time (485 products an Fp inversion), and -O3 takes a
# quarter off -O2's; the code checked is the same.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
${CXX:-g++} -O3 -std=c++20 -pthread -DFIELD_SQR=1 -DFIELD_LAZY=1 -o "$tmp/affine_check_11" scripts/host/affine_check.cpp
${CXX:-g++} -O3 -std=c++20 -pthread -o "$tmp/affine_check_00" scripts/host/affine_check.cpp
# The round kernel at 32 entries a thread (gpu.experimental.msm_affine_per): its lines only.
${CXX:-g++} -O3 -std=c++20 -pthread -DFIELD_SQR=1 -DFIELD_LAZY=1 -DMSM_PAIRS_PER=32u -o "$tmp/affine_check_32" scripts/host/affine_check.cpp
#           Fp inversions, Fr inversions, G1 pairs per batch size
"$tmp/affine_check_11" 200000 100000 4096 >"$tmp/out_11.txt"
"$tmp/affine_check_00" 100000 100000 4096 >"$tmp/out_00.txt"
"$tmp/affine_check_32" 1000 1000 16 2>&1 >/dev/null | grep ' pairs ' >&2
python3 - "$tmp/out_11.txt" "$tmp/out_00.txt" <<'PY'
import sys
P = 0x1a0111ea397fe69a4b1ba7b6434bacd764774b84f38512bf6730d2a0f6b0f6241eabfffeb153ffffb9feffffffffaaab
M = {"fp": (P, 384), "fr": (0x73eda753299d7d483339d80809a1d80553bda402fffe5bfeffffffff00000001, 256)}
KINDS = ["chord", "tangent", "a infinity", "b infinity", "sum infinity"]

def on_curve(pt):
    return pt is None or (pt[1] * pt[1] - pt[0] ** 3 - 4) % P == 0

def kind(a, b):  # ec/affine.cuh's cases, decided here on the integers
    if a is None:
        return 2
    if b is None:
        return 3
    if a[0] != b[0]:
        return 0
    return 1 if a[1] == b[1] and a[1] != 0 else 4

def add(a, b):  # the chord and tangent rule, from scratch
    if a is None:
        return b
    if b is None:
        return a
    (x1, y1), (x2, y2) = a, b
    if x1 == x2:
        if (y1 + y2) % P == 0:
            return None
        lam = 3 * x1 * x1 * pow(2 * y1, -1, P) % P
    else:
        lam = (y2 - y1) * pow(x2 - x1, -1, P) % P
    x3 = (lam * lam - x1 - x2) % P
    return (x3, (lam * (x1 - x3) - y1) % P)

for path in sys.argv[1:]:
    inv = 0
    seen = [0] * 5
    for line in open(path):
        f = line.split()
        if f[0] == "inv":
            m, bits = M[f[1]]
            a, ai = int(f[3], 16), int(f[5], 16)
            # Montgomery limbs: a holds a/R, so its inverse R/a is held as R^2/a
            want = 0 if a == 0 else pow(2, 2 * bits, m) * pow(a, -1, m) % m
            assert ai == want, f"{f[1]}: f_inv_window({a:x}) gave {ai:x}, want {want:x}"
            inv += 1
            continue
        assert f[0] == "pair", line
        c = int(f[1])
        x1, y1, x2, y2, x3, y3 = (int(f[i], 16) for i in range(7, 18, 2))
        pa = None if x1 == y1 == 0 else (x1, y1)
        pb = None if x2 == y2 == 0 else (x2, y2)
        pc = None if x3 == y3 == 0 else (x3, y3)
        assert on_curve(pa) and on_curve(pb) and on_curve(pc), f"off the curve: {line}"
        assert kind(pa, pb) == c, f"case {c} printed, {kind(pa, pb)} here: {line}"
        assert add(pa, pb) == pc, f"{KINDS[c]}: sum {pc}, want {add(pa, pb)}"
        seen[c] += 1
    assert inv == 26, f"{path}: expected 26 inversions, read {inv}"
    assert all(seen), f"{path}: every case printed at least once, got {seen}"
    print(f"Python agrees: {inv} inversions, {sum(seen)} pair additions ("
          + ", ".join(f"{KINDS[i]} {seen[i]}" for i in range(5)) + ")")
PY
