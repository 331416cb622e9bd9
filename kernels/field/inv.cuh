// baton: field inversion by a fixed-window power, a^-1 = a^(m-2) (Fermat), for any params class
// of field/mont.cuh. Requires common.cuh, field/mont.cuh.
//
// mont.cuh's f_inv (and fp.cuh's fp_inv_noinline) walk m - 2 one bit at a time: a squaring for
// each of the 32N bits and a product per set bit, 613 products for Fp and 420 for Fr (608 and 417
// from the top set bit on). Here the exponent is cut into W-bit digits from the top: W squarings
// per digit, one product by a^digit from a table of a^0 .. a^(2^W - 1) (none for a zero digit),
// and the table itself (2^W - 2 products). The exponent is public and the same for every thread,
// so the digit branches never diverge.
//
// Products (squarings + table + per-digit products), from m - 2's digits:
//            W = 3            W = 4 (default)     W = 5
//   Fp:  378+6+117 = 501   380+14+91 = 485   380+30+73 = 483
//   Fr:  252+6+75  = 333   252+14+59 = 325   250+30+47 = 327
// W = 4: two products more than W = 5 for Fp, with half its table (16 residues, 768 bytes of
// local memory for Fp: the digit indexes it at run time) and digits that never straddle a limb.
//
// The name: mont.cuh already has f_inv (the bitwise power, which test.cuh uses for Fr); this
// one is f_inv_window, input and output in Montgomery form, and f_inv_window(0) = 0.
#ifndef BATON_FIELD_INV_CUH
#define BATON_FIELD_INV_CUH

// Limb i of the exponent m - 2, from the modulus limbs: the 2 borrows up through the low limbs
// for as long as they are below it (for Fp and Fr it stops at limb 0 or 1).
template <class P> __host__ __device__ constexpr u32 f_inv_exp_limb(int i) {
    u32 borrow = 2;
    for (int j = 0; j < i; j++) borrow = P::m(j) < borrow ? 1u : 0u;
    return P::m(i) - borrow;
}

// The W-bit digit k of m - 2 (bits k*W .. k*W + W - 1), a window that may span two limbs.
template <class P, int W> __host__ __device__ constexpr u32 f_inv_exp_digit(int k) {
    const int bit = k * W, limb = bit / 32, sh = bit % 32;
    u64 two = f_inv_exp_limb<P>(limb);
    if (limb + 1 < P::N) two |= (u64)f_inv_exp_limb<P>(limb + 1) << 32;
    return (u32)(two >> sh) & ((1u << W) - 1);
}

// The highest nonzero digit of m - 2 (its top limb is nonzero for every modulus here: m >
// 2^(32(N-1)), as mont.cuh's R = 2^(32N) wants).
template <class P, int W> __host__ __device__ constexpr int f_inv_exp_top() {
    int top = 0;
    for (int k = 0; k * W < 32 * P::N; k++)
        if (f_inv_exp_digit<P, W>(k) != 0) top = k;
    return top;
}

// The number of products f_inv_window<P, W> runs (the table above): for comments and checks.
template <class P, int W> __host__ __device__ constexpr int f_inv_window_products() {
    int n = (1 << W) - 2 + W * f_inv_exp_top<P, W>();
    for (int k = 0; k < f_inv_exp_top<P, W>(); k++) n += f_inv_exp_digit<P, W>(k) != 0 ? 1 : 0;
    return n;
}

// a^(m-2) = a^-1 for a != 0 (Montgomery in, Montgomery out), 0 for a = 0: the table is then
// a^0 = 1 and zeros, and the top digit is nonzero, so the result starts at 0 and stays 0.
// Squarings by f_sqr (the dedicated squaring with FIELD_SQR = 1), products by f_mul, both
// inlined in a loop kept rolled (one copy of each). W: 2..8.
template <class P, int W = 4> DEVI mont_t<P> f_inv_window(const mont_t<P>& a) {
    static_assert(W >= 2 && W <= 8, "window width");
    constexpr int N = P::N, TOP = f_inv_exp_top<P, W>();
    // the exponent's limbs: constants once unrolled; indexed at run time below, so it lives in
    // local memory (48 bytes for Fp), like the table
    u32 e[N];
#pragma unroll
    for (int i = 0; i < N; i++) e[i] = f_inv_exp_limb<P>(i);
    mont_t<P> tab[1 << W];
    tab[0] = f_one<P>();
    tab[1] = a;
    tab[2] = f_sqr<P>(a);
#pragma unroll 1
    for (int j = 3; j < (1 << W); j++) tab[j] = f_mul<P>(tab[j - 1], a);
    mont_t<P> r = tab[f_inv_exp_digit<P, W>(TOP)];
#pragma unroll 1
    for (int k = TOP - 1; k >= 0; k--) {
#pragma unroll 1
        for (int s = 0; s < W; s++) r = f_sqr<P>(r);
        // the digit from e[] (f_inv_exp_digit's window, read at run time)
        const int bit = k * W, limb = bit / 32, sh = bit % 32;
        u32 d = e[limb] >> sh;
        if (sh + W > 32 && limb + 1 < N) d |= e[limb + 1] << (32 - sh);
        d &= (1u << W) - 1;
        if (d != 0) r = f_mul<P>(r, tab[d]);
    }
    return r;
}

#endif // BATON_FIELD_INV_CUH
