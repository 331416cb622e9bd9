// baton: batch-affine halving rounds of the sorted MSM entries (G1; `gpu.experimental.
// msm_affine_rounds`, off by default). Requires field/inv.cuh, ec/g1.cuh, ec/affine.cuh.
//
// After the scatter, bucket b holds the entries [starts[b], starts[b+1]) of keys/vals, each a
// base index with its sign in bit 31. One round adds the entries of every bucket in pairs
// (offsets 0+1, 2+3, ...; an odd last one is carried as it is) in affine coordinates and writes
// the sums, in the same bucket order, as new affine points: bucket b then holds ceil(len/2)
// entries from nstarts[b] (msm_pairs_count and the scan give nstarts), nkeys[o] = b and
// nvals[o] = o (no sign: it is folded into the point). The accumulation then runs unchanged on
// the new points, keys, values and starts; a round can feed the next one.
//
// Why: an affine addition costs 3 products (lambda, lambda^2, y3) besides its one inversion,
// and Montgomery's trick turns the inversions of a batch into 3 products each plus one
// inversion for the whole batch; XYZZ's mixed addition costs ~10 products (NOTES.md, "What
// bounds the kernels"). The batch is a block: each thread multiplies its own pairs'
// denominators (prefix products in local memory), the block's 128 products go up a tree in
// shared memory, thread 0 inverts the root, and the tree hands each thread the inverse of its
// own product on the way down (3 products per tree node, one inversion per block).
//
// The cases of a pair and their formulas are ec/affine.cuh's (ec_pair_den, ec_pair_finish): only
// a chord or a tangent puts its denominator into the batch, so one exceptional pair cannot spoil
// the block's inverse.
#ifndef BATON_MSM_PAIRS_CUH
#define BATON_MSM_PAIRS_CUH

#define MSM_PAIRS_THREADS 128
// Old entries per thread: up to MSM_PAIRS_PER / 2 + 1 pairs start in a thread's range.
#ifndef MSM_PAIRS_PER
#define MSM_PAIRS_PER 16u
#endif
#define MSM_PAIRS_MAX (MSM_PAIRS_PER / 2u + 1u)

// msm_pairs_case's answers besides ec/affine.cuh's EC_PAIR_* cases of a pair.
constexpr u32 MSM_PAIR_SKIP = 8;  // the second entry of a pair: its first's thread adds it
constexpr u32 MSM_PAIR_ONE = 9;   // a bucket's odd last entry: carried as it is

// ncounts[b + 1] = ceil(len_b / 2), ncounts[0] = 0; the inclusive scan of ncounts (nbk + 1
// values) then gives every bucket's new start, as msm_count + scan do for the first entries.
DEVI void msm_pairs_count_dev(const u32* starts, u32 nbk, u32* ncounts) {
    const u32 b = blockIdx.x * blockDim.x + threadIdx.x;
    if (b == 0) ncounts[0] = 0;
    if (b >= nbk) return;
    ncounts[b + 1] = (starts[b + 1] - starts[b] + 1) >> 1;
}

// One signed entry's point: base vals' index, y negated by bit 31 (infinity stays all zero).
DEVI g1_affine msm_pairs_load(const g1_affine* src, u32 v) {
    const g1_affine* p = src + (v & 0x7fffffffu);
    g1_affine a;
    a.x = FpOps::ldg(&p->x);
    a.y = FpOps::ldg(&p->y);
    if (!ec_affine_is_inf(a)) a.y = FpOps::cneg(a.y, v >> 31);
    return a;
}

// Entry j's part in the round (j in bucket b): MSM_PAIR_SKIP, or its output index o, its first
// point pa and MSM_PAIR_ONE, or both points and the pair's case with its denominator.
DEVI u32 msm_pairs_case(const g1_affine* src, const u32* vals, const u32* starts, const u32* nstarts, u32 j,
                        u32 b, u32& o, g1_affine& pa, g1_affine& pb, fp_t& den) {
    const u32 off = j - starts[b];
    if (off & 1u) return MSM_PAIR_SKIP;
    o = nstarts[b] + (off >> 1);
    pa = msm_pairs_load(src, vals[j]);
    if (j + 1 >= starts[b + 1]) return MSM_PAIR_ONE;
    pb = msm_pairs_load(src, vals[j + 1]);
    return ec_pair_den<FpOps>(pa, pb, den);
}

// The bucket holding entry j < starts[nbk]: the last b with starts[b] <= j (empty buckets share
// their start with the next one, and the last of such a run is the one holding j).
DEVI u32 msm_pairs_bucket(const u32* starts, u32 nbk, u32 j) {
    u32 lo = 0, hi = nbk;  // starts[lo] <= j < starts[hi]
    while (hi - lo > 1) {
        const u32 mid = lo + ((hi - lo) >> 1);
        if (starts[mid] <= j) lo = mid;
        else hi = mid;
    }
    return lo;
}

