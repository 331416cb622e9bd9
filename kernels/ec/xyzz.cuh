// baton: short-Weierstrass (a = 0) point arithmetic in XYZZ coordinates,
// generic over the coordinate field, for G1 (over Fp) and G2 (over Fp2).
//
// A field-ops class F provides:
//   typedef ... T;                                  the element type
//   static T zero(), one();  static bool is_zero(const T&);
//   static T add(a, b), sub(a, b), dbl(a), neg(a), cneg(a, bool);
//   template <bool INL> static T mul(a, b);         INL = inline the product
//   template <bool INL> static T sqr(a);            only with FIELD_SQR == 1 (field/mont.cuh)
//   static T ldg(const T*), load(const T*);  static void store(T*, const T&);
//
// ec_affine<F>: {x, y}, byte-identical to blst's affine points; the point at
//               infinity is all zero, as blst encodes it.
// ec_xyzz<F>:   (X, Y, ZZ, ZZZ) with x = X/ZZ, y = Y/ZZZ, ZZ^3 = ZZZ^2;
//               ZZ == 0 means infinity (all-zero bytes are a valid infinity).
// Formulas: EFD "xyzz" (madd-2008-s, add-2008-s, dbl-2008-s-1,
// mdbl-2008-s-1), the exceptional cases (infinity, P == Q, P == -Q) handled
// explicitly.  INL = true inlines every product (hot loops); the default
// goes through one out-of-line copy per operation, which keeps NVRTC compile
// time and code size small.
#ifndef BATON_EC_XYZZ_CUH
#define BATON_EC_XYZZ_CUH

// `gpu.msm_mul` (see ec/g1.cuh); 1 reorders the out-of-line mixed addition below.
#ifndef MSM_ACC_MUL
#define MSM_ACC_MUL 0
#endif

template <class F> struct ec_affine {
    typename F::T x, y;
};

template <class F> struct ec_xyzz {
    typename F::T x, y, zz, zzz;
};

template <class F, bool INL> DEVI typename F::T ec_m(const typename F::T& a, const typename F::T& b) {
    return F::template mul<INL>(a, b);
}
#if FIELD_SQR == 1
template <class F, bool INL> DEVI typename F::T ec_s(const typename F::T& a) { return F::template sqr<INL>(a); }
#else
template <class F, bool INL> DEVI typename F::T ec_s(const typename F::T& a) { return F::template mul<INL>(a, a); }
#endif

// FIELD_LAZY (`gpu.field_lazy = "sum"`, field/mont.cuh): the formulas' one difference of two
// products (Y3 of every addition and doubling) as a sum of products reduced once, F::mul_sum
// (f_mul_sum for Fp; G2's Fp2 sums its two products).
template <class F, bool INL>
DEVI typename F::T ec_mul_sub(const typename F::T& a, const typename F::T& b, const typename F::T& c,
                              const typename F::T& d) {
#if FIELD_LAZY == 1
    return F::template mul_sum<INL>(a, b, c, F::neg(d));
#else
    return F::sub(ec_m<F, INL>(a, b), ec_m<F, INL>(c, d));
#endif
}

template <class F> DEVI bool ec_affine_is_inf(const ec_affine<F>& p) { return F::is_zero(p.x) && F::is_zero(p.y); }

template <class F> DEVI ec_affine<F> ec_affine_load(const ec_affine<F>* p) {
    ec_affine<F> r;
    r.x = F::ldg(&p->x);
    r.y = F::ldg(&p->y);
    return r;
}

template <class F> DEVI void ec_set_inf(ec_xyzz<F>& p) {
    p.x = F::zero();
    p.y = F::zero();
    p.zz = F::zero();
    p.zzz = F::zero();
}

template <class F> DEVI ec_xyzz<F> ec_inf() {
    ec_xyzz<F> p;
    ec_set_inf(p);
    return p;
}

template <class F> DEVI bool ec_is_inf(const ec_xyzz<F>& p) { return F::is_zero(p.zz); }

template <class F> DEVI ec_xyzz<F> ec_from_affine(const ec_affine<F>& a) {
    ec_xyzz<F> p;
    if (ec_affine_is_inf(a)) {
        ec_set_inf(p);
    } else {
        p.x = a.x;
        p.y = a.y;
        p.zz = F::one();
        p.zzz = p.zz;
    }
    return p;
}

