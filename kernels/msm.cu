// baton: MSM entry points (thin wrappers; see msm/msm.cuh and NOTES.md).
#ifndef BATON_MSM_CU
#define BATON_MSM_CU

extern "C" __global__ void msm_count(const fr_t* scalars, u32 n, u32 c, u32 nwin, u32* counts) {
    msm_digits_dev(scalars, n, c, nwin, counts, 0, 0, false);
}

extern "C" __global__ void msm_scatter(const fr_t* scalars, u32 n, u32 c, u32 nwin, u32* counts, u32* keys,
                                       u32* vals) {
    msm_digits_dev(scalars, n, c, nwin, counts, keys, vals, true);
}

extern "C" __global__ void __launch_bounds__(SCAN_THREADS) scan_block(u32* data, u32 m, u32* block_sums) {
    scan_block_dev(data, m, block_sums);
}

extern "C" __global__ void __launch_bounds__(SCAN_THREADS) scan_add(u32* data, u32 m, const u32* block_sums) {
    scan_add_dev(data, m, block_sums);
}

// msm_accumulate: 128 threads per block; MSM_ACC_MINB caps registers so that
// that many blocks fit on one SM (tuning knob, see NOTES.md).
#ifndef MSM_ACC_MINB
#define MSM_ACC_MINB 4
#endif
extern "C" __global__ void __launch_bounds__(128, MSM_ACC_MINB) msm_accumulate(const g1_affine* bases, const u32* keys, const u32* vals,
                                          const u32* starts, u32 nbk, u32 S, g1_xyzz* buckets, g1_xyzz* pfirst,
                                          g1_xyzz* plast) {
    msm_accumulate_dev(bases, keys, vals, starts, nbk, S, buckets, pfirst, plast);
}

extern "C" __global__ void msm_finalize(const u32* starts, u32 nbk, u32 S, g1_xyzz* buckets, const g1_xyzz* pfirst,
                                        const g1_xyzz* plast) {
    msm_finalize_dev(starts, nbk, S, buckets, pfirst, plast);
}

extern "C" __global__ void msm_reduce_level(const g1_xyzz* Tin, const g1_xyzz* Rin, u32 nwin, u32 M, u32 lg,
                                            g1_xyzz* Tout, g1_xyzz* Rout) {
    msm_reduce_level_dev(Tin, Rin, nwin, M, lg, Tout, Rout);
}

extern "C" __global__ void __launch_bounds__(MSM_SUM_THREADS) msm_ones(const g1_affine* bases, const fr_t* scalars,
                                                                        u32 n, g1_xyzz* partials) {
    msm_ones_dev(bases, scalars, n, partials);
}

extern "C" __global__ void __launch_bounds__(MSM_SUM_THREADS) g1_sum(const g1_xyzz* in, u32 count, g1_xyzz* out) {
    g1_sum_dev(in, count, out);
}

#endif // BATON_MSM_CU
