// baton: BLS12-381 G1 (y^2 = x^3 + 4 over Fp).  Requires field/fp.cuh.
//
// g1_affine: byte-identical to blst_p1_affine {fp x; fp y;} (96 bytes);
//            the point at infinity is x = y = 0, as blst encodes it.
// g1_xyzz:   bucket/accumulator form (X, Y, ZZ, ZZZ) with x = X/ZZ,
//            y = Y/ZZZ, ZZ^3 = ZZZ^2; ZZ == 0 means infinity (all-zero bytes
//            are a valid infinity).  192 bytes, all Fp in Montgomery form.
// Formulas: EFD "xyzz" (madd-2008-s, add-2008-s, dbl-2008-s-1, mdbl-2008-s-1),
// with the exceptional cases (infinity, P == Q, P == -Q) handled explicitly.
#ifndef BATON_EC_G1_CUH
#define BATON_EC_G1_CUH

// Fp products used by the curve formulas.  INL = true inlines the whole
// Montgomery product (hot loops); the default calls one out-of-line copy,
// which keeps NVRTC compile time and code size small.
template <bool INL> DEVI fp_t fpm(const fp_t& a, const fp_t& b) {
    if (INL) return f_mul<FpParams>(a, b);
    return fp_mul_noinline(a, b);
}
template <bool INL> DEVI fp_t fps(const fp_t& a) { return fpm<INL>(a, a); }

struct g1_affine {
    fp_t x, y;
};

struct g1_xyzz {
    fp_t x, y, zz, zzz;
};

DEVI bool g1_affine_is_inf(const g1_affine& p) {
    return f_is_zero<FpParams>(p.x) && f_is_zero<FpParams>(p.y);
}

DEVI g1_affine g1_affine_load(const g1_affine* p) {
    g1_affine r;
    r.x = f_ldg<FpParams>(&p->x);
    r.y = f_ldg<FpParams>(&p->y);
    return r;
}

DEVI void g1_xyzz_set_inf(g1_xyzz& p) {
    p.x = f_zero<FpParams>();
    p.y = f_zero<FpParams>();
    p.zz = f_zero<FpParams>();
    p.zzz = f_zero<FpParams>();
}

DEVI g1_xyzz g1_xyzz_inf() {
    g1_xyzz p;
    g1_xyzz_set_inf(p);
    return p;
}

DEVI bool g1_xyzz_is_inf(const g1_xyzz& p) { return f_is_zero<FpParams>(p.zz); }

DEVI g1_xyzz g1_xyzz_from_affine(const g1_affine& a) {
    g1_xyzz p;
    if (g1_affine_is_inf(a)) {
        g1_xyzz_set_inf(p);
    } else {
        p.x = a.x;
        p.y = a.y;
        p.zz = f_one<FpParams>();
        p.zzz = p.zz;
    }
    return p;
}

DEVI g1_xyzz g1_xyzz_load(const g1_xyzz* p) {
    g1_xyzz r;
    r.x = f_load<FpParams>(&p->x);
    r.y = f_load<FpParams>(&p->y);
    r.zz = f_load<FpParams>(&p->zz);
    r.zzz = f_load<FpParams>(&p->zzz);
    return r;
}

DEVI void g1_xyzz_store(g1_xyzz* p, const g1_xyzz& a) {
    f_store<FpParams>(&p->x, a.x);
    f_store<FpParams>(&p->y, a.y);
    f_store<FpParams>(&p->zz, a.zz);
    f_store<FpParams>(&p->zzz, a.zzz);
}

DEVI g1_xyzz g1_xyzz_neg(const g1_xyzz& p) {
    g1_xyzz r = p;
    r.y = f_neg<FpParams>(p.y);
    return r;
}

// 2 * (x, y) for an affine, non-infinity point (mdbl-2008-s-1)
template <bool INL = false>
DEVI g1_xyzz g1_dbl_affine_impl(const fp_t& x, const fp_t& y) {
    g1_xyzz r;
    fp_t U = f_dbl<FpParams>(y);
    fp_t V = fps<INL>(U);
    fp_t W = fpm<INL>(U, V);
    fp_t S = fpm<INL>(x, V);
    fp_t xx = fps<INL>(x);
    fp_t M = f_add<FpParams>(f_dbl<FpParams>(xx), xx);
    fp_t t = f_sub<FpParams>(fps<INL>(M), f_dbl<FpParams>(S));
    r.y = f_sub<FpParams>(fpm<INL>(M, f_sub<FpParams>(S, t)), fpm<INL>(W, y));
    r.x = t;
    r.zz = V;
    r.zzz = W;
    return r;
}

// 2 * p (dbl-2008-s-1, a = 0); infinity stays infinity (ZZ3 = V*ZZ1 = 0)
template <bool INL = false>
DEVI g1_xyzz g1_dbl_impl(const g1_xyzz& p) {
    g1_xyzz r;
    fp_t U = f_dbl<FpParams>(p.y);
    fp_t V = fps<INL>(U);
    fp_t W = fpm<INL>(U, V);
    fp_t S = fpm<INL>(p.x, V);
    fp_t xx = fps<INL>(p.x);
    fp_t M = f_add<FpParams>(f_dbl<FpParams>(xx), xx);
    fp_t t = f_sub<FpParams>(fps<INL>(M), f_dbl<FpParams>(S));
    r.y = f_sub<FpParams>(fpm<INL>(M, f_sub<FpParams>(S, t)), fpm<INL>(W, p.y));
    r.x = t;
    r.zz = fpm<INL>(V, p.zz);
    r.zzz = fpm<INL>(W, p.zzz);
    return r;
}


