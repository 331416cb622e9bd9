// baton: MSM entry points (thin wrappers; see msm/msm.cuh and NOTES.md).
#ifndef BATON_MSM_CU
#define BATON_MSM_CU

extern "C" __global__ void msm_count(const fr_t* scalars, u32 n, u32 c, u32 nwin, u32* counts) {
    msm_digits_dev(scalars, n, c, nwin, counts, 0, 0, false);
}

extern "C" __global__ void msm_nontrivial(const fr_t* scalars, u32 n, u32* count) {
    msm_nontrivial_dev(scalars, n, count);
}

extern "C" __global__ void msm_seg_keys(const u32* starts, u32 nbk, u32 S, u32* segkeys) {
    msm_seg_keys_dev(starts, nbk, S, segkeys);
}

extern "C" __global__ void msm_scatter(const fr_t* scalars, u32 n, u32 c, u32 nwin, u32* counts, u32* keys,
                                       u32* vals) {
    msm_digits_dev(scalars, n, c, nwin, counts, keys, vals, true);
}

// The same entries a window at a time: a grid of nwin times msm_scatter's (launch::msm_digits).
extern "C" __global__ void msm_scatter_window(const fr_t* scalars, u32 n, u32 c, u32 nwin, u32* counts,
                                              u32* keys, u32* vals) {
    msm_scatter_window_dev(scalars, n, c, nwin, counts, keys, vals);
}

// Stored digits (msm/msm.cuh): the count pass that also writes them, and the window-order
// scatter that reads them (a grid of nwin * parts times msm_count's; msm_scatter's arguments
// with the digits in place of the scalars, and the parts each window is written in).
extern "C" __global__ void msm_count_store(const fr_t* scalars, u32 n, u32 c, u32 nwin, u32* counts, u32* digits) {
    msm_count_store_dev(scalars, n, c, nwin, counts, digits);
}

extern "C" __global__ void msm_scatter_stored(const u32* digits, u32 n, u32 c, u32 nwin, u32* counts,
                                              u32* keys, u32* vals, u32 parts) {
    msm_scatter_stored_dev(digits, n, c, nwin, parts, counts, keys, vals);
}

extern "C" __global__ void __launch_bounds__(SCAN_THREADS) scan_block(u32* data, u32 m, u32* block_sums) {
    scan_block_dev(data, m, block_sums);
}

extern "C" __global__ void __launch_bounds__(SCAN_THREADS) scan_add(u32* data, u32 m, const u32* block_sums) {
    scan_add_dev(data, m, block_sums);
}

// Batch-affine halving rounds of the sorted entries (G1; msm/pairs.cuh): the new buckets'
// counts for the scan, then one round (blocks of MSM_PAIRS_THREADS).
extern "C" __global__ void msm_pairs_count(const u32* starts, u32 nbk, u32* ncounts) {
    msm_pairs_count_dev(starts, nbk, ncounts);
}

extern "C" __global__ void __launch_bounds__(MSM_PAIRS_THREADS)
    msm_pairs_round(const g1_affine* src, const u32* vals, const u32* starts, const u32* nstarts, u32 nbk,
                    g1_affine* dst, u32* nkeys, u32* nvals) {
    msm_pairs_round_dev(src, vals, starts, nstarts, nbk, dst, nkeys, nvals);
}

// The same round in three kernels (`gpu.experimental.msm_affine_split`): a thread an output for
// the denominators and the sums, a few blocks of MSM_PAIRS_THREADS a multiprocessor for the
// inversion between them (pre: the points buffer, as scratch).
extern "C" __global__ void msm_pairs_den(const g1_affine* src, const u32* vals, const u32* starts,
                                         const u32* nstarts, u32 nbk, fp_t* den, u32* nkeys, u32* nvals) {
    msm_pairs_den_dev(src, vals, starts, nstarts, nbk, den, nkeys, nvals);
}

extern "C" __global__ void __launch_bounds__(MSM_PAIRS_THREADS)
    msm_batch_inverse(fp_t* den, fp_t* pre, const u32* nstarts, u32 nbk) {
    msm_batch_inverse_dev(den, pre, nstarts, nbk);
}

extern "C" __global__ void msm_pairs_finish(const g1_affine* src, const u32* vals, const u32* nstarts, u32 nbk,
                                            const fp_t* inv, g1_affine* dst, u32* nvals) {
    msm_pairs_finish_dev(src, vals, nstarts, nbk, inv, dst, nvals);
}

