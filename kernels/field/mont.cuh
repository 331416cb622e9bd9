// baton: generic Montgomery arithmetic on N x 32-bit little-endian limbs.
// Requires common.cuh.  A parameter class P provides:
//   static constexpr int N;             limb count
//   static constexpr u32 INV;           -mod^{-1} mod 2^32
//   static u32 inv();                   INV, as the reduction rows read it (fr.cuh says why)
//   static constexpr u32 m(int i);      modulus limb i
//   static constexpr u32 one(int i);    R mod m (Montgomery one), limb i
//   static constexpr u32 r2(int i);     R^2 mod m, limb i
// Preconditions used by the code: 2*mod < 2^(32N) (so sums never overflow)
// and mod < 2^(32N-1) (so the CIOS accumulator fits N+1 words).
// All values are kept fully reduced (canonical Montgomery residues in
// [0, mod)), which is the blst in-memory representation.
#ifndef BATON_FIELD_MONT_CUH
#define BATON_FIELD_MONT_CUH

template <class P> struct mont_t {
    u32 v[P::N];
};

template <class P> DEVI mont_t<P> f_zero() {
    mont_t<P> r;
#pragma unroll
    for (int i = 0; i < P::N; i++) r.v[i] = 0;
    return r;
}

template <class P> DEVI mont_t<P> f_one() {
    mont_t<P> r;
#pragma unroll
    for (int i = 0; i < P::N; i++) r.v[i] = P::one(i);
    return r;
}

template <class P> DEVI bool f_is_zero(const mont_t<P>& a) {
    u32 x = 0;
#pragma unroll
    for (int i = 0; i < P::N; i++) x |= a.v[i];
    return x == 0;
}

template <class P> DEVI bool f_eq(const mont_t<P>& a, const mont_t<P>& b) {
    u32 x = 0;
#pragma unroll
    for (int i = 0; i < P::N; i++) x |= a.v[i] ^ b.v[i];
    return x == 0;
}

template <class P> DEVI bool f_is_one(const mont_t<P>& a) {
    u32 x = 0;
#pragma unroll
    for (int i = 0; i < P::N; i++) x |= a.v[i] ^ P::one(i);
    return x == 0;
}

// r = t - mod if t >= mod else t   (t < 2*mod, N words)
template <class P> DEVI mont_t<P> f_reduce_once(const u32* t) {
    constexpr int N = P::N;
    u32 s[N];
    s[0] = ptx_sub_cc(t[0], P::m(0));
#pragma unroll
    for (int i = 1; i < N; i++) s[i] = ptx_subc_cc(t[i], P::m(i));
    u32 borrow = ptx_subc(0, 0);  // 0xffffffff if t < mod
    mont_t<P> r;
#pragma unroll
    for (int i = 0; i < N; i++) r.v[i] = borrow ? t[i] : s[i];
    return r;
}

template <class P> DEVI mont_t<P> f_add(const mont_t<P>& a, const mont_t<P>& b) {
    constexpr int N = P::N;
    u32 t[N];
    t[0] = ptx_add_cc(a.v[0], b.v[0]);
#pragma unroll
    for (int i = 1; i < N - 1; i++) t[i] = ptx_addc_cc(a.v[i], b.v[i]);
    t[N - 1] = ptx_addc(a.v[N - 1], b.v[N - 1]);
    return f_reduce_once<P>(t);
}

template <class P> DEVI mont_t<P> f_dbl(const mont_t<P>& a) { return f_add<P>(a, a); }

template <class P> DEVI mont_t<P> f_sub(const mont_t<P>& a, const mont_t<P>& b) {
    constexpr int N = P::N;
    u32 t[N];
    t[0] = ptx_sub_cc(a.v[0], b.v[0]);
#pragma unroll
    for (int i = 1; i < N; i++) t[i] = ptx_subc_cc(a.v[i], b.v[i]);
    u32 mask = ptx_subc(0, 0);  // all ones on borrow
    mont_t<P> r;
    r.v[0] = ptx_add_cc(t[0], P::m(0) & mask);
#pragma unroll
    for (int i = 1; i < N - 1; i++) r.v[i] = ptx_addc_cc(t[i], P::m(i) & mask);
    r.v[N - 1] = ptx_addc(t[N - 1], P::m(N - 1) & mask);
    return r;
}

template <class P> DEVI mont_t<P> f_neg(const mont_t<P>& a) {
    constexpr int N = P::N;
    u32 nz = f_is_zero<P>(a) ? 0u : 0xffffffffu;
    mont_t<P> r;
    r.v[0] = ptx_sub_cc(P::m(0) & nz, a.v[0]);
#pragma unroll
    for (int i = 1; i < N - 1; i++) r.v[i] = ptx_subc_cc(P::m(i) & nz, a.v[i]);
    r.v[N - 1] = ptx_subc(P::m(N - 1) & nz, a.v[N - 1]);
    return r;
}

