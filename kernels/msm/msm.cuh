// baton: G1 multi-scalar multiplication, Pippenger with signed digits.
// Requires field/fr.cuh, ec/xyzz.cuh (G1 and G2 share every kernel).
//
// Scalars: Fr Montgomery (blst_fr bytes), converted to canonical on device.
// Window c bits (2 <= c <= 31), nwin = ceil(256 / c) windows; window w holds
// bits [w*c, w*c + c) plus the carry of the window below; a value v greater
// than 2^(c-1) becomes the digit v - 2^c (negative) with carry 1, so digits
// are in [-(2^(c-1)-1), 2^(c-1)] and the top window never carries out.
// Bucket key of a non-zero digit d in window w: w * 2^(c-1) + |d| - 1.
// Scalars equal to 0 are skipped; scalars equal to 1 are skipped too and
// summed separately (msm_ones_*), since in Groth16 witnesses they are many.
// Bucket sort: counting sort (atomic histogram, inclusive scan, scatter by
// atomic decrement, which leaves bucket start offsets behind).
// Accumulation: the sorted entry list is cut into segments of S entries, one
// thread each; buckets wholly inside a segment are written directly, the
// pieces of buckets crossing segment boundaries are kept per segment
// (first/last run) and summed by msm_finalize. The pieces of one MSM after
// the first add to the buckets the earlier ones left (SEED, msm_run_start).
// Reduction: sum_d d * B_d per window by running sums over groups of 2^lg
// buckets, in levels (see msm_reduce_level_dev), until one value per window.
// Result: nwin window sums (XYZZ) + the ones sum; host computes
// sum_w 2^(w*c) * S_w + ones.
#ifndef BATON_MSM_MSM_CUH
#define BATON_MSM_MSM_CUH

DEVI u32 msm_limb(const fr_t& s, u32 i) {
    u32 r = 0;
#pragma unroll
    for (u32 k = 0; k < 8; k++) r = (k == i) ? s.v[k] : r;
    return r;
}

// c bits of canonical scalar s starting at bit off (bits past 255 read 0)
DEVI u32 msm_bits(const fr_t& s, u32 off, u32 c) {
    const u32 limb = off >> 5, sh = off & 31;
    const u64 w = (u64)msm_limb(s, limb) | ((u64)msm_limb(s, limb + 1) << 32);
    return (u32)(w >> sh) & ((1u << c) - 1);
}

// MSM_KEYLESS = 1 (`gpu.msm_scatter = "starts"`): the scatter writes no keys; the
// accumulation takes each segment's first bucket from msm_seg_keys and walks the
// bucket starts from there.
#ifndef MSM_KEYLESS
#define MSM_KEYLESS 0
#endif

// Scalars 0 and 1 (Montgomery form) make no digits: the one test every pass uses.
DEVI bool msm_trivial(const fr_t& m) { return f_is_zero<FrParams>(m) || f_is_one<FrParams>(m); }

// *count += number of scalars that are neither 0 nor 1 (grid-stride, one atomic per warp;
// *count starts at zero). The host picks the window from it (`gpu.msm_window`).
DEVI void msm_nontrivial_dev(const fr_t* scalars, u32 n, u32* count) {
    u32 mine = 0;
    for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        mine += msm_trivial(f_ldg<FrParams>(scalars + i)) ? 0u : 1u;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) mine += __shfl_down_sync(0xffffffffu, mine, o);
    if ((threadIdx.x & 31) == 0 && mine != 0) atomicAdd(count, mine);
}

// The signed digit of window value v (c bits plus the carry in): |d| returned, neg set when it
// is negative (v > 2^(c-1): d = v - 2^c, and the window above gets a carry of one).
DEVI u32 msm_signed_digit(u32 v, u32 c, u32 half, bool& neg) {
    neg = v > half;
    return neg ? (1u << c) - v : v;
}

// Writes one entry of the sorted list: pos = --counts[key], keys[pos] = key (not with
// MSM_KEYLESS), vals[pos] = point index | (negative << 31).
DEVI void msm_place(u32* counts, u32* keys, u32* vals, u32 key, u32 i, bool neg) {
    const u32 pos = atomicSub(counts + key, 1u) - 1u;
#if !MSM_KEYLESS
    keys[pos] = key;
#endif
    vals[pos] = i | (neg ? 0x80000000u : 0u);
}