template <class F> DEVI ec_xyzz<F> ec_load(const ec_xyzz<F>* p) {
    ec_xyzz<F> r;
    r.x = F::load(&p->x);
    r.y = F::load(&p->y);
    r.zz = F::load(&p->zz);
    r.zzz = F::load(&p->zzz);
    return r;
}

template <class F> DEVI void ec_store(ec_xyzz<F>* p, const ec_xyzz<F>& a) {
    F::store(&p->x, a.x);
    F::store(&p->y, a.y);
    F::store(&p->zz, a.zz);
    F::store(&p->zzz, a.zzz);
}

template <class F> DEVI ec_xyzz<F> ec_neg(const ec_xyzz<F>& p) {
    ec_xyzz<F> r = p;
    r.y = F::neg(p.y);
    return r;
}

// 2 * (x, y) for an affine, non-infinity point (mdbl-2008-s-1)
template <class F, bool INL>
DEVI ec_xyzz<F> ec_dbl_affine_impl(const typename F::T& x, const typename F::T& y) {
    typedef typename F::T T;
    ec_xyzz<F> r;
    T U = F::dbl(y);
    T V = ec_s<F, INL>(U);
    T W = ec_m<F, INL>(U, V);
    T S = ec_m<F, INL>(x, V);
    T xx = ec_s<F, INL>(x);
    T M = F::add(F::dbl(xx), xx);
    T t = F::sub(ec_s<F, INL>(M), F::dbl(S));
    r.y = ec_mul_sub<F, INL>(M, F::sub(S, t), W, y);
    r.x = t;
    r.zz = V;
    r.zzz = W;
    return r;
}

// 2 * p (dbl-2008-s-1, a = 0); infinity stays infinity (ZZ3 = V*ZZ1 = 0)
template <class F, bool INL> DEVI ec_xyzz<F> ec_dbl_impl(const ec_xyzz<F>& p) {
    typedef typename F::T T;
    ec_xyzz<F> r;
    T U = F::dbl(p.y);
    T V = ec_s<F, INL>(U);
    T W = ec_m<F, INL>(U, V);
    T S = ec_m<F, INL>(p.x, V);
    T xx = ec_s<F, INL>(p.x);
    T M = F::add(F::dbl(xx), xx);
    T t = F::sub(ec_s<F, INL>(M), F::dbl(S));
    r.y = ec_mul_sub<F, INL>(M, F::sub(S, t), W, p.y);
    r.x = t;
    r.zz = ec_m<F, INL>(V, p.zz);
    r.zzz = ec_m<F, INL>(W, p.zzz);
    return r;
}

template <class F>
__device__ __noinline__ ec_xyzz<F> ec_dbl_affine_noinline(const typename F::T x, const typename F::T y) {
    return ec_dbl_affine_impl<F, false>(x, y);
}
template <class F> __device__ __noinline__ ec_xyzz<F> ec_dbl_noinline(const ec_xyzz<F> p) {
    return ec_dbl_impl<F, false>(p);
}
template <class F> DEVI ec_xyzz<F> ec_dbl(const ec_xyzz<F>& p) { return ec_dbl_noinline<F>(p); }