// Conditional negation: returns -a if neg, else a.
template <class P> DEVI mont_t<P> f_cneg(const mont_t<P>& a, bool neg) {
    mont_t<P> n = f_neg<P>(a);
    mont_t<P> r;
#pragma unroll
    for (int i = 0; i < P::N; i++) r.v[i] = neg ? n.v[i] : a.v[i];
    return r;
}

// One CIOS row on the N+1 word accumulator t: t += a*bi (low halves with one
// carry chain, high halves shifted one word with a second), then t += q*m with
// q = t[0]*INV, then t /= 2^32.  t[N] is zero on entry.
template <class P> DEVI void f_mul_row(u32* t, const mont_t<P>& a, const u32 bi) {
    constexpr int N = P::N;
    t[0] = ptx_mad_lo_cc(a.v[0], bi, t[0]);
#pragma unroll
    for (int j = 1; j < N; j++) t[j] = ptx_madc_lo_cc(a.v[j], bi, t[j]);
    t[N] = ptx_addc(0, 0);
    t[1] = ptx_mad_hi_cc(a.v[0], bi, t[1]);
#pragma unroll
    for (int j = 1; j < N - 1; j++) t[j + 1] = ptx_madc_hi_cc(a.v[j], bi, t[j + 1]);
    t[N] = ptx_madc_hi(a.v[N - 1], bi, t[N]);
}

// The reduction half of a row: t += q*m, q = t[0]*INV, then t /= 2^32.
template <class P> DEVI void f_reduce_row(u32* t) {
    constexpr int N = P::N;
    const u32 q = t[0] * P::inv();
    t[0] = ptx_mad_lo_cc(q, P::m(0), t[0]);
#pragma unroll
    for (int j = 1; j < N; j++) t[j] = ptx_madc_lo_cc(q, P::m(j), t[j]);
    t[N] = ptx_addc(t[N], 0);
    t[1] = ptx_mad_hi_cc(q, P::m(0), t[1]);
#pragma unroll
    for (int j = 1; j < N - 1; j++) t[j + 1] = ptx_madc_hi_cc(q, P::m(j), t[j + 1]);
    t[N] = ptx_madc_hi(q, P::m(N - 1), t[N]);
    // divide by 2^32: t[0] is zero now
#pragma unroll
    for (int j = 0; j < N; j++) t[j] = t[j + 1];
    t[N] = 0;
}

// ---- the product in limb pairs ------------------------------------------------------------
// a_j * b_i is 64 bits at word i + j. Over the even j these pairs tile whole words without
// overlap, and so do the odd j one word higher; so a*b_i is two N-word numbers, each added with
// one carry chain in which the low and high half of every product sit side by side. ptxas turns
// each such side-by-side pair into a single IMAD.WIDE.U32(.X) (32x32+64 -> 64 with carry in and
// out), where split chains (f_mul_row) cost an IMAD, an IMAD.HI and two IADD3.X per product.
//
// The running sum T (CIOS, divided by 2^32 after every row) is kept as T = x + 2^32*y: lane x at
// word 0 and lane y one word up, N words each. Row i adds a_even*b_i to x and a_odd*b_i to y,
// takes q = x[0]*INV (T's word 0 is x[0] alone), adds m_even*q to x and m_odd*q to y, and then
// x[0] is 0. T/2^32 = y + x[1] + 2^32*x[2..]: the lanes swap. The next row's x is this y with
// x[1] added at its word 0 (that add's carry belongs at word 1, the bottom of the next y, so it
// enters the next y's chain), and the next y is this x moved down two words. In unrolled code the
// move is a renaming, so the row is 2N wide multiply-adds, one add, two carry adds and q.
// Bounds (m < 2^(32N-1)): T < 2m throughout; a lane's top pair holds a_{N-1}*b < 2^63, so the y
// chains never carry out of word N-1, and x's carries go to y[N-1] (the same word of T).

// lane (offset 0 or 1 word) += the pairs a[j]*bi for j = first, first + 2, ...: chain over the N
// words of acc (reading src, which may be acc); with CIN the chain starts from the carry flag
// already set; with COUT the carry out of acc[N-1] is left in the flag for the caller.
template <class P, bool CIN, bool COUT>
DEVI void f_pairs_mad(u32* acc, const u32* src, const mont_t<P>& a, int first, const u32 bi) {
    constexpr int N = P::N;
#pragma unroll
    for (int t = 0; t < N / 2; t++) {
        const u32 aj = a.v[first + 2 * t];
        if (t == 0 && !CIN) acc[0] = ptx_mad_lo_cc(aj, bi, src[0]);
        else acc[2 * t] = ptx_madc_lo_cc(aj, bi, src[2 * t]);
        if (t == N / 2 - 1 && !COUT) acc[2 * t + 1] = ptx_madc_hi(aj, bi, src[2 * t + 1]);
        else acc[2 * t + 1] = ptx_madc_hi_cc(aj, bi, src[2 * t + 1]);
    }
}

