// baton: BLS12-381 base field Fp, 12 x u32 little-endian limbs, Montgomery
// form with R = 2^384 (identical bytes to blst_fp: 6 x u64 little-endian).
// Requires common.cuh, field/mont.cuh.
#ifndef BATON_FIELD_FP_CUH
#define BATON_FIELD_FP_CUH

struct FpParams {
    static constexpr int N = 12;
    static constexpr u32 INV = 0xfffcfffdu;
    __device__ static __forceinline__ u32 inv() { return INV; }  // see FrParams::inv
    __host__ __device__ static constexpr u32 m(int i) {
        constexpr u32 M[12] = {0xffffaaab, 0xb9feffff, 0xb153ffff, 0x1eabfffe, 0xf6b0f624, 0x6730d2a0,
                               0xf38512bf, 0x64774b84, 0x434bacd7, 0x4b1ba7b6, 0x397fe69a, 0x1a0111ea};
        return M[i];
    }
    __host__ __device__ static constexpr u32 one(int i) {
        constexpr u32 M[12] = {0x0002fffd, 0x76090000, 0xc40c0002, 0xebf4000b, 0x53c758ba, 0x5f489857,
                               0x70525745, 0x77ce5853, 0xa256ec6d, 0x5c071a97, 0xfa80e493, 0x15f65ec3};
        return M[i];
    }
    __host__ __device__ static constexpr u32 r2(int i) {
        constexpr u32 M[12] = {0x1c341746, 0xf4df1f34, 0x09d104f1, 0x0a76e6a6, 0x4c95b6d5, 0x8de5476c,
                               0x939d83c0, 0x67eb88a9, 0xb519952d, 0x9a793e85, 0x92cae3aa, 0x11988fe5};
        return M[i];
    }
};

typedef mont_t<FpParams> fp_t;

// FIELD_KARA (0 by default): the out-of-line product (1), and also the out-of-line sum of two
// products (2), by one level of Karatsuba (field/mont.cuh f_mul_kara, f_mul_sum_kara). G1's
// formulas call these copies (ec/g1.cuh FpOps). G2's Fp2 product keeps the limb pairs (in
// ptxas's SASS its three Karatsuba products cut 105 wide multiply-adds but added 256 other
// IMADs and 54 local stores), and so does Fr (the NTT's radix-4 pass: 112 fewer wide
// multiply-adds, 450 more IMAD.X and IMAD.MOV, spills at its 96-register cap).
#ifndef FIELD_KARA
#define FIELD_KARA 0
#endif

// Out-of-line copies (one each in the module) for code that is not hot.
__device__ __noinline__ fp_t fp_mul_noinline(const fp_t a, const fp_t b) {
#if FIELD_KARA >= 1
    return f_mul_kara<FpParams>(a, b);
#else
    return f_mul<FpParams>(a, b);
#endif
}
#if FIELD_SQR == 1
// The dedicated squaring out of line, for the same callers (ec/g1.cuh FpOps::sqr).
__device__ __noinline__ fp_t fp_sqr_noinline(const fp_t a) { return f_sqr_pairs<FpParams>(a); }
#endif
#if FIELD_LAZY == 1
// a*b + c*d reduced once, out of line (ec/g1.cuh FpOps::mul_sum).
__device__ __noinline__ fp_t fp_mul_sum_noinline(const fp_t a, const fp_t b, const fp_t c, const fp_t d) {
#if FIELD_KARA >= 2
    return f_mul_sum_kara<FpParams>(a, b, c, d);
#else
    return f_mul_sum<FpParams>(a, b, c, d);
#endif
}
#endif
__device__ __noinline__ fp_t fp_inv_noinline(const fp_t a) {
    fp_t r = f_one<FpParams>();
    for (int i = FpParams::N - 1; i >= 0; i--) {
        u32 e = FpParams::m(i);
        if (i == 0) e -= 2;  // p's low limb is 0xffffaaab: no borrow
#pragma unroll 1
        for (int b = 31; b >= 0; b--) {
#if FIELD_SQR == 1
            r = fp_sqr_noinline(r);
#else
            r = fp_mul_noinline(r, r);
#endif
            if ((e >> b) & 1) r = fp_mul_noinline(r, a);
        }
    }
    return r;
}

#endif // BATON_FIELD_FP_CUH