// Calls f(w, d, neg) for every window w < nwin of canonical scalar s, in order: its signed
// digit's magnitude d and sign (half = 2^(c-1); a non-zero digit's bucket is w * half + d - 1).
template <class F> DEVI void msm_each_digit(const fr_t& s, u32 c, u32 half, u32 nwin, F f) {
    u32 carry = 0;
    for (u32 w = 0; w < nwin; w++) {
        bool neg;
        const u32 d = msm_signed_digit(msm_bits(s, w * c, c) + carry, c, half, neg);
        carry = neg ? 1u : 0u;
        f(w, d, neg);
    }
}

// Pass 0 (scatter == false): counts[key] += 1 for every non-zero digit.
// Pass 1 (scatter == true): pos = --counts[key] (counts holds the inclusive
// scan); keys[pos] = key (not with MSM_KEYLESS); vals[pos] = point index |
// (negative << 31).
DEVI void msm_digits_dev(const fr_t* scalars, u32 n, u32 c, u32 nwin, u32* counts, u32* keys, u32* vals,
                         bool scatter) {
    const u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const fr_t m = f_ldg<FrParams>(scalars + i);
    if (msm_trivial(m)) return;
    const u32 half = 1u << (c - 1);
    msm_each_digit(f_from_mont<FrParams>(m), c, half, nwin, [&](u32 w, u32 d, bool neg) {
        if (d == 0) return;
        const u32 key = w * half + d - 1;
        if (!scatter) atomicAdd(counts + key, 1u);
        else msm_place(counts, keys, vals, key, i, neg);
    });
}

// The scatter a window at a time (msm_scatter_window): the grid is nwin slices of
// ceil(n/blockDim) blocks, slice w writing the entries of window w only (each thread walks the
// carries of the windows below w itself). Blocks start in order, so the blocks in flight write
// into one window's stretch of vals (its n entries) instead of all nwin: at 2^24 scalars
// 64 MB, about the L2, where the scalar order scatters 4-byte writes over 13x that (ncu on the
// H200: DRAM-bound at 25 % of its peak, L2 hit rate 65 %). The price: every slice reads and
// converts its scalars again, which the host weighs (plan::scatter_by_window).
// This thread's window w and scalar i on a grid of window slices of ceil(n/blockDim) blocks;
// false past the scalars.
DEVI bool msm_window_slot(u32 n, u32 nwin, u32& w, u32& i) {
    const u32 per = (n + blockDim.x - 1) / blockDim.x;  // blocks per window
    w = blockIdx.x / per;
    i = (blockIdx.x - w * per) * blockDim.x + threadIdx.x;
    return i < n && w < nwin;
}

DEVI void msm_scatter_window_dev(const fr_t* scalars, u32 n, u32 c, u32 nwin, u32* counts, u32* keys, u32* vals) {
    u32 w, i;
    if (!msm_window_slot(n, nwin, w, i)) return;
    const fr_t m = f_ldg<FrParams>(scalars + i);
    if (msm_trivial(m)) return;
    const fr_t s = f_from_mont<FrParams>(m);
    const u32 half = 1u << (c - 1);
    u32 carry = 0;
    for (u32 v = 0; v < w; v++) carry = msm_bits(s, v * c, c) + carry > half ? 1u : 0u;
    bool neg;
    const u32 d = msm_signed_digit(msm_bits(s, w * c, c) + carry, c, half, neg);
    if (d != 0) msm_place(counts, keys, vals, w * half + d - 1, i, neg);
}

// Stored digits (`gpu.msm_scatter_digits = "stored"`, with the window order): the count pass
// (msm_count_store) also writes every window's key of every scalar, window-major, digits[w*n +
// i] = key | (negative << 31), or MSM_NO_KEY for a zero digit or a scalar 0 or 1 (each warp's
// writes coalesced), into memory the accumulation writes only later (the host lends the
// segments' buffer). msm_scatter_stored's slices then read 4 bytes per scalar and window
// instead of the 32-byte scalar and its conversion: the dense 2^24 window-order scatter
// 10.7 -> 9.3 ms on the H200 (BENCHMARKS.md, "H200 — GPU knob defaults"). Needs nbk < 2^31.
#define MSM_NO_KEY 0xffffffffu