// the same pairs of a constant (the modulus), as products with q
template <class P, bool COUT>
DEVI void f_pairs_mad_m(u32* acc, int first, const u32 q) {
    constexpr int N = P::N;
#pragma unroll
    for (int t = 0; t < N / 2; t++) {
        const u32 mj = P::m(first + 2 * t);
        if (t == 0) acc[0] = ptx_mad_lo_cc(q, mj, acc[0]);
        else acc[2 * t] = ptx_madc_lo_cc(q, mj, acc[2 * t]);
        if (t == N / 2 - 1 && !COUT) acc[2 * t + 1] = ptx_madc_hi(q, mj, acc[2 * t + 1]);
        else acc[2 * t + 1] = ptx_madc_hi_cc(q, mj, acc[2 * t + 1]);
    }
}

// One row on the lanes (x at word 0, y one word up), b's limb bi. x and y are the previous
// row's y and x (see above); first: the state is zero, so the products are written, not added.
template <class P> DEVI void f_pairs_row(u32* x, u32* y, const mont_t<P>& a, const u32 bi, bool first) {
    constexpr int N = P::N;
    if (first) {
#pragma unroll
        for (int j = 0; j < N; j += 2) {
            x[j] = a.v[j] * bi;
            x[j + 1] = __umulhi(a.v[j], bi);
            y[j] = a.v[j + 1] * bi;
            y[j + 1] = __umulhi(a.v[j + 1], bi);
        }
    } else {
        // next x = previous y + previous x's word 1; its carry starts the next y's chain
        x[0] = ptx_add_cc(x[0], y[1]);
        u32 src[N];  // previous x moved down two words (a renaming once unrolled)
#pragma unroll
        for (int j = 0; j < N - 2; j++) src[j] = y[j + 2];
        src[N - 2] = 0;
        src[N - 1] = 0;
        f_pairs_mad<P, true, false>(y, src, a, 1, bi);
        f_pairs_mad<P, false, true>(x, x, a, 0, bi);
        y[N - 1] = ptx_addc(y[N - 1], 0);
    }
    const u32 q = x[0] * P::inv();
    f_pairs_mad_m<P, true>(x, 0, q);
    y[N - 1] = ptx_addc(y[N - 1], 0);
    f_pairs_mad_m<P, false>(y, 1, q);
}

// Montgomery product a*b*R^-1 mod m (CIOS in limb pairs, above), fully reduced. N even.
template <class P> DEVI mont_t<P> f_mul(const mont_t<P>& a, const mont_t<P>& b) {
    constexpr int N = P::N;
    static_assert(N % 2 == 0, "limb pairs");
    u32 e[N], o[N];
#pragma unroll
    for (int i = 0; i < N; i += 2) {
        f_pairs_row<P>(e, o, a, b.v[i], i == 0);
        f_pairs_row<P>(o, e, a, b.v[i + 1], false);
    }
    // the last row ran with x = o (its word 0 now zero) and y = e: T = e + o[1..]
    u32 t[N];
    t[0] = ptx_add_cc(e[0], o[1]);
#pragma unroll
    for (int j = 1; j < N - 1; j++) t[j] = ptx_addc_cc(e[j], o[j + 1]);
    t[N - 1] = ptx_addc(e[N - 1], 0);
    return f_reduce_once<P>(t);
}

// The same product with the row loop kept rolled: one row of code (about a twelfth of
// f_mul's) run N times, b's limbs rotated through registers so that every index stays a
// compile-time constant (a run-time index would put b in local memory). Same rows, same
// result as f_mul; t starts at zero, so the first row needs no special case.
template <class P> DEVI mont_t<P> f_mul_rolled(const mont_t<P>& a, const mont_t<P>& b) {
    constexpr int N = P::N;
    u32 t[N + 1], bb[N];
#pragma unroll
    for (int j = 0; j < N; j++) {
        t[j] = 0;
        bb[j] = b.v[j];
    }
    t[N] = 0;
#pragma unroll 1
    for (int i = 0; i < N; i++) {
        const u32 bi = bb[0];
#pragma unroll
        for (int j = 0; j < N - 1; j++) bb[j] = bb[j + 1];
        f_mul_row<P>(t, a, bi);
        f_reduce_row<P>(t);
    }
    return f_reduce_once<P>(t);
}

// ---- the squaring in limb pairs (FIELD_SQR) -----------------------------------------------
// a*a = D + 2C with D = sum a_i^2 2^(64i) (the diagonal) and C = sum_{i<j} a_i a_j 2^(32(i+j))
// (each cross product once): N(N+1)/2 products for the 2N-word square instead of N^2. Then a
// separate Montgomery reduction (SOS): T = T_hi*R + T_lo, and T/R = T_hi + (T_lo + Q*m)/R.
//
// C in two lanes: a_i*a_j with i + j odd sit at odd words (lane O), with i + j even at even
// words (lane E). Row i adds a_i*(a_{i+1}, a_{i+3}, ...) to O and a_i*(a_{i+2}, a_{i+4}, ...)
// to E: in each lane the row's pairs tile consecutive words, so one carry chain per lane with
// the halves of every product side by side (ptxas: one IMAD.WIDE.U32.X per product).
// Carries: a row's chain ends at its top pair's high word w + 1 and its carry goes to w + 2 (the
// lane's carry word). In both lanes rows come in twos with the same top pair: the first of the
// two writes the carry word fresh (<= 1), the second adds its carry to it (<= 2, no carry out of
// the word), and the next row's top pair sits two words up with that carry word as its low
// word, so every word a row could carry into is inside its chain or its carry word. No word of
// a lane ever holds more than its share of C < 2^(64N-1), so nothing carries past word 2N-1.

