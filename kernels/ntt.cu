// baton: NTT entry points (thin wrappers; see ntt/ntt.cuh and NOTES.md).
#ifndef BATON_NTT_CU
#define BATON_NTT_CU

extern "C" __global__ void __launch_bounds__(512) ntt_pass(fr_t* data, const fr_t* tw, u32 log_n, u32 log_tw,
                                                            u32 tw_split, u32 s, u32 t, u32 c, u32 flags,
                                                            const fr_t* scale_tab) {
    ntt_pass_dev<false>(data, NttTw{tw, log_tw, tw_split}, log_n, s, t, c, flags, scale_tab);
}

// NTT_R4_MAXREG (`gpu.ntt_regs`): 0 leaves ntt_pass_r4's registers to ptxas under its 256-thread
// bound (118); N caps them at N (`__maxnreg__`, which excludes `__launch_bounds__`), so that more
// 128-thread blocks fit a multiprocessor (96, the default: five instead of four, 8 bytes
// spilled; ptxas 13.0).
#ifndef NTT_R4_MAXREG
#define NTT_R4_MAXREG 96
#endif
#if NTT_R4_MAXREG > 0
#define NTT_R4_BOUNDS __maxnreg__(NTT_R4_MAXREG)
#else
#define NTT_R4_BOUNDS __launch_bounds__(256)
#endif
extern "C" __global__ void NTT_R4_BOUNDS ntt_pass_r4(fr_t* data, const fr_t* tw, u32 log_n, u32 log_tw,
                                                               u32 tw_split, u32 s, u32 t, u32 c, u32 flags,
                                                               const fr_t* scale_tab) {
    ntt_pass_dev<true>(data, NttTw{tw, log_tw, tw_split}, log_n, s, t, c, flags, scale_tab);
}

extern "C" __global__ void ntt_coset_h(fr_t* a, const fr_t* b, const fr_t* c, const fr_t* zinv, u32 n) {
    ntt_coset_h_dev(a, b, c, zinv, n);
}

extern "C" __global__ void ntt_coset_h2(fr_t* x, const fr_t* y, const fr_t* zinv, u32 n, u32 step) {
    ntt_coset_h2_dev(x, y, zinv, n, step);
}

extern "C" __global__ void fr_scale_tab(fr_t* data, u32 log_n, const fr_t* tab, u32 flags) {
    fr_scale_tab_dev(data, log_n, tab, flags);
}

extern "C" __global__ void fr_scale(fr_t* data, u32 n, const fr_t* s) { fr_scale_dev(data, n, s); }

extern "C" __global__ void fr_bitrev(fr_t* out, const fr_t* in, u32 log_n) { fr_bitrev_dev(out, in, log_n); }

extern "C" __global__ void fr_bitrev_inplace(fr_t* data, u32 log_n) { fr_bitrev_inplace_dev(data, log_n); }

extern "C" __global__ void fr_powers(fr_t* out, u32 count, const fr_t* sq, const fr_t* cptr) {
    fr_powers_dev(out, count, sq, cptr);
}

#endif // BATON_NTT_CU