// acc += (x2, y2) affine, non-infinity (madd-2008-s)
template <class F, bool INL>
DEVI void ec_add_affine_xy_impl(ec_xyzz<F>& acc, const typename F::T& x2, const typename F::T& y2) {
    typedef typename F::T T;
    if (ec_is_inf(acc)) {
        acc.x = x2;
        acc.y = y2;
        acc.zz = F::one();
        acc.zzz = acc.zz;
        return;
    }
    T U2 = ec_m<F, INL>(x2, acc.zz);
    T S2 = ec_m<F, INL>(y2, acc.zzz);
    T P = F::sub(U2, acc.x);
    T R = F::sub(S2, acc.y);
    if (F::is_zero(P)) {
        if (F::is_zero(R)) acc = ec_dbl_affine_noinline<F>(x2, y2);
        else ec_set_inf(acc);
        return;
    }
    T PP = ec_s<F, INL>(P);
    T PPP = ec_m<F, INL>(P, PP);
    T Q = ec_m<F, INL>(acc.x, PP);
#if MSM_ACC_MUL == 1
    if (!INL) {
        // `gpu.msm_mul = "call"`: the same products, each factor's last use as early as it can
        // come, so fewer values stay live across the calls (inlined code keeps the order
        // below, which the default's machine code was measured with).
        acc.zz = ec_m<F, INL>(acc.zz, PP);
        T X3 = F::sub(F::sub(ec_s<F, INL>(R), PPP), F::dbl(Q));
#if FIELD_LAZY == 1
        acc.zzz = ec_m<F, INL>(acc.zzz, PPP);
        acc.y = ec_mul_sub<F, INL>(R, F::sub(Q, X3), acc.y, PPP);
#else
        T YP = ec_m<F, INL>(acc.y, PPP);
        acc.zzz = ec_m<F, INL>(acc.zzz, PPP);
        acc.y = F::sub(ec_m<F, INL>(R, F::sub(Q, X3)), YP);
#endif
        acc.x = X3;
        return;
    }
#endif
    T X3 = F::sub(F::sub(ec_s<F, INL>(R), PPP), F::dbl(Q));
    acc.y = ec_mul_sub<F, INL>(R, F::sub(Q, X3), acc.y, PPP);
    acc.x = X3;
    acc.zz = ec_m<F, INL>(acc.zz, PP);
    acc.zzz = ec_m<F, INL>(acc.zzz, PPP);
}

template <class F>
__device__ __noinline__ ec_xyzz<F> ec_add_affine_xy_noinline(ec_xyzz<F> acc, const typename F::T x2,
                                                             const typename F::T y2) {
    ec_add_affine_xy_impl<F, false>(acc, x2, y2);
    return acc;
}
// acc += (x2, y2), affine and not infinity.  INL: inline copy for hot loops.
template <class F, bool INL = false>
DEVI void ec_add_affine_xy(ec_xyzz<F>& acc, const typename F::T& x2, const typename F::T& y2) {
    if (INL) ec_add_affine_xy_impl<F, true>(acc, x2, y2);
    else acc = ec_add_affine_xy_noinline<F>(acc, x2, y2);
}

// acc += a (a may be infinity)
template <class F, bool INL = false> DEVI void ec_add_affine(ec_xyzz<F>& acc, const ec_affine<F>& a) {
    if (ec_affine_is_inf(a)) return;
    ec_add_affine_xy<F, INL>(acc, a.x, a.y);
}

// acc += q (add-2008-s)
template <class F, bool INL> DEVI void ec_add_impl(ec_xyzz<F>& acc, const ec_xyzz<F>& q) {
    typedef typename F::T T;
    if (ec_is_inf(q)) return;
    if (ec_is_inf(acc)) {
        acc = q;
        return;
    }
    T U1 = ec_m<F, INL>(acc.x, q.zz);
    T U2 = ec_m<F, INL>(q.x, acc.zz);
    T S1 = ec_m<F, INL>(acc.y, q.zzz);
    T S2 = ec_m<F, INL>(q.y, acc.zzz);
    T P = F::sub(U2, U1);
    T R = F::sub(S2, S1);
    if (F::is_zero(P)) {
        if (F::is_zero(R)) acc = ec_dbl<F>(acc);
        else ec_set_inf(acc);
        return;
    }
    T PP = ec_s<F, INL>(P);
    T PPP = ec_m<F, INL>(P, PP);
    T Q = ec_m<F, INL>(U1, PP);
    T X3 = F::sub(F::sub(ec_s<F, INL>(R), PPP), F::dbl(Q));
    acc.y = ec_mul_sub<F, INL>(R, F::sub(Q, X3), S1, PPP);
    acc.x = X3;
    acc.zz = ec_m<F, INL>(ec_m<F, INL>(acc.zz, q.zz), PP);
    acc.zzz = ec_m<F, INL>(ec_m<F, INL>(acc.zzz, q.zzz), PPP);
}

template <class F> __device__ __noinline__ ec_xyzz<F> ec_add_noinline(ec_xyzz<F> acc, const ec_xyzz<F> q) {
    ec_add_impl<F, false>(acc, q);
    return acc;
}
// acc += q (XYZZ + XYZZ)
template <class F, bool INL = false> DEVI void ec_add(ec_xyzz<F>& acc, const ec_xyzz<F>& q) {
    if (INL) ec_add_impl<F, true>(acc, q);
    else acc = ec_add_noinline<F>(acc, q);
}

#endif // BATON_EC_XYZZ_CUH