// L += a_i * (a_j for j = j0, j0 + 2, ... <= N-1), a_i*a_j at words i + j, i + j + 1. hw: the
// highest word of L written so far (-1: none; an unwritten word is read as zero), updated. All
// arguments are compile-time constants once the caller's loop is unrolled.
template <class P> DEVI void f_sqr_cross(u32* L, const mont_t<P>& a, const int i, const int j0, int& hw) {
    constexpr int N = P::N;
    if (j0 > N - 1) return;
    const int jtop = j0 + 2 * ((N - 1 - j0) / 2);
    const u32 ai = a.v[i];
    if (hw < 0) {  // the lane's first row: the products are written, no carries
#pragma unroll
        for (int j = j0; j <= jtop; j += 2) {  // one 64-bit product: one register pair
            const u64 p = (u64)ai * a.v[j];
            L[i + j] = (u32)p;
            L[i + j + 1] = (u32)(p >> 32);
        }
        hw = i + jtop + 1;
        return;
    }
#pragma unroll
    for (int j = j0; j <= jtop; j += 2) {
        const int w = i + j;
        const u32 lo_in = w <= hw ? L[w] : 0u;
        const u32 hi_in = w + 1 <= hw ? L[w + 1] : 0u;
        L[w] = j == j0 ? ptx_mad_lo_cc(ai, a.v[j], lo_in) : ptx_madc_lo_cc(ai, a.v[j], lo_in);
        L[w + 1] = ptx_madc_hi_cc(ai, a.v[j], hi_in);
    }
    const int c = i + jtop + 2;  // <= 2N - 1: i < jtop <= N - 1
    if (c == 2 * N - 1) {  // C < 2^(32(2N-1)) (f_sqr_pairs): that carry is zero
        hw = c - 1;
        return;
    }
    L[c] = ptx_addc(c <= hw ? L[c] : 0u, 0);
    hw = c;
}

// acc = src + carry flag + the pairs m[j]*q for j = first, first + 2, ...: a chain over the N words
// of acc that starts from the carry flag already set and leaves no carry out (see callers).
template <class P> DEVI void f_pairs_madc_m(u32* acc, const u32* src, int first, const u32 q) {
    constexpr int N = P::N;
#pragma unroll
    for (int t = 0; t < N / 2; t++) {
        const u32 mj = P::m(first + 2 * t);
        acc[2 * t] = ptx_madc_lo_cc(q, mj, src[2 * t]);
        if (t == N / 2 - 1) acc[2 * t + 1] = ptx_madc_hi(q, mj, src[2 * t + 1]);
        else acc[2 * t + 1] = ptx_madc_hi_cc(q, mj, src[2 * t + 1]);
    }
}

// One Montgomery reduction row on the lanes of f_pairs_row (T = x + 2^32 y, x at word 0, y one
// word up; each a chain of pairs in its own alignment, so ptxas keeps every pair in one register
// pair): q = T[0]*INV, T += q*m, T /= 2^32, the lanes swapping as there. first: x holds the
// value to reduce (< 2^(32N)), y is empty. Bounds: T < 2^(32N) on entry and q*m < 2^(32N+31),
// so T + q*m < 2^(32(N+1)): no carry out of word N (y[N-1]); after the division T < 2^(32N)
// again (< 2^(32(N-1)) + m).
template <class P> DEVI void f_redc_row(u32* x, u32* y, bool first) {
    constexpr int N = P::N;
    if (first) {
        const u32 q = x[0] * P::inv();
#pragma unroll
        for (int j = 0; j < N; j += 2) {
            const u64 p = (u64)q * P::m(j + 1);
            y[j] = (u32)p;
            y[j + 1] = (u32)(p >> 32);
        }
        f_pairs_mad_m<P, true>(x, 0, q);
        y[N - 1] = ptx_addc(y[N - 1], 0);  // q*m_{N-1} + 1 < 2^64
        return;
    }
    // x: the previous y, plus the previous x's word 1 at word 0 (its carry starts y's chain; the
    // product for q sets no flag). y: the previous x moved down two words (a renaming), plus the
    // carry, plus m_odd*q; its top pair is q*m_{N-1} + carry < 2^64, so no carry out.
    x[0] = ptx_add_cc(x[0], y[1]);
    const u32 q = x[0] * P::inv();
    u32 src[N];
#pragma unroll
    for (int j = 0; j < N - 2; j++) src[j] = y[j + 2];
    src[N - 2] = 0;
    src[N - 1] = 0;
    f_pairs_madc_m<P>(y, src, 1, q);
    f_pairs_mad_m<P, true>(x, 0, q);
    y[N - 1] = ptx_addc(y[N - 1], 0);
}

