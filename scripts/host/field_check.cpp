// Host check of the kernels' field code (no GPU): kernels/field/{mont,fp,fr}.cuh compiled as
// C++ with the PTX carry-chain wrappers of common.cuh emulated in plain C++ (one carry flag,
// emulation.h).
// Compares f_mul_rolled (the plain CIOS rows) with f_mul (the rows in limb pairs), and the
// squaring f_sqr_pairs with f_mul(a, a), and the once-reduced sum f_mul_sum(a, b, c, d) with
// f_add(f_mul(a, b), f_mul(c, d)) and, as the curve formulas use it, f_mul_sum(a, b, c, f_neg(d))
// with f_sub(f_mul(a, b), f_mul(c, d)), and the Karatsuba forms (f_mul_kara, f_mul_sum_kara) with
// the limb-pair ones, on random and edge operands for Fp and Fr, and prints a
// few f_mul products and f_sqr_pairs squares for scripts/field-host-check.sh to verify against
// Python integers.
#include <cstdio>
#include <cstdint>
#include <random>

#include "emulation.h"  // the qualifiers, vector types and carry chain of the GPU side

#include "../../kernels/field/mont.cuh"
#include "../../kernels/field/fp.cuh"
#include "../../kernels/field/fr.cuh"

template <class P> static mont_t<P> random_elem(std::mt19937_64& r) {
    mont_t<P> x;
    for (int i = 0; i < P::N; i++) x.v[i] = (u32)r();
    x.v[P::N - 1] %= P::m(P::N - 1);  // below the modulus
    if (r() % 4 == 0) {  // one in four just below the modulus (the products' largest carries)
        const u64 d = r() >> (r() % 64);
        u32 borrow = 0;
        for (int i = 0; i < P::N; i++) {
            const u64 sub = (i == 0 ? (d & 0xffffffffu) : i == 1 ? (d >> 32) : 0) + borrow;
            const u64 mi = P::m(i);
            x.v[i] = (u32)(mi - sub);
            borrow = mi < sub ? 1 : 0;
        }
        if (f_is_zero<P>(x) || borrow) x = f_one<P>();
        // d == 0 would give m itself, which is not a residue
        bool is_m = true;
        for (int i = 0; i < P::N; i++) is_m = is_m && x.v[i] == P::m(i);
        if (is_m) x.v[0] -= 1;
    }
    return x;
}

template <class P> static mont_t<P> edge(int k) {
    mont_t<P> x = f_zero<P>();
    if (k == 1) x.v[0] = 1;
    if (k == 2) x = f_one<P>();
    if (k >= 3) {  // m - 1, m - 2 (Fr's low limb is 1: the borrow goes up)
        u32 borrow = (u32)(k - 2);
        for (int i = 0; i < P::N; i++) {
            x.v[i] = P::m(i) - borrow;
            borrow = P::m(i) < borrow ? 1u : 0u;
        }
    }
    return x;
}

// squaring edge operands: 0, 1, R mod m, m - 1, m - 2, then values with all-ones limbs below m
template <class P> static mont_t<P> sqr_edge(int k) {
    if (k < 5) return edge<P>(k);
    mont_t<P> x = f_zero<P>();
    const int N = P::N;
    for (int i = 0; i < N; i++) {
        if (k == 5) x.v[i] = 0xffffffffu;                     // every limb but the top all ones
        if (k == 6) x.v[i] = i < N / 2 ? 0xffffffffu : 0;       // the low half all ones
        if (k == 7) x.v[i] = i % 2 == 0 ? 0xffffffffu : 0;      // every other limb all ones
        if (k == 8) x.v[i] = i % 2 == 1 ? 0xffffffffu : 0;
        if (k == 9) x.v[i] = i == N - 2 ? 0xffffffffu : 0;     // one all-ones limb under the top
    }
    if (k == 5 || k == 8) x.v[N - 1] = P::m(N - 1) - 1;  // the top limb just below m's
    return x;
}
constexpr int SQR_EDGES = 10;

template <class P> static void print(const char* tag, const mont_t<P>& x) {
    printf("%s ", tag);
    for (int i = P::N - 1; i >= 0; i--) printf("%08x", x.v[i]);
}