DEVI void msm_count_store_dev(const fr_t* scalars, u32 n, u32 c, u32 nwin, u32* counts, u32* digits) {
    const u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const fr_t m = f_ldg<FrParams>(scalars + i);
    if (msm_trivial(m)) {
        for (u32 w = 0; w < nwin; w++) digits[(u64)w * n + i] = MSM_NO_KEY;
        return;
    }
    const u32 half = 1u << (c - 1);
    msm_each_digit(f_from_mont<FrParams>(m), c, half, nwin, [&](u32 w, u32 d, bool neg) {
        u32 key = MSM_NO_KEY;
        if (d != 0) {
            key = w * half + d - 1;
            atomicAdd(counts + key, 1u);
            key |= neg ? 0x80000000u : 0u;
        }
        digits[(u64)w * n + i] = key;
    });
}

// The window-order scatter from stored digits, each window in `parts` slices (`gpu.
// msm_scatter_parts`): a grid of nwin * parts slices of msm_scatter_window's, slice (w, p)
// writing the entries of window w whose bucket lies in the p-th of `parts` equal ranges of its
// 2^(c-1). The blocks in flight then write into 1/parts of the window's stretch of vals (so it
// can stay in the L2 where a window's n entries would not), and every part reads the window's
// digits again (4 bytes per scalar, coalesced).
DEVI void msm_scatter_stored_dev(const u32* digits, u32 n, u32 c, u32 nwin, u32 parts, u32* counts, u32* keys,
                                 u32* vals) {
    u32 slice, i;
    if (!msm_window_slot(n, nwin * parts, slice, i)) return;
    const u32 w = slice / parts, part = slice - w * parts;
    const u32 key = digits[(u64)w * n + i];
    if (key == MSM_NO_KEY) return;
    const u32 k = key & 0x7fffffffu;
    if ((u32)(((u64)(k - (w << (c - 1))) * parts) >> (c - 1)) != part) return;
    msm_place(counts, keys, vals, k, i, (key >> 31) != 0);
}

// ---- inclusive scan of u32 (block of 1024 threads x 4 items) -------------
#define SCAN_THREADS 1024
#define SCAN_ITEMS 4
#define SCAN_TILE (SCAN_THREADS * SCAN_ITEMS)

DEVI void scan_block_dev(u32* data, u32 m, u32* block_sums) {
    __shared__ u32 warp_tot[32];
    const u32 base = blockIdx.x * SCAN_TILE + threadIdx.x * SCAN_ITEMS;
    u32 x[SCAN_ITEMS];
    u32 run = 0;
#pragma unroll
    for (int k = 0; k < SCAN_ITEMS; k++) {
        x[k] = (base + k < m) ? data[base + k] : 0u;
        run += x[k];
        x[k] = run;
    }
    const u32 lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    u32 inc = run;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
        u32 y = __shfl_up_sync(0xffffffffu, inc, o);
        if (lane >= (u32)o) inc += y;
    }
    if (lane == 31) warp_tot[warp] = inc;
    __syncthreads();
    if (warp == 0) {
        u32 t = warp_tot[lane];
#pragma unroll
        for (int o = 1; o < 32; o <<= 1) {
            u32 y = __shfl_up_sync(0xffffffffu, t, o);
            if (lane >= (u32)o) t += y;
        }
        warp_tot[lane] = t;
    }
    __syncthreads();
    const u32 off = inc - run + (warp ? warp_tot[warp - 1] : 0u);
#pragma unroll
    for (int k = 0; k < SCAN_ITEMS; k++)
        if (base + k < m) data[base + k] = x[k] + off;
    if (block_sums && threadIdx.x == SCAN_THREADS - 1) block_sums[blockIdx.x] = warp_tot[31];
}

DEVI void scan_add_dev(u32* data, u32 m, const u32* block_sums) {
    if (blockIdx.x == 0) return;
    const u32 add = block_sums[blockIdx.x - 1];
    const u32 base = blockIdx.x * SCAN_TILE + threadIdx.x * SCAN_ITEMS;
#pragma unroll
    for (int k = 0; k < SCAN_ITEMS; k++)
        if (base + k < m) data[base + k] += add;
}