// Montgomery reduction of a 2N-word T with T_hi = floor(T/R) < m: T*R^-1 mod m, fully reduced.
// u = (T_lo + Q*m)/R by N rows on the lanes (e, o) of f_redc_row; u < (R + R*m)/R, so u <= m,
// and T_hi + u < 2m < 2^(32N) (no carry out of either chain below).
template <class P> DEVI mont_t<P> f_redc_wide(const u32* T) {
    constexpr int N = P::N;
    u32 e[N], o[N];
#pragma unroll
    for (int j = 0; j < N; j++) e[j] = T[j];
#pragma unroll
    for (int k = 0; k < N; k += 2) {
        f_redc_row<P>(e, o, k == 0);
        f_redc_row<P>(o, e, false);
    }
    // the last row ran with x = o (word 0 zero now), y = e: u = e + o[1..]; then T_hi + u
    u32 r[N];
    r[0] = ptx_add_cc(e[0], o[1]);
#pragma unroll
    for (int j = 1; j < N - 1; j++) r[j] = ptx_addc_cc(e[j], o[j + 1]);
    r[N - 1] = ptx_addc(e[N - 1], 0);
    r[0] = ptx_add_cc(r[0], T[N]);
#pragma unroll
    for (int j = 1; j < N - 1; j++) r[j] = ptx_addc_cc(r[j], T[N + j]);
    r[N - 1] = ptx_addc(r[N - 1], T[2 * N - 1]);
    return f_reduce_once<P>(r);
}

// Montgomery square a*a*R^-1 mod m, fully reduced; the same result as f_mul(a, a) with
// N(N+1)/2 + N^2 products instead of 2N^2. N even, N >= 4, m < 2^(32N-1).
template <class P> DEVI mont_t<P> f_sqr_pairs(const mont_t<P>& a) {
    constexpr int N = P::N;
    static_assert(N % 2 == 0 && N >= 4, "limb pairs");
    static_assert(P::m(N - 1) < 0x80000000u, "the bounds below need m < 2^(32N-1)");
    u32 E[2 * N], O[2 * N];
#pragma unroll
    for (int w = 0; w < 2 * N; w++) E[w] = O[w] = 0;  // never read unwritten (hw); dead stores
    int hwE = -1, hwO = -1;
#pragma unroll
    for (int i = 0; i < N - 1; i++) {
        f_sqr_cross<P>(O, a, i, i + 1, hwO);
        f_sqr_cross<P>(E, a, i, i + 2, hwE);
    }
    // C = O + E: O starts at word 1, E at word 2, both written up to word 2N-2 (hwO, hwE).
    // C = sum_j a_j 2^(32j) * (a's limbs below j) < sum_j a_j 2^(64j) < (a_{N-1} + 1) 2^(64(N-1))
    // <= 2^(64N-33), as a_{N-1} < 2^31 (m < 2^(32N-1)). So word 2N-1 of C, of O and of E is
    // zero, 2C < 2^(32(2N-1)): neither chain below carries out of word 2N-2.
    u32 T[2 * N];
    T[1] = O[1];
    T[2] = ptx_add_cc(O[2], E[2]);
#pragma unroll
    for (int w = 3; w < 2 * N - 2; w++) T[w] = ptx_addc_cc(O[w], E[w]);
    T[2 * N - 2] = ptx_addc(O[2 * N - 2], E[2 * N - 2]);
    // 2C
    T[1] = ptx_add_cc(T[1], T[1]);
#pragma unroll
    for (int w = 2; w < 2 * N - 2; w++) T[w] = ptx_addc_cc(T[w], T[w]);
    T[2 * N - 2] = ptx_addc(T[2 * N - 2], T[2 * N - 2]);
    T[2 * N - 1] = 0;
    // + D: a_i^2 at words 2i, 2i + 1, one chain of pairs; a*a < 2^(64N): no carry out
    T[0] = a.v[0] * a.v[0];
    T[1] = ptx_mad_hi_cc(a.v[0], a.v[0], T[1]);
#pragma unroll
    for (int i = 1; i < N - 1; i++) {
        T[2 * i] = ptx_madc_lo_cc(a.v[i], a.v[i], T[2 * i]);
        T[2 * i + 1] = ptx_madc_hi_cc(a.v[i], a.v[i], T[2 * i + 1]);
    }
    T[2 * N - 2] = ptx_madc_lo_cc(a.v[N - 1], a.v[N - 1], T[2 * N - 2]);
    T[2 * N - 1] = ptx_madc_hi(a.v[N - 1], a.v[N - 1], T[2 * N - 1]);
    // T_hi <= (m-1)^2/R < m
    return f_redc_wide<P>(T);
}