template <class P> static int check(const char* name, int count) {
    std::mt19937_64 r(12345);
    int bad = 0, sqr_bad = 0, sum_bad = 0, kara_bad = 0;
    mont_t<P> pa = edge<P>(3), pb = edge<P>(3);  // the previous pair (m - 1 first)
    for (int k = 0; k < count + 25; k++) {
        mont_t<P> a = k < 25 ? edge<P>(k / 5) : random_elem<P>(r);
        mont_t<P> b = k < 25 ? edge<P>(k % 5) : random_elem<P>(r);
        mont_t<P> x = f_mul<P>(a, b), y = f_mul_rolled<P>(a, b);
        if (!f_eq<P>(x, y)) bad++;
        if (!f_eq<P>(f_mul_kara<P>(a, b), x)) kara_bad++;
        if (!f_eq<P>(f_mul_sum_kara<P>(a, b, pa, pb), f_mul_sum<P>(a, b, pa, pb))) kara_bad++;
        if (!f_eq<P>(f_mul_sum_kara<P>(a, b, pa, f_neg<P>(pb)), f_sub<P>(x, f_mul<P>(pa, pb)))) kara_bad++;
        if (!f_eq<P>(f_sqr_pairs<P>(a), f_mul<P>(a, a))) sqr_bad++;
        if (!f_eq<P>(f_sqr_pairs<P>(b), f_mul<P>(b, b))) sqr_bad++;
        // the sums: the previous pair as c, d (edge pairs meet edge pairs and random ones)
        if (!f_eq<P>(f_mul_sum<P>(a, b, pa, pb), f_add<P>(x, f_mul<P>(pa, pb)))) sum_bad++;
        if (!f_eq<P>(f_mul_sum<P>(a, b, pa, f_neg<P>(pb)), f_sub<P>(x, f_mul<P>(pa, pb)))) sum_bad++;
        if (!f_eq<P>(f_mul_sum<P>(a, a, b, b), f_add<P>(f_sqr_pairs<P>(a), f_sqr_pairs<P>(b)))) sum_bad++;
        pa = a;
        pb = b;
        if (k >= 25 && k < 29) {
            printf("%s", name);
            print(" a", a);
            print(" b", b);
            print(" ab", x);
            printf("\n");
        }
    }
    // the edge values, then a few random ones, printed for Python
    for (int k = 0; k < SQR_EDGES + 4; k++) {
        const mont_t<P> a = k < SQR_EDGES ? sqr_edge<P>(k) : random_elem<P>(r);
        const mont_t<P> aa = f_sqr_pairs<P>(a);
        if (!f_eq<P>(aa, f_mul<P>(a, a))) sqr_bad++;
        printf("%s sqr", name);
        print(" a", a);
        print(" aa", aa);
        printf("\n");
    }
    // Karatsuba on every pair of the squaring's edge values (equal halves, all-ones halves, one
    // half zero: the signs and the zero differences of the middle product) and their negations
    for (int i = 0; i < 2 * SQR_EDGES + 2; i++) {
        for (int j = 0; j < 2 * SQR_EDGES + 2; j++) {
            auto pick = [](int k) {
                if (k >= 2 * SQR_EDGES) {  // equal halves: a0 = a1 (below m: the top limb small)
                    mont_t<P> x = f_zero<P>();
                    for (int w = 0; w < P::N / 2; w++) x.v[w] = x.v[w + P::N / 2] = k % 2 ? 0xffffffffu : 0x12345u + w;
                    x.v[P::N - 1] = 1;
                    x.v[P::N / 2 - 1] = 1;
                    return x;
                }
                return k < SQR_EDGES ? sqr_edge<P>(k) : f_neg<P>(sqr_edge<P>(k - SQR_EDGES));
            };
            const mont_t<P> a = pick(i), b = pick(j);
            if (!f_eq<P>(f_mul_kara<P>(a, b), f_mul<P>(a, b))) kara_bad++;
            if (!f_eq<P>(f_mul_sum_kara<P>(a, b, b, a), f_mul_sum<P>(a, b, b, a))) kara_bad++;
        }
    }
    const int squares = 2 * (count + 25) + SQR_EDGES + 4;
    fprintf(stderr, "%s: %d products, %d rolled mismatches\n", name, count + 25, bad);
    fprintf(stderr, "%s: %d squares, %d sqr_pairs mismatches\n", name, squares, sqr_bad);
    fprintf(stderr, "%s: %d sums, %d mul_sum mismatches\n", name, 3 * (count + 25), sum_bad);
    fprintf(stderr, "%s: %d Karatsuba products and sums, %d mismatches\n", name,
            3 * (count + 25) + 2 * (2 * SQR_EDGES + 2) * (2 * SQR_EDGES + 2), kara_bad);
    return bad + sqr_bad + sum_bad + kara_bad;
}

int main() {
    int bad = check<FpParams>("fp", 1000000) + check<FrParams>("fr", 1000000);
    return bad == 0 ? 0 : 1;
}
