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

#endif // BATON_WITNESS_DENSITY_CUH