// ---- a sum of two products, reduced once (FIELD_LAZY) -------------------------------------
// a*b + c*d (all < m) is below 2m^2 < m*R (as m < 2^(32N-1)), so it is summed as one 2N-word
// integer and reduced once by f_redc_wide (its T_hi < 2m^2/R < m): N^2 products for each of the
// two and N^2 for the reduction, against 2N^2 for each f_mul. The curve formulas' a*b - c*d
// is f_mul_sum(a, b, c, f_neg(d)).
//
// The products in two lanes as the squaring's: a_j*b_i sits at words i + j and i + j + 1, so in
// row i the even j tile the words of i's parity (one carry chain of limb pairs) and the odd j
// those of the other parity. A lane's rows come in groups sharing their top pair (rows i and
// i + 1 of one product, and the same rows of the second): each adds its carry to the word
// above that pair (at most 4 carries into a word written fresh), and the lane's next group
// starts two words up, so its chain covers that word. A lane holds part of a*b + c*d < 2^(64N):
// the carries into word 2N are zero and are not written.

// L += bi * (a_j for j = j0, j0 + 2, ... <= K-1), a_j*bi at words i + j, i + j + 1, and the
// chain's carry at the word above its top pair. hw: the highest word of L written so far (-1:
// none; unwritten words read as zero), updated. Compile-time arguments once unrolled. The lane
// holds part of a value below 2^(64K): carries into word 2K are zero and are not written.
template <int K> DEVI void mp_lane(u32* L, const u32* a, const u32 bi, const int i, const int j0, int& hw) {
    const int jtop = j0 + 2 * ((K - 1 - j0) / 2);
    if (hw < 0) {  // the lane's first row: written, no carries
#pragma unroll
        for (int j = j0; j <= jtop; j += 2) {
            const u64 p = (u64)a[j] * bi;
            L[i + j] = (u32)p;
            L[i + j + 1] = (u32)(p >> 32);
        }
        hw = i + jtop + 1;
        return;
    }
#pragma unroll
    for (int j = j0; j <= jtop; j += 2) {
        const int w = i + j;
        const u32 lo_in = w <= hw ? L[w] : 0u;
        const u32 hi_in = w + 1 <= hw ? L[w + 1] : 0u;
        L[w] = j == j0 ? ptx_mad_lo_cc(a[j], bi, lo_in) : ptx_madc_lo_cc(a[j], bi, lo_in);
        L[w + 1] = ptx_madc_hi_cc(a[j], bi, hi_in);
    }
    const int c = i + jtop + 2;
    if (c >= 2 * K) {  // zero (above)
        if (c - 1 > hw) hw = c - 1;
        return;
    }
    L[c] = ptx_addc(c <= hw ? L[c] : 0u, 0);
    if (c > hw) hw = c;
}

// Row i of a*b (K words each): a*bi into the lanes E (even words) and O (odd), the a_j of i's
// parity into the lane of that parity and the others into the other.
template <int K>
DEVI void mp_row(u32* E, u32* O, const u32* a, const u32 bi, const int i, int& hwE, int& hwO) {
    if (i % 2 == 0) {
        mp_lane<K>(E, a, bi, i, 0, hwE);
        mp_lane<K>(O, a, bi, i, 1, hwO);
    } else {
        mp_lane<K>(O, a, bi, i, 0, hwO);
        mp_lane<K>(E, a, bi, i, 1, hwE);
    }
}

// out = E + O (W words; O's word 0 is never written; out may be E). The lanes hold parts of a
// value below 2^(32W): no carry out.
template <int W> DEVI void mp_lanes_sum(u32* out, const u32* E, const u32* O) {
    out[0] = E[0];
    out[1] = ptx_add_cc(E[1], O[1]);
#pragma unroll
    for (int w = 2; w < W - 1; w++) out[w] = ptx_addc_cc(E[w], O[w]);
    out[W - 1] = ptx_addc(E[W - 1], O[W - 1]);
}

// (a*b + c*d) * R^-1 mod m, fully reduced; equal to f_add(f_mul(a, b), f_mul(c, d)).
template <class P>
DEVI mont_t<P> f_mul_sum(const mont_t<P>& a, const mont_t<P>& b, const mont_t<P>& c, const mont_t<P>& d) {
    constexpr int N = P::N;
    static_assert(N % 2 == 0, "limb pairs");
    static_assert(P::m(N - 1) < 0x80000000u, "the bounds above need m < 2^(32N-1)");
    u32 E[2 * N], O[2 * N];
#pragma unroll
    for (int w = 0; w < 2 * N; w++) E[w] = O[w] = 0;  // never read unwritten (hw); dead stores
    int hwE = -1, hwO = -1;
#pragma unroll
    for (int i = 0; i < N; i++) {
        mp_row<N>(E, O, a.v, b.v[i], i, hwE, hwO);
        mp_row<N>(E, O, c.v, d.v[i], i, hwE, hwO);
    }
    mp_lanes_sum<2 * N>(E, E, O);  // T = E + O, below 2^(64N)
    return f_redc_wide<P>(E);
}

