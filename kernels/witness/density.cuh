// baton: density filtering of a witness on the device.  Requires field/fr.cuh.
//
// A density is a bitmap over n variables, bit i of 32-bit word i >> 5 (the
// little-endian u32 view of the host's u64 words).  Filtering keeps the
// values of the variables whose bit is set, in order:
//   1. density_popc: counts[k] = popcount(words[k]) for k < nwords
//   2. inclusive scan of counts (scan_block / scan_add of msm.cuh)
//   3. density_gather: out[incl[k] - popc(word) + popc(word & below(i))] = in[i]
// so out holds exactly the kept values, in variable order.
#ifndef BATON_WITNESS_DENSITY_CUH
#define BATON_WITNESS_DENSITY_CUH

DEVI void density_popc_dev(const u32* words, u32 nwords, u32* counts) {
    const u32 k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= nwords) return;
    counts[k] = __popc(words[k]);
}

DEVI void density_gather_dev(fr_t* out, const fr_t* in, const u32* words, const u32* incl, u32 n) {
    const u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const u32 word = words[i >> 5];
    const u32 bit = i & 31;
    if (((word >> bit) & 1u) == 0) return;
    const u32 below = word & ((1u << bit) - 1u);
    const u32 pos = incl[i >> 5] - __popc(word) + __popc(below);
    f_store<FrParams>(out + pos, f_ldg<FrParams>(in + i));
}

// The inverse of the gather, for a witness packed as bits (src/groth16/packed.rs): `ones` and
// `dense_words` are its two bitmaps (value i is 1; value i is neither 0 nor 1), `dense` the
// values that are neither, in order, and `incl` the inclusive scan of dense_words' popcounts.
// Every out[i], i < n, is written: dense[incl[k] - popc(word) + popc(word & below(i))] where
// i's dense bit is set, else 1 (Montgomery form) or 0 by its ones bit.  The host checked that
// `dense` holds popc(dense_words) values.
DEVI void packed_expand_dev(fr_t* out, const fr_t* dense, const u32* ones, const u32* dense_words,
                            const u32* incl, u32 n) {
    const u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const u32 k = i >> 5;
    const u32 bit = i & 31;
    const u32 word = dense_words[k];
    fr_t v;
    if ((word >> bit) & 1u) {
        const u32 pos = incl[k] - __popc(word) + __popc(word & ((1u << bit) - 1u));
        v = f_ldg<FrParams>(dense + pos);
    } else if ((ones[k] >> bit) & 1u) {
        v = f_one<FrParams>();
    } else {
        v = f_zero<FrParams>();
    }
    f_store<FrParams>(out + i, v);
}

#endif // BATON_WITNESS_DENSITY_CUH