// The curve-specific kernels, once per group: G1 (suffix-less names, the
// hot path) and G2 (`_g2`, the optional B query in G2).
// COMPACT: msm_ones compacts the ones per warp first (MSM_ONES_COMPACT, both groups).
// INL: inline the products of msm_ones' mixed addition (G1, as ACC_INL: with the out-of-line
// product of `gpu.msm_mul = "call"` its loop is a fifth of the inlined one's code).
// msm_accumulate: 128 threads per block; MSM_ACC_MINB caps registers so that
// that many blocks fit on one SM (tuning knob, see NOTES.md).  G2 points are
// twice the size: one block per SM is the only bound asked for there.
// ACC_INL: inline the products of the accumulation's mixed addition; for G1 all
// but MSM_ACC_MUL == 1 (`gpu.msm_mul = "call"`: one out-of-line product, ec/g1.cuh).
#ifndef MSM_ACC_MINB
#define MSM_ACC_MINB 4
#endif
#define BATON_MSM_CURVE_KERNELS(SUFFIX, F, ACC_MINB, ACC_INL, INL, COMPACT)                                                     \
    extern "C" __global__ void __launch_bounds__(128, ACC_MINB)                                                 \
        msm_accumulate##SUFFIX(const ec_affine<F>* bases, const u32* keys, const u32* vals, const u32* starts,    \
                               u32 nbk, u32 S, ec_xyzz<F>* buckets, ec_xyzz<F>* pfirst, ec_xyzz<F>* plast) {     \
        msm_accumulate_dev<F, ACC_INL, false>(bases, keys, vals, starts, nbk, S, buckets, pfirst, plast);       \
    }                                                                                                            \
    extern "C" __global__ void __launch_bounds__(128, ACC_MINB)                                                 \
        msm_accumulate_seeded##SUFFIX(const ec_affine<F>* bases, const u32* keys, const u32* vals,               \
                                      const u32* starts, u32 nbk, u32 S, ec_xyzz<F>* buckets,                    \
                                      ec_xyzz<F>* pfirst, ec_xyzz<F>* plast) {                                   \
        msm_accumulate_dev<F, ACC_INL, true>(bases, keys, vals, starts, nbk, S, buckets, pfirst, plast);        \
    }                                                                                                            \
    extern "C" __global__ void msm_chains##SUFFIX(const u32* starts, u32 nbk, u32 S, const u32* keys, u32 span,  \
                                                  ec_xyzz<F>* pfirst) {                                          \
        msm_chains_dev<F>(starts, nbk, S, keys, span, pfirst);                                                   \
    }                                                                                                            \
    extern "C" __global__ void msm_finalize##SUFFIX(const u32* starts, u32 nbk, u32 S, ec_xyzz<F>* buckets,      \
                                                    const ec_xyzz<F>* pfirst, const ec_xyzz<F>* plast) {        \
        msm_finalize_dev<F, false>(starts, nbk, S, buckets, pfirst, plast);                                     \
    }                                                                                                            \
    extern "C" __global__ void msm_finalize_seeded##SUFFIX(const u32* starts, u32 nbk, u32 S,                   \
                                                           ec_xyzz<F>* buckets, const ec_xyzz<F>* pfirst,        \
                                                           const ec_xyzz<F>* plast) {                            \
        msm_finalize_dev<F, true>(starts, nbk, S, buckets, pfirst, plast);                                      \
    }                                                                                                            \
    extern "C" __global__ void msm_reduce_level##SUFFIX(const ec_xyzz<F>* Tin, const ec_xyzz<F>* Rin, u32 nwin,  \
                                                        u32 M, u32 lg, ec_xyzz<F>* Tout, ec_xyzz<F>* Rout) {    \
        msm_reduce_level_dev<F>(Tin, Rin, nwin, M, lg, Tout, Rout);                                             \
    }                                                                                                            \
    extern "C" __global__ void __launch_bounds__(MSM_SUM_THREADS)                                               \
        msm_ones##SUFFIX(const ec_affine<F>* bases, const fr_t* scalars, u32 n, ec_xyzz<F>* partials) {          \
        if constexpr (COMPACT)                                                                                   \
            msm_ones_compact_dev<F, INL>(bases, scalars, n, partials);                                           \
        else                                                                                                     \
            msm_ones_dev<F, INL>(bases, scalars, n, partials);                                                   \
    }                                                                                                            \
    extern "C" __global__ void __launch_bounds__(MSM_SUM_THREADS)                                               \
        ec_sum##SUFFIX(const ec_xyzz<F>* in, u32 count, ec_xyzz<F>* out) {                                      \
        ec_sum_dev<F>(in, count, out);                                                                          \
    }

BATON_MSM_CURVE_KERNELS(, FpOps, MSM_ACC_MINB, (MSM_ACC_MUL == 0 || MSM_ACC_MUL == 2), (MSM_ACC_MUL == 0 || MSM_ACC_MUL == 2),
                        MSM_ONES_COMPACT)
BATON_MSM_CURVE_KERNELS(_g2, Fp2Ops, 1, true, false, MSM_ONES_COMPACT)

#endif // BATON_MSM_CU
