// baton: BLS12-381 scalar field Fr, 8 x u32 little-endian limbs, Montgomery
// form with R = 2^256 (identical bytes to blst_fr / blstrs::Scalar:
// 4 x u64 little-endian).  Requires common.cuh, field/mont.cuh.
#ifndef BATON_FIELD_FR_CUH
#define BATON_FIELD_FR_CUH

// INV read through constant memory (FrParams::inv, below): the same value, opaque to ptxas.
__constant__ u32 FR_INV = 0xffffffffu;

struct FrParams {
    static constexpr int N = 8;
    static constexpr u32 INV = 0xffffffffu;
    // With INV = 2^32 - 1 as an immediate, ptxas knows that a reduction row's q is -t[0] and
    // then emits each product q*m_j as two instructions (IMAD.X and IMAD.HI.U32.X) instead of one
    // IMAD.WIDE.U32.X: 312 against 264 SASS instructions for a loop of f_mul (ptxas 13.0, sm_90).
    // Read from constant memory, q is a plain product (one IMAD with a constant operand).
    __device__ static __forceinline__ u32 inv() { return FR_INV; }
    __host__ __device__ static constexpr u32 m(int i) {
        constexpr u32 M[8] = {0x00000001, 0xffffffff, 0xfffe5bfe, 0x53bda402,
                              0x09a1d805, 0x3339d808, 0x299d7d48, 0x73eda753};
        return M[i];
    }
    __host__ __device__ static constexpr u32 one(int i) {
        constexpr u32 M[8] = {0xfffffffe, 0x00000001, 0x00034802, 0x5884b7fa,
                              0xecbc4ff5, 0x998c4fef, 0xacc5056f, 0x1824b159};
        return M[i];
    }
    __host__ __device__ static constexpr u32 r2(int i) {
        constexpr u32 M[8] = {0xf3f29c6d, 0xc999e990, 0x87925c23, 0x2b6cedcb,
                              0x7254398f, 0x05d31496, 0x9f59ff11, 0x0748d9d9};
        return M[i];
    }
};

typedef mont_t<FrParams> fr_t;

#endif // BATON_FIELD_FR_CUH