// ---- bucket accumulation --------------------------------------------------
// MSM_PREFETCH = 1 loads the next base one addition ahead (a tuning knob,
// BATON_MSM_PREFETCH on the host; off unless measured faster).
#ifndef MSM_PREFETCH
#define MSM_PREFETCH 0
#endif
// The functions below are generic over the coordinate field F of ec/xyzz.cuh
// (FpOps: G1, Fp2Ops: G2).
// starts[k] = first entry of bucket k, starts[nbk] = total entries.
template <class F>
DEVI void msm_flush(u32 key, const ec_xyzz<F>& acc, u32 seg_lo, u32 seg_hi, bool first, const u32* starts,
                    ec_xyzz<F>* buckets, ec_xyzz<F>* pfirst, ec_xyzz<F>* plast, u32 seg) {
    const u32 lo = starts[key], hi = starts[key + 1];
    if (lo >= seg_lo && hi <= seg_hi) ec_store(buckets + key, acc);
    else if (first) ec_store(pfirst + seg, acc);
    else ec_store(plast + seg, acc);
}

// segkeys[s] = the bucket holding entry s*S, for every segment s with an entry (one thread
// per bucket; empty buckets hold no segment start). Only with MSM_KEYLESS.
DEVI void msm_seg_keys_dev(const u32* starts, u32 nbk, u32 S, u32* segkeys) {
    const u32 b = blockIdx.x * blockDim.x + threadIdx.x;
    if (b >= nbk) return;
    const u64 lo = starts[b], hi = starts[b + 1];
    for (u64 s = (lo + S - 1) / S; s * S < hi; s++) segkeys[s] = b;
}

// Where bucket `key`'s run in a segment starts from. SEED (an MSM cut into pieces that share
// their buckets, msm_accumulate_seeded): the bucket's first run (the one holding its first
// entry, `first_run`) starts from the sum the earlier pieces left in buckets[key]; its others,
// like every run without SEED, from infinity. Only the thread of that run reads buckets[key],
// and it (or msm_finalize, summing the runs) writes it after.
template <class F, bool SEED>
DEVI void msm_run_start(ec_xyzz<F>& acc, const ec_xyzz<F>* buckets, u32 key, bool first_run) {
    if (SEED && first_run) acc = ec_load(buckets + key);
    else ec_set_inf(acc);
}

