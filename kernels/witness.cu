// baton: witness entry points (thin wrappers; see witness/density.cuh and NOTES.md).
#ifndef BATON_WITNESS_CU
#define BATON_WITNESS_CU

extern "C" __global__ void density_popc(const u32* words, u32 nwords, u32* counts) {
    density_popc_dev(words, nwords, counts);
}

extern "C" __global__ void density_gather(fr_t* out, const fr_t* in, const u32* words, const u32* incl, u32 n) {
    density_gather_dev(out, in, words, incl, n);
}

extern "C" __global__ void packed_expand(fr_t* out, const fr_t* dense, const u32* ones,
                                         const u32* dense_words, const u32* incl, u32 n) {
    packed_expand_dev(out, dense, ones, dense_words, incl, n);
}

#endif // BATON_WITNESS_CU