// The block's shared inversion: every thread gives the product of its denominators (one when
// it has none) and gets that product's inverse. All MSM_PAIRS_THREADS threads must call it.
DEVI fp_t msm_pairs_block_inverse(fp_t mine, fp_t* tree) {
    const u32 t = threadIdx.x;
    const u32 L = MSM_PAIRS_THREADS;
    tree[L + t] = mine;
    __syncthreads();
    for (u32 w = L >> 1; w >= 1; w >>= 1) {  // up: node i = product of nodes 2i and 2i + 1
        if (t < w) tree[w + t] = fpm<false>(tree[2 * (w + t)], tree[2 * (w + t) + 1]);
        __syncthreads();
    }
    if (t == 0) tree[1] = f_inv_window<FpParams>(tree[1]);
    __syncthreads();
    for (u32 w = 1; w < L; w <<= 1) {  // down: a child's inverse = the parent's times its sibling
        if (t < w) {
            const u32 i = w + t;
            const fp_t inv = tree[i], l = tree[2 * i], r = tree[2 * i + 1];
            tree[2 * i] = fpm<false>(inv, r);
            tree[2 * i + 1] = fpm<false>(inv, l);
        }
        __syncthreads();
    }
    return tree[L + t];
}

// One round over the entries of starts (with their values vals, points src) into nstarts'
// layout: dst the points, nvals their indices, nkeys (when not null: the accumulation's keys of
// `gpu.msm_scatter = "keys"`) their buckets. A thread takes MSM_PAIRS_PER consecutive entries;
// the grid covers an upper bound of the entries, the threads past the last one only join the
// block's inversion.
DEVI void msm_pairs_round_dev(const g1_affine* src, const u32* vals, const u32* starts, const u32* nstarts, u32 nbk,
                              g1_affine* dst, u32* nkeys, u32* nvals) {
    __shared__ fp_t tree[2 * MSM_PAIRS_THREADS];
    const u32 total = starts[nbk];
    const u64 lo64 = (u64)(blockIdx.x * blockDim.x + threadIdx.x) * MSM_PAIRS_PER;
    const u32 lo = lo64 < total ? (u32)lo64 : total;
    const u32 hi = min(total - lo, MSM_PAIRS_PER) + lo;
    u32 b = lo < hi ? msm_pairs_bucket(starts, nbk, lo) : 0;
    // Forward: write what needs no inversion, keep the prefix products of the rest.
    fp_t pre[MSM_PAIRS_MAX];
    fp_t prod = FpOps::one();
    u32 np = 0;
    for (u32 j = lo; j < hi; j++) {
        while (starts[b + 1] <= j) b++;
        u32 o;
        g1_affine pa, pb;
        fp_t den;
        const u32 k = msm_pairs_case(src, vals, starts, nstarts, j, b, o, pa, pb, den);
        if (k == MSM_PAIR_SKIP) continue;
        if (nkeys) nkeys[o] = b;
        nvals[o] = o;
        if (k == EC_PAIR_CHORD || k == EC_PAIR_TANGENT) {
            prod = np == 0 ? den : fpm<false>(prod, den);
            pre[np++] = prod;
            continue;
        }
        const g1_affine r = k == MSM_PAIR_ONE ? pa : ec_pair_finish<FpOps, false>(pa, pb, k, prod);
        FpOps::store(&dst[o].x, r.x);
        FpOps::store(&dst[o].y, r.y);
    }
    fp_t inv = msm_pairs_block_inverse(prod, tree);
    // Backward: each pair's inverse from the running inverse and the prefix before it.
    for (u32 jj = hi; jj > lo; jj--) {
        const u32 j = jj - 1;
        while (starts[b] > j) b--;
        u32 o;
        g1_affine pa, pb;
        fp_t den;
        const u32 k = msm_pairs_case(src, vals, starts, nstarts, j, b, o, pa, pb, den);
        if (k != EC_PAIR_CHORD && k != EC_PAIR_TANGENT) continue;
        np--;
        const fp_t dinv = np == 0 ? inv : fpm<false>(inv, pre[np - 1]);
        if (np != 0) inv = fpm<false>(inv, den);
        const g1_affine r = ec_pair_finish<FpOps, false>(pa, pb, k, dinv);
        FpOps::store(&dst[o].x, r.x);
        FpOps::store(&dst[o].y, r.y);
    }
}