// keys: the key of every entry, or with MSM_KEYLESS the first bucket of every segment
// (msm_seg_keys). INL: inline every product of the mixed addition (`gpu.msm_mul`). SEED: see
// msm_run_start.
template <class F, bool INL, bool SEED>
DEVI void msm_accumulate_dev(const ec_affine<F>* bases, const u32* keys, const u32* vals, const u32* starts,
                             u32 nbk, u32 S, ec_xyzz<F>* buckets, ec_xyzz<F>* pfirst, ec_xyzz<F>* plast) {
    typedef typename F::T T;
    const u32 seg = blockIdx.x * blockDim.x + threadIdx.x;
    const u32 total = starts[nbk];
    const u64 lo64 = (u64)seg * S;
    if (lo64 >= total) return;
    const u32 seg_lo = (u32)lo64;
    const u32 seg_hi = min(total - seg_lo, S) + seg_lo;
#if MSM_KEYLESS
    u32 cur = keys[seg];
    u32 end = starts[cur + 1];  // cur holds entries [starts[cur], end)
#else
    u32 cur = keys[seg_lo];
#endif
    bool first = true;
    ec_xyzz<F> acc;
    // The segment's first run is its bucket's first only when the bucket starts here.
    msm_run_start<F, SEED>(acc, buckets, cur, SEED && starts[cur] == seg_lo);
#if MSM_PREFETCH
    // The next entry's base is loaded before this entry's addition, so the gather's latency
    // hides behind the arithmetic (costs the registers of one affine point).
    u32 vn = vals[seg_lo];
    T xn = F::ldg(&bases[vn & 0x7fffffffu].x), yn = F::ldg(&bases[vn & 0x7fffffffu].y);
#endif
    for (u32 j = seg_lo; j < seg_hi; j++) {
#if MSM_KEYLESS
        if (j >= end) {
            msm_flush<F>(cur, acc, seg_lo, seg_hi, first, starts, buckets, pfirst, plast, seg);
            first = false;
            // The next bucket holding entry j (empty ones hold none); j < total keeps cur < nbk.
            do {
                cur++;
                end = starts[cur + 1];
            } while (end <= j);
            msm_run_start<F, SEED>(acc, buckets, cur, true);
        }
#else
        const u32 k = keys[j];
        if (k != cur) {
            msm_flush<F>(cur, acc, seg_lo, seg_hi, first, starts, buckets, pfirst, plast, seg);
            first = false;
            cur = k;
            msm_run_start<F, SEED>(acc, buckets, cur, true);
        }
#endif
#if MSM_PREFETCH
        const u32 v = vn;
        const T x = xn;
        T y = yn;
        if (j + 1 < seg_hi) {
            vn = vals[j + 1];
            const ec_affine<F>* bn = bases + (vn & 0x7fffffffu);
            xn = F::ldg(&bn->x);
            yn = F::ldg(&bn->y);
        }
#else
        const u32 v = vals[j];
        const ec_affine<F>* b = bases + (v & 0x7fffffffu);
        const T x = F::ldg(&b->x);
        T y = F::ldg(&b->y);
#endif
        if (F::is_zero(x) && F::is_zero(y)) continue;  // infinity base
        y = F::cneg(y, v >> 31);
        ec_add_affine_xy_impl<F, INL>(acc, x, y);
    }
    msm_flush<F>(cur, acc, seg_lo, seg_hi, first, starts, buckets, pfirst, plast, seg);
}

// ---- long buckets: their segments summed in a tree (msm_chains) -------------------------
// A bucket holding many entries (a value the witness repeats, e.g. small packed integers)
// crosses many segments, and msm_finalize's one thread per bucket would add their pieces one
// after another: 6 ms of a 2^26 partition's L pieces went there. msm_chains runs first, a level
// per span (MSM_CHAIN_SPAN, its square, ..., MSM_CHAIN_LEVELS of them; launch::msm_chain_spans):
// the thread of each aligned group of `span` segments that one bucket's pieces fill, from a
// bucket begun before the group, adds the group's pfirst values (each the sum of its group at
// the level below) into the group's first. Such a group's pfirst values belong to that bucket
// alone, and msm_finalize takes the same group whole under the same condition
// (msm_chain_step). The host passes both constants (src/gpu/plan.rs) and launches exactly
// these levels.
#ifndef MSM_CHAIN_SPAN
#define MSM_CHAIN_SPAN 32u
#endif
#ifndef MSM_CHAIN_LEVELS
#define MSM_CHAIN_LEVELS 3
#endif

// Whether the aligned group of `span` segments from segment s lies in the bucket [lo, hi) (of
// entries), which began before it: s0 = lo / S < s and s1 = (hi - 1) / S >= s + span - 1.
DEVI bool msm_chain_whole(u64 lo, u64 hi, u64 s, u32 span, u32 S) {
    return s % span == 0 && lo < s * S && hi > (s + span - 1) * S;
}

// keys as msm_accumulate's: with MSM_KEYLESS each segment's first bucket, else every entry's.
template <class F>
DEVI void msm_chains_dev(const u32* starts, u32 nbk, u32 S, const u32* keys, u32 span,
                         ec_xyzz<F>* pfirst) {
    const u64 s = ((u64)blockIdx.x * blockDim.x + threadIdx.x) * span;
    if ((s + span - 1) * S >= starts[nbk]) return;  // the group's last segment holds no entry
#if MSM_KEYLESS
    const u32 b = keys[s];
#else
    const u32 b = keys[s * S];
#endif
    if (!msm_chain_whole(starts[b], starts[b + 1], s, span, S)) return;
    const u32 step = span / MSM_CHAIN_SPAN;
    ec_xyzz<F> acc = ec_load(pfirst + s);
    for (u32 k = 1; k < MSM_CHAIN_SPAN; k++) ec_add(acc, ec_load(pfirst + s + (u64)k * step));
    ec_store(pfirst + s, acc);
}

