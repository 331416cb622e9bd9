// baton: BLS12-381 G1 (y^2 = x^3 + 4 over Fp).  Requires field/fp.cuh,
// ec/xyzz.cuh.
//
// g1_affine: byte-identical to blst_p1_affine {fp x; fp y;} (96 bytes).
// g1_xyzz:   the XYZZ bucket form of ec/xyzz.cuh (192 bytes).
#ifndef BATON_EC_G1_CUH
#define BATON_EC_G1_CUH

// MSM_ACC_MUL (`gpu.msm_mul`): how the G1 MSM's hot mixed additions (bucket accumulation,
// sums of the ones) compute their products. 0: inlined f_mul; 1: the accumulation calls the
// one out-of-line copy (msm.cu); 2: inlined f_mul_rolled (small code, the same rows).
// Defaults to 0 in ec/xyzz.cuh, its first user.

// Fp as the coordinate field of ec/xyzz.cuh.
struct FpOps {
    typedef fp_t T;
    static DEVI T zero() { return f_zero<FpParams>(); }
    static DEVI T one() { return f_one<FpParams>(); }
    static DEVI bool is_zero(const T& a) { return f_is_zero<FpParams>(a); }
    static DEVI T add(const T& a, const T& b) { return f_add<FpParams>(a, b); }
    static DEVI T sub(const T& a, const T& b) { return f_sub<FpParams>(a, b); }
    static DEVI T dbl(const T& a) { return f_dbl<FpParams>(a); }
    static DEVI T neg(const T& a) { return f_neg<FpParams>(a); }
    static DEVI T cneg(const T& a, bool n) { return f_cneg<FpParams>(a, n); }
    template <bool INL> static DEVI T mul(const T& a, const T& b) {
#if MSM_ACC_MUL == 2
        if (INL) return f_mul_rolled<FpParams>(a, b);
#else
        if (INL) return f_mul<FpParams>(a, b);
#endif
        return fp_mul_noinline(a, b);
    }
#if FIELD_SQR == 1
    // FIELD_SQR: squarings by f_sqr_pairs, inline or the one out-of-line copy as mul picks;
    // MSM_ACC_MUL == 2 keeps its rolled product (small code) for squarings too.
    template <bool INL> static DEVI T sqr(const T& a) {
#if MSM_ACC_MUL == 2
        if (INL) return f_mul_rolled<FpParams>(a, a);
#else
        if (INL) return f_sqr<FpParams>(a);
#endif
        return fp_sqr_noinline(a);
    }
#endif
#if FIELD_LAZY == 1
    // a*b + c*d reduced once (ec/xyzz.cuh ec_mul_sub), inline or the one out-of-line copy as
    // mul picks; the rolled build (small code) calls it.
    template <bool INL> static DEVI T mul_sum(const T& a, const T& b, const T& c, const T& d) {
        if (INL && MSM_ACC_MUL != 2) return f_mul_sum<FpParams>(a, b, c, d);
        return fp_mul_sum_noinline(a, b, c, d);
    }
#endif
    static DEVI T ldg(const T* p) { return f_ldg<FpParams>(p); }
    static DEVI T load(const T* p) { return f_load<FpParams>(p); }
    static DEVI void store(T* p, const T& a) { f_store<FpParams>(p, a); }
};

// Fp products for code outside the curve formulas (tests, setup helpers).
template <bool INL> DEVI fp_t fpm(const fp_t& a, const fp_t& b) { return FpOps::mul<INL>(a, b); }
#if FIELD_SQR == 1
template <bool INL> DEVI fp_t fps(const fp_t& a) { return FpOps::sqr<INL>(a); }
#else
template <bool INL> DEVI fp_t fps(const fp_t& a) { return FpOps::mul<INL>(a, a); }
#endif

typedef ec_affine<FpOps> g1_affine;
typedef ec_xyzz<FpOps> g1_xyzz;

DEVI g1_affine g1_affine_load(const g1_affine* p) { return ec_affine_load(p); }
DEVI void g1_xyzz_set_inf(g1_xyzz& p) { ec_set_inf(p); }
DEVI g1_xyzz g1_xyzz_inf() { return ec_inf<FpOps>(); }
DEVI g1_xyzz g1_xyzz_from_affine(const g1_affine& a) { return ec_from_affine(a); }
DEVI g1_xyzz g1_xyzz_load(const g1_xyzz* p) { return ec_load(p); }
DEVI void g1_xyzz_store(g1_xyzz* p, const g1_xyzz& a) { ec_store(p, a); }
DEVI g1_xyzz g1_xyzz_neg(const g1_xyzz& p) { return ec_neg(p); }
DEVI g1_xyzz g1_dbl(const g1_xyzz& p) { return ec_dbl(p); }
template <bool INL = false> DEVI void g1_add_affine(g1_xyzz& acc, const g1_affine& a) {
    ec_add_affine<FpOps, INL>(acc, a);
}
template <bool INL = false> DEVI void g1_add(g1_xyzz& acc, const g1_xyzz& q) { ec_add<FpOps, INL>(acc, q); }

#endif // BATON_EC_G1_CUH