// ---- Karatsuba products (FIELD_KARA) ------------------------------------------------------
// With a = a0 + a1 2^(32K) and b likewise (K = N/2), a*b = P0 + M 2^(32K) + P2 2^(32N) where
// P0 = a0*b0, P2 = a1*b1 and M = a0*b1 + a1*b0 = P0 + P2 - (a0 - a1)(b0 - b1): three K x K
// products (3N^2/4 wide multiply-adds) instead of N^2, for ~100 more additions, logic ops and
// selects. The multiplier's pipe is what bounds the bucket accumulation (ncu: 94.6 % busy),
// the adder's is not, so the trade pays where the products dominate. The differences are
// taken as magnitudes |a0 - a1|, |b0 - b1| with their signs, so the middle product needs no
// carry bits; the reduction of the 2N-word product is f_redc_wide's (the squaring's).

// out = a*b, K x K words into 2K, in the two lanes of f_mul_sum (K even).
template <int K> DEVI void mp_mul(u32* out, const u32* a, const u32* b) {
    static_assert(K % 2 == 0, "limb pairs");
    u32 E[2 * K], O[2 * K];
#pragma unroll
    for (int w = 0; w < 2 * K; w++) E[w] = O[w] = 0;  // never read unwritten (hw); dead stores
    int hwE = -1, hwO = -1;
#pragma unroll
    for (int i = 0; i < K; i++) mp_row<K>(E, O, a, b[i], i, hwE, hwO);
    mp_lanes_sum<2 * K>(out, E, O);  // below 2^(64K)
}

// d = |x - y| (K words); returns all ones if x < y, else 0.
template <int K> DEVI u32 mp_absdiff(u32* d, const u32* x, const u32* y) {
    d[0] = ptx_sub_cc(x[0], y[0]);
#pragma unroll
    for (int i = 1; i < K; i++) d[i] = ptx_subc_cc(x[i], y[i]);
    const u32 s = ptx_subc(0, 0);
    // negated where x < y: (d ^ s) + 1, as a chain (the two's complement of K words)
    d[0] = ptx_add_cc(d[0] ^ s, s & 1u);
#pragma unroll
    for (int i = 1; i < K - 1; i++) d[i] = ptx_addc_cc(d[i] ^ s, 0);
    d[K - 1] = ptx_addc(d[K - 1] ^ s, 0);
    return s;
}

// T = a*b (2N words) by one level of Karatsuba. a*b < 2^(64N), so T's top carry is zero. The
// middle product first, then P0 and P2 straight into T's halves (fewer values live at once).
template <class P> DEVI void f_prod_kara(u32* T, const mont_t<P>& a, const mont_t<P>& b) {
    constexpr int N = P::N, K = N / 2;
    static_assert(N % 4 == 0, "halves in limb pairs");
    u32 d[N], m[N + 1];
    u32 s;
    {
        u32 da[K], db[K];
        const u32 sa = mp_absdiff<K>(da, a.v, a.v + K);
        const u32 sb = mp_absdiff<K>(db, b.v, b.v + K);
        mp_mul<K>(d, da, db);
        s = ~(sa ^ sb);
    }
    mp_mul<K>(T, a.v, b.v);
    mp_mul<K>(T + N, a.v + K, b.v + K);
    // (a0 - a1)(b0 - b1) = +d when the signs agree: M = P0 + P2 - d, else P0 + P2 + d. As N + 1
    // words, M = P0 + P2 + (d ^ s) + (s & 1) with the top word of d ^ s being s: exact modulo
    // 2^(32(N+1)), and 0 <= M = a0 b1 + a1 b0 < 2^(32N+1).
    m[0] = ptx_add_cc(T[0], T[N]);
#pragma unroll
    for (int i = 1; i < N; i++) m[i] = ptx_addc_cc(T[i], T[N + i]);
    m[N] = ptx_addc(0, 0);
    (void)ptx_add_cc(s & 1u, 0xffffffffu);  // the carry flag = s & 1: the +1 of -d
#pragma unroll
    for (int i = 0; i < N; i++) m[i] = ptx_addc_cc(m[i], d[i] ^ s);
    m[N] = ptx_addc(m[N], s);
    // T = P0 | P2 (side by side) + M 2^(32K): one chain from word K to the top
    T[K] = ptx_add_cc(T[K], m[0]);
#pragma unroll
    for (int w = K + 1; w < 2 * N - 1; w++) T[w] = ptx_addc_cc(T[w], w - K <= N ? m[w - K] : 0u);
    T[2 * N - 1] = ptx_addc(T[2 * N - 1], 0);
}

// a*b*R^-1 mod m, fully reduced: the Karatsuba product, then f_redc_wide (a*b < m^2, so its
// T_hi < m). Equal to f_mul(a, b).
template <class P> DEVI mont_t<P> f_mul_kara(const mont_t<P>& a, const mont_t<P>& b) {
    constexpr int N = P::N;
    u32 T[2 * N];
    f_prod_kara<P>(T, a, b);
    return f_redc_wide<P>(T);
}