// How far msm_finalize moves after adding pfirst[s] of the bucket [lo, hi): the largest span
// whose group from s msm_chains summed into pfirst[s], else one segment.
DEVI u32 msm_chain_step(u64 lo, u64 hi, u64 s, u32 S) {
    u32 step = 1, span = MSM_CHAIN_SPAN;
    for (int level = 0; level < MSM_CHAIN_LEVELS && msm_chain_whole(lo, hi, s, span, S); level++) {
        step = span;
        span *= MSM_CHAIN_SPAN;
    }
    return step;
}

// One thread per bucket: empty -> infinity (with SEED: left as the earlier pieces left it);
// crossing segments -> sum pieces (the first of which started from the seed; whole groups of
// segments as msm_chains left them).
template <class F, bool SEED>
DEVI void msm_finalize_dev(const u32* starts, u32 nbk, u32 S, ec_xyzz<F>* buckets, const ec_xyzz<F>* pfirst,
                           const ec_xyzz<F>* plast) {
    const u32 b = blockIdx.x * blockDim.x + threadIdx.x;
    if (b >= nbk) return;
    const u32 lo = starts[b], hi = starts[b + 1];
    if (lo == hi) {
        if (!SEED) ec_store(buckets + b, ec_inf<F>());
        return;
    }
    const u32 s0 = lo / S, s1 = (hi - 1) / S;
    if (s0 == s1) return;  // written by msm_accumulate
    ec_xyzz<F> acc = ec_load(lo == s0 * S ? pfirst + s0 : plast + s0);
    for (u32 s = s0 + 1; s <= s1; s += msm_chain_step(lo, hi, s, S)) ec_add(acc, ec_load(pfirst + s));
    ec_store(buckets + b, acc);
}

// ---- bucket reduction -----------------------------------------------------
// Level input: per window M values.  Group size L = 2^lg, G = M / L groups.
// First level (Tin == 0): X = Rin (buckets), output T_g = sum_i (i+1) X_{gL+i},
// R_g = L * sum_i X_{gL+i}.  Later levels: T_g = sum_i (T_{gL+i} + i R_{gL+i}),
// R_g = L * sum_i R_{gL+i}.  Then sum_d d*B_d = sum_g (T_g + g R_g) at every
// level, so with G == 1 the single T is the window sum (Rout may be 0 then).
// Output index: w * G + g.
template <class F>
DEVI void msm_reduce_level_dev(const ec_xyzz<F>* Tin, const ec_xyzz<F>* Rin, u32 nwin, u32 M, u32 lg,
                               ec_xyzz<F>* Tout, ec_xyzz<F>* Rout) {
    const u32 G = M >> lg;
    const u32 gid = blockIdx.x * blockDim.x + threadIdx.x;
    if (gid >= nwin * G) return;
    const u32 w = gid / G, g = gid - w * G;
    const u32 L = 1u << lg;
    const u32 base = w * M + g * L;
    ec_xyzz<F> run = ec_inf<F>(), acc = ec_inf<F>();
    if (Tin == 0) {
        for (int i = (int)L - 1; i >= 0; i--) {
            ec_add(run, ec_load(Rin + base + i));
            ec_add(acc, run);
        }
    } else {
        for (int i = (int)L - 1; i >= 1; i--) {
            ec_add(run, ec_load(Rin + base + i));
            ec_add(acc, run);
            ec_add(acc, ec_load(Tin + base + i));
        }
        ec_add(acc, ec_load(Tin + base));
        ec_add(run, ec_load(Rin + base));
    }
    ec_store(Tout + gid, acc);
    if (Rout) {
        for (u32 k = 0; k < lg; k++) run = ec_dbl(run);
        ec_store(Rout + gid, run);
    }
}

// ---- sums of many points (ones) ---------------------------------------------
// 128 x 384-byte G2 points fill the 48 KiB of static shared memory exactly.
#define MSM_SUM_THREADS 128