// ---- The same round in three kernels (`gpu.experimental.msm_affine_split`) -------------------
// The fused round above waits on each thread's chain of dependent gathers twice (forward and
// back) at three blocks a multiprocessor, and stalls its block for thread 0's inversion. Split,
// each step runs at its own occupancy: msm_pairs_den (a thread an output: the pair's gathers and
// its denominator), msm_batch_inverse (every denominator inverted in place, a few inversions a
// multiprocessor over coalesced loads and stores) and msm_pairs_finish (a thread an output: the gathers
// again and the sum). Between them, nvals[o] holds the pair's first entry j with bit 31 set when
// j + 1 is in the same bucket; msm_pairs_finish writes o there.

// Output o < nstarts[nbk]: its bucket b (a binary search over nstarts), its pair's first entry j,
// the pair's denominator into den[o] (1 for an odd last entry or a pair without a division),
// nkeys[o] = b where keys are kept, and j with bit 31 for a pair into nvals[o].
DEVI void msm_pairs_den_dev(const g1_affine* src, const u32* vals, const u32* starts, const u32* nstarts, u32 nbk,
                            fp_t* den, u32* nkeys, u32* nvals) {
    const u32 o = blockIdx.x * blockDim.x + threadIdx.x;
    if (o >= nstarts[nbk]) return;
    const u32 b = msm_pairs_bucket(nstarts, nbk, o);
    const u32 j = starts[b] + 2 * (o - nstarts[b]);
    const bool two = j + 1 < starts[b + 1];
    fp_t d = FpOps::one();
    if (two) {
        const g1_affine pa = msm_pairs_load(src, vals[j]), pb = msm_pairs_load(src, vals[j + 1]);
        ec_pair_den<FpOps>(pa, pb, d);  // 1 for the cases without a division
    }
    FpOps::store(&den[o], d);
    if (nkeys) nkeys[o] = b;
    nvals[o] = j | (two ? 0x80000000u : 0u);
}

// den[e] = 1 / den[e] for the outputs e < nstarts[nbk] (no zeros: msm_pairs_den puts 1 where a
// pair has no division; past the outputs den is not read). Thread g of the grid's S threads takes
// the residues g, g + S, g + 2S, ... (coalesced), keeps their running products in pre[] (global:
// the points buffer msm_pairs_finish fills later), and its block shares one inversion
// (msm_pairs_block_inverse). One inversion a block: the grid is a few blocks a multiprocessor, so
// the inversions (485 products on one thread each) are a few hundred; one per 2,048 residues cost
// more than the residues' own products (kernels/NOTES.md, msm_affine_split).
DEVI void msm_batch_inverse_dev(fp_t* __restrict__ den, fp_t* __restrict__ pre, const u32* nstarts, u32 nbk) {
    __shared__ fp_t tree[2 * MSM_PAIRS_THREADS];
    const u64 n = nstarts[nbk];
    const u64 g = (u64)blockIdx.x * MSM_PAIRS_THREADS + threadIdx.x;
    const u64 S = (u64)gridDim.x * MSM_PAIRS_THREADS;
    fp_t prod = FpOps::one();
    for (u64 e = g; e < n; e += S) {
        const fp_t d = FpOps::ldg(&den[e]);
        prod = e == g ? d : fpm<false>(prod, d);
        pre[e] = prod;
    }
    fp_t inv = msm_pairs_block_inverse(prod, tree);
    if (g >= n) return;
    for (u64 e = g + (n - 1 - g) / S * S;; e -= S) {
        const fp_t d = FpOps::ldg(&den[e]);
        if (e == g) {
            FpOps::store(&den[e], inv);
            break;
        }
        FpOps::store(&den[e], fpm<false>(inv, pre[e - S]));
        inv = fpm<false>(inv, d);
    }
}

// dst[o] = the pair's sum (or the odd entry) from msm_pairs_den's nvals and the inverted den;
// nvals[o] = o. n: the outputs (nstarts[nbk]).
DEVI void msm_pairs_finish_dev(const g1_affine* src, const u32* vals, const u32* nstarts, u32 nbk, const fp_t* inv,
                               g1_affine* dst, u32* nvals) {
    const u32 o = blockIdx.x * blockDim.x + threadIdx.x;
    if (o >= nstarts[nbk]) return;
    const u32 w = nvals[o], j = w & 0x7fffffffu;
    g1_affine r = msm_pairs_load(src, vals[j]);
    if (w >> 31) {
        const g1_affine pb = msm_pairs_load(src, vals[j + 1]);
        fp_t d;
        const u32 k = ec_pair_den<FpOps>(r, pb, d);
        r = ec_pair_finish<FpOps, false>(r, pb, k, FpOps::ldg(&inv[o]));
    }
    FpOps::store(&dst[o].x, r.x);
    FpOps::store(&dst[o].y, r.y);
    nvals[o] = o;
}

#endif // BATON_MSM_PAIRS_CUH