// (a*b + c*d)*R^-1 mod m, fully reduced: two Karatsuba products summed (below 2m^2 < m*R,
// 2N words) and reduced once. Equal to f_mul_sum(a, b, c, d).
template <class P>
DEVI mont_t<P> f_mul_sum_kara(const mont_t<P>& a, const mont_t<P>& b, const mont_t<P>& c, const mont_t<P>& d) {
    constexpr int N = P::N;
    static_assert(P::m(N - 1) < 0x80000000u, "the bound needs m < 2^(32N-1)");
    u32 T[2 * N], U[2 * N];
    f_prod_kara<P>(T, a, b);
    f_prod_kara<P>(U, c, d);
    T[0] = ptx_add_cc(T[0], U[0]);
#pragma unroll
    for (int w = 1; w < 2 * N - 1; w++) T[w] = ptx_addc_cc(T[w], U[w]);
    T[2 * N - 1] = ptx_addc(T[2 * N - 1], U[2 * N - 1]);
    return f_redc_wide<P>(T);
}

#ifndef FIELD_SQR
#define FIELD_SQR 0
#endif
// FIELD_LAZY (0 by default): 1 = the curve formulas' a*b - c*d by f_mul_sum (ec/xyzz.cuh).
#ifndef FIELD_LAZY
#define FIELD_LAZY 0
#endif

// FIELD_SQR (0 by default): 1 = f_sqr is the dedicated squaring above, 0 = f_mul(a, a).
template <class P> DEVI mont_t<P> f_sqr(const mont_t<P>& a) {
#if FIELD_SQR == 1
    return f_sqr_pairs<P>(a);
#else
    return f_mul<P>(a, a);
#endif
}

// canonical (non-Montgomery) integer value of a Montgomery residue: a * R^-1
template <class P> DEVI mont_t<P> f_from_mont(const mont_t<P>& a) {
    mont_t<P> one_raw = f_zero<P>();
    one_raw.v[0] = 1;
    return f_mul<P>(a, one_raw);
}

// Montgomery form of a canonical integer (< mod): a * R
template <class P> DEVI mont_t<P> f_to_mont(const mont_t<P>& a) {
    mont_t<P> r2;
#pragma unroll
    for (int i = 0; i < P::N; i++) r2.v[i] = P::r2(i);
    return f_mul<P>(a, r2);
}

// a^e for a small public exponent given as limbs (little-endian), square and
// multiply from the top bit.  Used for inversion by Fermat (test/setup code).
template <class P> DEVI mont_t<P> f_pow_mod_minus_2(const mont_t<P>& a) {
    u32 e[P::N];
    u32 borrow = 2;  // e = mod - 2, limbwise with borrow
#pragma unroll
    for (int i = 0; i < P::N; i++) {
        const u32 mi = P::m(i);
        e[i] = mi - borrow;
        borrow = (mi < borrow) ? 1u : 0u;
    }
    mont_t<P> r = f_one<P>();
#pragma unroll 1
    for (int i = P::N - 1; i >= 0; i--) {
#pragma unroll 1
        for (int b = 31; b >= 0; b--) {
            r = f_sqr<P>(r);
            if ((e[i] >> b) & 1) r = f_mul<P>(r, a);
        }
    }
    return r;
}

template <class P> DEVI mont_t<P> f_inv(const mont_t<P>& a) { return f_pow_mod_minus_2<P>(a); }

// ---- memory helpers: 16-byte vector loads/stores (element arrays are 16-byte
// aligned when the base pointer is: sizes are 32 and 48 bytes) ---------------
template <class P> DEVI mont_t<P> f_load(const mont_t<P>* p) {
    static_assert(P::N % 4 == 0, "vector load");
    mont_t<P> r;
    const uint4* q = reinterpret_cast<const uint4*>(p);
#pragma unroll
    for (int i = 0; i < P::N / 4; i++) {
        uint4 x = q[i];
        r.v[4 * i] = x.x; r.v[4 * i + 1] = x.y; r.v[4 * i + 2] = x.z; r.v[4 * i + 3] = x.w;
    }
    return r;
}

template <class P> DEVI mont_t<P> f_ldg(const mont_t<P>* p) {
    mont_t<P> r;
    const uint4* q = reinterpret_cast<const uint4*>(p);
#pragma unroll
    for (int i = 0; i < P::N / 4; i++) {
        uint4 x = __ldg(q + i);
        r.v[4 * i] = x.x; r.v[4 * i + 1] = x.y; r.v[4 * i + 2] = x.z; r.v[4 * i + 3] = x.w;
    }
    return r;
}

template <class P> DEVI void f_store(mont_t<P>* p, const mont_t<P>& a) {
    uint4* q = reinterpret_cast<uint4*>(p);
#pragma unroll
    for (int i = 0; i < P::N / 4; i++) q[i] = make_uint4(a.v[4 * i], a.v[4 * i + 1], a.v[4 * i + 2], a.v[4 * i + 3]);
}

#endif // BATON_FIELD_MONT_CUH