// The upper half of the block hands its values to the lower half first, so the shared array
// holds half the block (G2: 24 KiB, leaving room for msm_ones' queue under the 48 KiB of static
// shared memory).
template <class F> DEVI void ec_block_reduce_store(ec_xyzz<F> acc, ec_xyzz<F>* out) {
    constexpr u32 H = MSM_SUM_THREADS / 2;
    __shared__ ec_xyzz<F> red[H];
    if (threadIdx.x >= H) red[threadIdx.x - H] = acc;
    __syncthreads();
    if (threadIdx.x < H) {
        ec_add(acc, red[threadIdx.x]);
        red[threadIdx.x] = acc;  // each thread reads and writes only its own slot here
    }
    __syncthreads();
    for (u32 s = H / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) {
            ec_xyzz<F> a = red[threadIdx.x];
            ec_add(a, red[threadIdx.x + s]);
            red[threadIdx.x] = a;
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) ec_store(out, red[0]);
}

// partials[blockIdx.x] = sum of bases[i] with scalars[i] == 1 (grid-stride).
// INL inlines the mixed addition (G1: no call frame in local memory; inlining
// the reduction's additions as well tripled the NVRTC time and spilled).
template <class F, bool INL>
DEVI void msm_ones_dev(const ec_affine<F>* bases, const fr_t* scalars, u32 n, ec_xyzz<F>* partials) {
    ec_xyzz<F> acc = ec_inf<F>();
    for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        if (f_is_one<FrParams>(f_ldg<FrParams>(scalars + i))) ec_add_affine<F, INL>(acc, ec_affine_load(bases + i));
    }
    ec_block_reduce_store(acc, partials + blockIdx.x);
}

// MSM_ONES_COMPACT = 1 (`gpu.msm_ones = "compact"`, G1 and G2): the same sum with the ones compacted
// per warp first. In the loop above every lane whose scalar is one adds while the others
// wait, so with the ~45 % ones of a witness a warp's additions run at under half its lanes.
// Here each warp reads 32 consecutive scalars per step, queues the indices of the ones in
// shared memory (ballot, prefix popcount), and adds only when 32 are queued: one base per
// lane, every lane busy. The fewer than 32 left at the end are added once.
#ifndef MSM_ONES_COMPACT
#define MSM_ONES_COMPACT 0
#endif
template <class F, bool INL>
DEVI void msm_ones_compact_dev(const ec_affine<F>* bases, const fr_t* scalars, u32 n, ec_xyzz<F>* partials) {
    __shared__ u32 queue[MSM_SUM_THREADS / 32][64];  // < 32 waiting + 32 new
    const u32 lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    u32* q = queue[warp];
    u32 waiting = 0;  // the same in every lane of the warp
    ec_xyzz<F> acc = ec_inf<F>();
    const u32 stride = gridDim.x * blockDim.x;
    // The loop bound is the warp's (its first index), so every lane runs every ballot.
    for (u32 first = blockIdx.x * blockDim.x + warp * 32; first < n; first += stride) {
        const u32 i = first + lane;
        const bool one = i < n && f_is_one<FrParams>(f_ldg<FrParams>(scalars + i));
        const u32 mask = __ballot_sync(0xffffffffu, one);
        if (one) q[waiting + __popc(mask & ((1u << lane) - 1u))] = i;
        waiting += __popc(mask);
        __syncwarp();
        if (waiting >= 32) {
            waiting -= 32;
            const u32 j = q[waiting + lane];
            __syncwarp();  // read before the next step writes over it
            ec_add_affine<F, INL>(acc, ec_affine_load(bases + j));
        }
    }
    __syncwarp();
    if (lane < waiting) ec_add_affine<F, INL>(acc, ec_affine_load(bases + q[lane]));
    ec_block_reduce_store(acc, partials + blockIdx.x);
}

// out[0] = sum of in[0..count) (launch one block of MSM_SUM_THREADS)
template <class F> DEVI void ec_sum_dev(const ec_xyzz<F>* in, u32 count, ec_xyzz<F>* out) {
    ec_xyzz<F> acc = ec_inf<F>();
    for (u32 i = threadIdx.x; i < count; i += blockDim.x) ec_add(acc, ec_load(in + i));
    ec_block_reduce_store(acc, out);
}

#endif // BATON_MSM_MSM_CUH
