#!/usr/bin/env bash
# Checks the kernels' field code on the CPU (no GPU, no CUDA): scripts/host/field_check.cpp
# compiles kernels/field/*.cuh with g++, the PTX carry chain emulated; f_mul_rolled must equal
# f_mul on a million operand pairs per field, f_sqr_pairs(a) must equal f_mul(a, a) on the same
# operands (both of each pair) and on edge values, and the printed f_mul products and
# f_sqr_pairs squares must equal a*b/R and a*a/R mod m computed by Python.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
${CXX:-g++} -O2 -std=c++17 -o "$tmp/field_check" scripts/host/field_check.cpp
"$tmp/field_check" >"$tmp/products.txt"
python3 - "$tmp/products.txt" <<'PY'
import sys
M = {"fp": (0x1a0111ea397fe69a4b1ba7b6434bacd764774b84f38512bf6730d2a0f6b0f6241eabfffeb153ffffb9feffffffffaaab, 384),
     "fr": (0x73eda753299d7d483339d80809a1d80553bda402fffe5bfeffffffff00000001, 256)}
n = sq = 0
for line in open(sys.argv[1]):
    f = line.split()
    m, bits = M[f[0]]
    if f[1] == "sqr":
        a, aa = int(f[3], 16), int(f[5], 16)
        want = a * a * pow(2, -bits, m) % m
        assert aa == want, f"{f[0]}: f_sqr_pairs({a:x}) gave {aa:x}, want {want:x}"
        sq += 1
        continue
    a, b, ab = (int(f[i], 16) for i in (2, 4, 6))
    want = a * b * pow(2, -bits, m) % m
    assert ab == want, f"{f[0]}: {a:x} * {b:x} gave {ab:x}, want {want:x}"
    n += 1
assert n == 8 and sq == 28, f"expected 8 products and 28 squares, read {n} and {sq}"
print(f"f_mul agrees with Python on {n} products, f_sqr_pairs on {sq} squares")
PY
