// baton: affine point additions in per-thread batches that share one field inversion
// (Montgomery's trick), the arithmetic of a batch-affine bucket accumulation (NOTES.md, "What
// bounds the kernels, and the next step"). No kernel uses it yet. Requires field/inv.cuh,
// ec/xyzz.cuh; F is a field-ops class of xyzz.cuh whose T is a mont_t<P> (G1's FpOps, ec/g1.cuh):
// the inversion is f_inv_window<P>.
//
// out[i] = a[i] + b[i], i < K, with y^2 = x^3 + b (a = 0), infinity as (0, 0) (ec_affine_is_inf):
//   chord   (x1 != x2):         λ = (y2 - y1) / (x2 - x1)
//   tangent (a == b, y1 != 0):  λ = 3 x1^2 / (2 y1)
//   then x3 = λ^2 - x1 - x2, y3 = λ (x1 - x3) - y1 (for the tangent x2 = x1: the same lines).
// The other cases need no division: a infinity (out = b), b infinity (out = a), a == -b or a == b
// of order 2 (out = infinity). Their denominator enters the batch product as 1, so that one such
// pair does not zero the product (and with it every other pair's inverse); they are finished by
// selection. x1 == x2 with y2 != ±y1 cannot happen for points of the curve.
//
// Products (mul + sqr) per addition:
//   chord 3 (λ = num * inv_i, λ^2, λ (x1 - x3)); tangent 4 (one more, x1^2);
//   Montgomery's trick 3 (the prefix product den_0 ... den_i, inv_i = inv * prefix, and the
//   running inverse times den_i), K - 1 of each per batch;
//   the one inversion: f_inv_window<FpParams> 485 (field/inv.cuh).
// A batch of K chord pairs: 6K - 3 + 485 products, 6 - 3/K + 485/K per addition (K = 16: 36;
// XYZZ mixed addition: 10), so a per-thread batch only pays once K is in the hundreds; the
// inversion must be shared wider (NOTES.md).
#ifndef BATON_EC_AFFINE_CUH
#define BATON_EC_AFFINE_CUH

// What a pair needs (ec_pair_den).
constexpr u32 EC_PAIR_CHORD = 0;    // x1 != x2
constexpr u32 EC_PAIR_TANGENT = 1;  // a == b, y1 != 0
constexpr u32 EC_PAIR_B = 2;        // a infinity: out = b (infinity too if both are)
constexpr u32 EC_PAIR_A = 3;        // b infinity, a not: out = a
constexpr u32 EC_PAIR_INF = 4;      // a == -b, or a == b with y1 == 0: out = infinity

// The case of the pair (a, b) and the denominator it puts into the batch product: x2 - x1 for
// the chord, 2 y1 for the tangent, 1 otherwise. Run once for the prefix products and once more on
// the way back (recomputing costs a few subtractions; keeping den[] would cost K more residues
// of local memory).
template <class F>
DEVI u32 ec_pair_den(const ec_affine<F>& a, const ec_affine<F>& b, typename F::T& den) {
    typedef typename F::T T;
    const T dx = F::sub(b.x, a.x);
    u32 kind;
    if (ec_affine_is_inf(a)) kind = EC_PAIR_B;
    else if (ec_affine_is_inf(b)) kind = EC_PAIR_A;
    else if (!F::is_zero(dx)) kind = EC_PAIR_CHORD;
    // x1 == x2: y2 == y1 (a == b) or y2 == -y1 (a == -b); y1 == 0 is both, and 2a = infinity
    else if (F::is_zero(F::sub(b.y, a.y)) && !F::is_zero(a.y)) kind = EC_PAIR_TANGENT;
    else kind = EC_PAIR_INF;
    if (kind == EC_PAIR_CHORD) den = dx;
    else if (kind == EC_PAIR_TANGENT) den = F::dbl(a.y);
    else den = F::one();
    return kind;
}

// a + b from the pair's case and inv = 1/den (ec_pair_den); inv is not read for the cases
// without a division.
template <class F, bool INL>
DEVI ec_affine<F> ec_pair_finish(const ec_affine<F>& a, const ec_affine<F>& b, const u32 kind,
                                 const typename F::T& inv) {
    typedef typename F::T T;
    if (kind == EC_PAIR_B) return b;
    if (kind == EC_PAIR_A) return a;
    ec_affine<F> r;
    if (kind == EC_PAIR_INF) {
        r.x = F::zero();
        r.y = F::zero();
        return r;
    }
    T num;
    if (kind == EC_PAIR_TANGENT) {
        const T xx = ec_s<F, INL>(a.x);
        num = F::add(F::dbl(xx), xx);
    } else {
        num = F::sub(b.y, a.y);
    }
    const T lam = ec_m<F, INL>(num, inv);
    r.x = F::sub(F::sub(ec_s<F, INL>(lam), a.x), b.x);
    r.y = F::sub(ec_m<F, INL>(lam, F::sub(a.x, r.x)), a.y);
    return r;
}

// out[i] = a[i] + b[i] for i < K, one inversion for all (Montgomery's trick): the prefix
// products of the denominators, the inverse of their product, then from the last pair down
// inv_i = inv * prefix_(i-1) and inv *= den_i. out may alias a or b: pair i is read whole before
// out[i] is written, and the pairs below it are not written yet. Both loops stay rolled: the
// prefixes sit in local memory (K residues), and the code holds one copy of each formula.
// INL: inline the products (as ec/xyzz.cuh's hot loops), else FpOps' out-of-line copies.
template <class F, int K, bool INL = false>
DEVI void ec_affine_add_pairs(const ec_affine<F>* a, const ec_affine<F>* b, ec_affine<F>* out) {
    static_assert(K >= 1, "a batch of at least one pair");
    typedef typename F::T T;
    T pre[K];  // pre[i] = den_0 * ... * den_(i-1), i >= 1 (pre[0] unused)
    T acc;
    (void)ec_pair_den<F>(a[0], b[0], acc);
#pragma unroll 1
    for (int i = 1; i < K; i++) {
        T den;
        (void)ec_pair_den<F>(a[i], b[i], den);
        pre[i] = acc;
        acc = ec_m<F, INL>(acc, den);
    }
    // acc is a product of nonzero residues: never zero, so its inverse exists
    T inv = f_inv_window(acc);
#pragma unroll 1
    for (int i = K - 1; i >= 0; i--) {
        const ec_affine<F> p = a[i], q = b[i];
        T den;
        const u32 kind = ec_pair_den<F>(p, q, den);
        T inv_i = inv;  // pair 0: inv is 1/den_0 by now
        if (i > 0) {
            inv_i = ec_m<F, INL>(inv, pre[i]);
            inv = ec_m<F, INL>(inv, den);
        }
        out[i] = ec_pair_finish<F, INL>(p, q, kind, inv_i);
    }
}

#endif // BATON_EC_AFFINE_CUH