// ---- out-of-line instances and the public entry points ---------------------
__device__ __noinline__ g1_xyzz g1_dbl_affine_noinline(const fp_t x, const fp_t y) {
    return g1_dbl_affine_impl<false>(x, y);
}
__device__ __noinline__ g1_xyzz g1_dbl_noinline(const g1_xyzz p) { return g1_dbl_impl<false>(p); }

DEVI g1_xyzz g1_dbl_affine(const fp_t& x, const fp_t& y) { return g1_dbl_affine_noinline(x, y); }
DEVI g1_xyzz g1_dbl(const g1_xyzz& p) { return g1_dbl_noinline(p); }

// acc += (x2, y2) affine, non-infinity (madd-2008-s)
template <bool INL = false>
DEVI void g1_add_affine_xy_impl(g1_xyzz& acc, const fp_t& x2, const fp_t& y2) {
    if (g1_xyzz_is_inf(acc)) {
        acc.x = x2;
        acc.y = y2;
        acc.zz = f_one<FpParams>();
        acc.zzz = acc.zz;
        return;
    }
    fp_t U2 = fpm<INL>(x2, acc.zz);
    fp_t S2 = fpm<INL>(y2, acc.zzz);
    fp_t P = f_sub<FpParams>(U2, acc.x);
    fp_t R = f_sub<FpParams>(S2, acc.y);
    if (f_is_zero<FpParams>(P)) {
        if (f_is_zero<FpParams>(R)) acc = g1_dbl_affine(x2, y2);
        else g1_xyzz_set_inf(acc);
        return;
    }
    fp_t PP = fps<INL>(P);
    fp_t PPP = fpm<INL>(P, PP);
    fp_t Q = fpm<INL>(acc.x, PP);
    fp_t X3 = f_sub<FpParams>(f_sub<FpParams>(fps<INL>(R), PPP), f_dbl<FpParams>(Q));
    acc.y = f_sub<FpParams>(fpm<INL>(R, f_sub<FpParams>(Q, X3)), fpm<INL>(acc.y, PPP));
    acc.x = X3;
    acc.zz = fpm<INL>(acc.zz, PP);
    acc.zzz = fpm<INL>(acc.zzz, PPP);
}


__device__ __noinline__ g1_xyzz g1_add_affine_xy_noinline(g1_xyzz acc, const fp_t x2, const fp_t y2) {
    g1_add_affine_xy_impl<false>(acc, x2, y2);
    return acc;
}
// acc += (x2, y2), affine and not infinity.  INL: inline copy for hot loops.
template <bool INL = false> DEVI void g1_add_affine_xy(g1_xyzz& acc, const fp_t& x2, const fp_t& y2) {
    if (INL) g1_add_affine_xy_impl<true>(acc, x2, y2);
    else acc = g1_add_affine_xy_noinline(acc, x2, y2);
}

// acc += a (a may be infinity)
template <bool INL = false>
DEVI void g1_add_affine(g1_xyzz& acc, const g1_affine& a) {
    if (g1_affine_is_inf(a)) return;
    g1_add_affine_xy<INL>(acc, a.x, a.y);
}

// acc += q (add-2008-s)
template <bool INL = false>
DEVI void g1_add_impl(g1_xyzz& acc, const g1_xyzz& q) {
    if (g1_xyzz_is_inf(q)) return;
    if (g1_xyzz_is_inf(acc)) {
        acc = q;
        return;
    }
    fp_t U1 = fpm<INL>(acc.x, q.zz);
    fp_t U2 = fpm<INL>(q.x, acc.zz);
    fp_t S1 = fpm<INL>(acc.y, q.zzz);
    fp_t S2 = fpm<INL>(q.y, acc.zzz);
    fp_t P = f_sub<FpParams>(U2, U1);
    fp_t R = f_sub<FpParams>(S2, S1);
    if (f_is_zero<FpParams>(P)) {
        if (f_is_zero<FpParams>(R)) acc = g1_dbl(acc);
        else g1_xyzz_set_inf(acc);
        return;
    }
    fp_t PP = fps<INL>(P);
    fp_t PPP = fpm<INL>(P, PP);
    fp_t Q = fpm<INL>(U1, PP);
    fp_t X3 = f_sub<FpParams>(f_sub<FpParams>(fps<INL>(R), PPP), f_dbl<FpParams>(Q));
    acc.y = f_sub<FpParams>(fpm<INL>(R, f_sub<FpParams>(Q, X3)), fpm<INL>(S1, PPP));
    acc.x = X3;
    acc.zz = fpm<INL>(fpm<INL>(acc.zz, q.zz), PP);
    acc.zzz = fpm<INL>(fpm<INL>(acc.zzz, q.zzz), PPP);
}


__device__ __noinline__ g1_xyzz g1_add_noinline(g1_xyzz acc, const g1_xyzz q) {
    g1_add_impl<false>(acc, q);
    return acc;
}
// acc += q (XYZZ + XYZZ)
template <bool INL = false> DEVI void g1_add(g1_xyzz& acc, const g1_xyzz& q) {
    if (INL) g1_add_impl<true>(acc, q);
    else acc = g1_add_noinline(acc, q);
}

// affine (x, y) from XYZZ by field inversion (test/setup helper; slow)
template <bool INL = false>
DEVI g1_affine g1_xyzz_to_affine(const g1_xyzz& p) {
    g1_affine r;
    if (g1_xyzz_is_inf(p)) {
        r.x = f_zero<FpParams>();
        r.y = f_zero<FpParams>();
        return r;
    }
        r.x = fpm<INL>(p.x, fp_inv_noinline(p.zz));
    r.y = fpm<INL>(p.y, fp_inv_noinline(p.zzz));
    return r;
}

#endif // BATON_EC_G1_CUH
