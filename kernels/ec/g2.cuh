// baton: BLS12-381 G2 (y^2 = x^3 + 4(1 + u) over Fp2 = Fp[u]/(u^2 + 1)).
// Requires field/fp.cuh, ec/xyzz.cuh.
//
// fp2_t:     c0 + c1*u, byte-identical to blst_fp2 {fp fp[2];} (96 bytes).
// g2_affine: byte-identical to blst_p2_affine {fp2 x; fp2 y;} (192 bytes).
// g2_xyzz:   the XYZZ bucket form of ec/xyzz.cuh (384 bytes).
#ifndef BATON_EC_G2_CUH
#define BATON_EC_G2_CUH

struct fp2_t {
    fp_t c0, c1;
};

// (a0 + a1 u)(b0 + b1 u) = (a0 b0 - a1 b1) + ((a0 + a1)(b0 + b1) - a0 b0 - a1 b1) u:
// three Fp products (Karatsuba), one out-of-line copy for all callers.
__device__ __noinline__ fp2_t fp2_mul_noinline(const fp2_t a, const fp2_t b) {
    const fp_t t0 = f_mul<FpParams>(a.c0, b.c0);
    const fp_t t1 = f_mul<FpParams>(a.c1, b.c1);
    const fp_t t2 = f_mul<FpParams>(f_add<FpParams>(a.c0, a.c1), f_add<FpParams>(b.c0, b.c1));
    fp2_t r;
    r.c0 = f_sub<FpParams>(t0, t1);
    r.c1 = f_sub<FpParams>(f_sub<FpParams>(t2, t0), t1);
    return r;
}

// Fp2 as the coordinate field of ec/xyzz.cuh.
struct Fp2Ops {
    typedef fp2_t T;
    static DEVI T zero() { return T{f_zero<FpParams>(), f_zero<FpParams>()}; }
    static DEVI T one() { return T{f_one<FpParams>(), f_zero<FpParams>()}; }
    static DEVI bool is_zero(const T& a) { return f_is_zero<FpParams>(a.c0) && f_is_zero<FpParams>(a.c1); }
    static DEVI T add(const T& a, const T& b) { return T{f_add<FpParams>(a.c0, b.c0), f_add<FpParams>(a.c1, b.c1)}; }
    static DEVI T sub(const T& a, const T& b) { return T{f_sub<FpParams>(a.c0, b.c0), f_sub<FpParams>(a.c1, b.c1)}; }
    static DEVI T dbl(const T& a) { return add(a, a); }
    static DEVI T neg(const T& a) { return T{f_neg<FpParams>(a.c0), f_neg<FpParams>(a.c1)}; }
    static DEVI T cneg(const T& a, bool n) { return T{f_cneg<FpParams>(a.c0, n), f_cneg<FpParams>(a.c1, n)}; }
    // G2 work is a small share of a proof: always the out-of-line product.
    template <bool INL> static DEVI T mul(const T& a, const T& b) { return fp2_mul_noinline(a, b); }
#if FIELD_SQR == 1
    // Squarings stay the three-product Fp2 product: a two-product squaring (its own
    // out-of-line function) made msm_accumulate_g2 1.08x slower on the H200
    // (docs/bench-log/kernels-2026-12-03.md, "Where a partition's time goes").
    template <bool INL> static DEVI T sqr(const T& a) { return fp2_mul_noinline(a, a); }
#endif
    // FIELD_LAZY's a*b + c*d: the two Fp2 products summed (no once-reduced Fp2 form).
    template <bool INL> static DEVI T mul_sum(const T& a, const T& b, const T& c, const T& d) {
        return add(fp2_mul_noinline(a, b), fp2_mul_noinline(c, d));
    }
    static DEVI T ldg(const T* p) { return T{f_ldg<FpParams>(&p->c0), f_ldg<FpParams>(&p->c1)}; }
    static DEVI T load(const T* p) { return T{f_load<FpParams>(&p->c0), f_load<FpParams>(&p->c1)}; }
    static DEVI void store(T* p, const T& a) {
        f_store<FpParams>(&p->c0, a.c0);
        f_store<FpParams>(&p->c1, a.c1);
    }
};

typedef ec_affine<Fp2Ops> g2_affine;
typedef ec_xyzz<Fp2Ops> g2_xyzz;

#endif // BATON_EC_G2_CUH
