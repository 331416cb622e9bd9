// baton: radix-2 NTT over Fr.  Requires field/fr.cuh.
//
// Transform of size n = 2^log_n in place, X[k] = sum_j x[j] w^(jk), w a
// primitive n-th root of unity (w^-1 for the inverse; the 1/n factor is not
// applied by the passes: use the scale table, below).
//
// Two orders (no separate bit-reversal pass needed in the Groth16 pipeline):
//   DIF (Gentleman-Sande): natural-order input  -> bit-reversed output
//   DIT (Cooley-Tukey):    bit-reversed input   -> natural-order output
// A transform is a sequence of passes; each pass does t radix-2 stages of the
// sub-transforms of size 2^s inside shared memory (four-step split: index
// i = H*2^s + J*2^(s-t) + L; the pass runs a size-2^t transform over J with
// the small root w_{2^t}, and multiplies element (J, L) by w_{2^s}^(L*rev_t(J))
// after (DIF) or before (DIT) it).  DIF passes go s = log_n downwards, DIT
// passes the same list reversed (s upwards).
//
// Twiddle table tw (shared by forward and inverse, any log_n <= log_tw):
//   tw[e] = W^e for e in [0, 2^log_tw), W a primitive 2^log_tw-th root of unity
//   (Montgomery Fr, 32 bytes each), W = ROOT_OF_UNITY^(2^(32-log_tw));
//   W^-e = tw[2^log_tw - e].  The whole circle, not half of it and a negation:
//   the negation and its select cost ~7 % of ntt_pass_r4's instructions.
// Split (tw_split = K > 0, for devices short of memory: 768 KiB instead of 4 GiB at
// 2^27): tw[i] = W^i for i < 2^K and tw[2^K + j] = W^(j*2^K) for j < 2^(log_tw-K), so
// W^e = tw[e & (2^K-1)] * tw[2^K + (e >> K)], one product more where both parts are
// nonzero.  With K <= log_tw - 10 the stages inside a block (exponents multiples of
// 2^(log_tw-10)) read the second part alone; the twiddles between passes take the product.
//
// Scale table (optional, fused into the first pass' loads or the last pass'
// stores): 32768 Fr entries, tab[i] = c*q^i for i < 16384 and
// tab[16384 + i] = q^(16384*i) for i < 16384; element at index x is
// multiplied by tab[x & 16383] * tab[16384 + (x >> 14)] = c*q^x (log_n <= 28).
// x is the element's position, or its bit-reversed position (flag), so that
// the factor follows the coefficient index when the data is bit-reversed.
#ifndef BATON_NTT_NTT_CUH
#define BATON_NTT_NTT_CUH

#define NTT_DIT 1u
#define NTT_INVERSE 2u
#define NTT_SCALE_LOAD 4u
#define NTT_SCALE_STORE 8u
#define NTT_SCALE_BITREV 16u
#define NTT_SCALE_SPLIT 14
#define NTT_MAX_BLOCK_LOG 10

typedef FrParams FR;

// A twiddle table and its layout (above): split 0 is the whole circle.
struct NttTw {
    const fr_t* tab;
    u32 log_tw;
    u32 split;
};

DEVI fr_t ntt_twiddle(const NttTw& tw, u32 e, bool inverse) {
    const u32 N = 1u << tw.log_tw;
    if (inverse) e = (N - e) & (N - 1);
    if (tw.split == 0) return f_ldg<FR>(tw.tab + e);
    const u32 lo = e & ((1u << tw.split) - 1), hi = e >> tw.split;
    if (hi == 0) return f_ldg<FR>(tw.tab + lo);
    const fr_t h = f_ldg<FR>(tw.tab + (1u << tw.split) + hi);
    if (lo == 0) return h;
    return f_mul<FR>(f_ldg<FR>(tw.tab + lo), h);
}

DEVI fr_t ntt_scale_factor(const fr_t* tab, u32 x) {
    fr_t lo = f_ldg<FR>(tab + (x & ((1u << NTT_SCALE_SPLIT) - 1)));
    if ((x >> NTT_SCALE_SPLIT) == 0) return lo;
    fr_t hi = f_ldg<FR>(tab + (1u << NTT_SCALE_SPLIT) + (x >> NTT_SCALE_SPLIT));
    return f_mul<FR>(lo, hi);
}

// Shared memory holds a block's E elements as two planes of 16-byte halves (half k of element e
// at uint4 index k*E + e): one 128-bit access per half, and consecutive elements in consecutive
// 16-byte slots, so eight consecutive threads (one phase of a 128-bit access) touch distinct
// banks wherever their elements are consecutive.
DEVI fr_t ntt_sm_get(const u32* sm, u32 E, u32 e) {
    const uint4* s4 = reinterpret_cast<const uint4*>(sm);
    const uint4 lo = s4[e], hi = s4[E + e];
    fr_t r;
    r.v[0] = lo.x; r.v[1] = lo.y; r.v[2] = lo.z; r.v[3] = lo.w;
    r.v[4] = hi.x; r.v[5] = hi.y; r.v[6] = hi.z; r.v[7] = hi.w;
    return r;
}

DEVI void ntt_sm_put(u32* sm, u32 E, u32 e, const fr_t& x) {
    uint4* s4 = reinterpret_cast<uint4*>(sm);
    s4[e] = make_uint4(x.v[0], x.v[1], x.v[2], x.v[3]);
    s4[E + e] = make_uint4(x.v[4], x.v[5], x.v[6], x.v[7]);
}

// The quad of thread index q over J with low bit b (h = 2^b, cmask = 2^c - 1): J0 has bits b and b+1 clear, the elements
// are e[i] = ((J0 + i*2^b) << c) | l, their values a[i] loaded from shared memory. Returns j0
// (J0's bits below b, the twiddle index of both stages).
DEVI u32 ntt_quad_load(const u32* sm, u32 E, u32 c, u32 cmask, u32 b, u32 h, u32 q, u32 e[4], fr_t a[4]) {
    const u32 l = q & cmask, qq = q >> c;
    const u32 j0 = qq & (h - 1);
    const u32 J0 = ((qq >> b) << (b + 2)) | j0;
#pragma unroll
    for (int i = 0; i < 4; i++) {
        e[i] = ((J0 + i * h) << c) | l;
        a[i] = ntt_sm_get(sm, E, e[i]);
    }
    return j0;
}

// Two stages at once, four elements a thread held in registers between them (the
// `ntt_pass_r4` kernel, QUAD): half the shared-memory round trips and barriers of two radix-2 stages, and two
// independent products per stage for the scheduler to overlap.  Same arithmetic, same result.
//
// DIF stages m and m-1 (m >= 1) over J: the quad J0 + i*2^(m-1), i < 4, J0 with bits m and
// m-1 clear.  Stage m pairs (0,2) and (1,3) with roots w_{2^(m+1)}^j, j = j0 and j0 + 2^(m-1);
// stage m-1 pairs (0,1) and (2,3) with w_{2^m}^j0.
DEVI void ntt_dif_quad(u32* sm, const NttTw& tw, u32 E, u32 c, u32 m, bool inverse) {
    const u32 cmask = (1u << c) - 1;
    const u32 h = 1u << (m - 1);
    for (u32 q = threadIdx.x; q < (E >> 2); q += blockDim.x) {
        u32 e[4];
        fr_t a[4];
        const u32 j0 = ntt_quad_load(sm, E, c, cmask, m - 1, h, q, e, a);
        fr_t d0 = f_sub<FR>(a[0], a[2]);
        fr_t d1 = f_sub<FR>(a[1], a[3]);
        a[0] = f_add<FR>(a[0], a[2]);
        a[1] = f_add<FR>(a[1], a[3]);
        if (j0 != 0) d0 = f_mul<FR>(d0, ntt_twiddle(tw, j0 << (tw.log_tw - m - 1), inverse));
        d1 = f_mul<FR>(d1, ntt_twiddle(tw, (j0 + h) << (tw.log_tw - m - 1), inverse));
        fr_t x = f_sub<FR>(a[0], a[1]);
        fr_t y = f_sub<FR>(d0, d1);
        if (j0 != 0) {
            const fr_t w = ntt_twiddle(tw, j0 << (tw.log_tw - m), inverse);
            x = f_mul<FR>(x, w);
            y = f_mul<FR>(y, w);
        }
        ntt_sm_put(sm, E, e[0], f_add<FR>(a[0], a[1]));
        ntt_sm_put(sm, E, e[1], x);
        ntt_sm_put(sm, E, e[2], f_add<FR>(d0, d1));
        ntt_sm_put(sm, E, e[3], y);
    }
}

// DIT stages p and p+1: the quad J0 + i*2^p, J0 with bits p and p+1 clear.  Stage p pairs
// (0,1) and (2,3) with w_{2^(p+1)}^j0; stage p+1 pairs (0,2) and (1,3) with w_{2^(p+2)}^j,
// j = j0 and j0 + 2^p.
DEVI void ntt_dit_quad(u32* sm, const NttTw& tw, u32 E, u32 c, u32 p, bool inverse) {
    const u32 cmask = (1u << c) - 1;
    const u32 h = 1u << p;
    for (u32 q = threadIdx.x; q < (E >> 2); q += blockDim.x) {
        u32 e[4];
        fr_t a[4];
        const u32 j0 = ntt_quad_load(sm, E, c, cmask, p, h, q, e, a);
        if (j0 != 0) {
            const fr_t w = ntt_twiddle(tw, j0 << (tw.log_tw - p - 1), inverse);
            a[1] = f_mul<FR>(a[1], w);
            a[3] = f_mul<FR>(a[3], w);
        }
        fr_t b0 = f_add<FR>(a[0], a[1]);
        fr_t b1 = f_sub<FR>(a[0], a[1]);
        fr_t b2 = f_add<FR>(a[2], a[3]);
        fr_t b3 = f_sub<FR>(a[2], a[3]);
        if (j0 != 0) b2 = f_mul<FR>(b2, ntt_twiddle(tw, j0 << (tw.log_tw - p - 2), inverse));
        b3 = f_mul<FR>(b3, ntt_twiddle(tw, (j0 + h) << (tw.log_tw - p - 2), inverse));
        ntt_sm_put(sm, E, e[0], f_add<FR>(b0, b2));
        ntt_sm_put(sm, E, e[2], f_sub<FR>(b0, b2));
        ntt_sm_put(sm, E, e[1], f_add<FR>(b1, b3));
        ntt_sm_put(sm, E, e[3], f_sub<FR>(b1, b3));
    }
}

// One pass.  Launch: grid = n >> (t + c), block = 2^(t+c-1) threads (2^(t+c-2) with
// QUAD and t >= 2),
// dynamic shared memory = 2^(t+c) * 32 bytes.  Needs 1 <= t, t + c <=
// NTT_MAX_BLOCK_LOG, c <= s - t.
// QUAD (a template argument, so that the radix-2 kernel keeps its registers): stages in
// pairs of ntt_dif_quad / ntt_dit_quad, an odd last stage radix-2.
template <bool QUAD>
DEVI void ntt_pass_dev(fr_t* data, const NttTw& tw, u32 log_n, u32 s, u32 t, u32 c, u32 flags,
                       const fr_t* scale_tab) {
    extern __shared__ __align__(16) u32 ntt_sm[];
    const u32 E = 1u << (t + c);
    const u32 Lbits = s - t;
    const u32 gbits = Lbits - c;  // bits of the L-group index
    const u32 H = blockIdx.x >> gbits;
    const u32 Lg = blockIdx.x & ((1u << gbits) - 1);
    const u32 cmask = (1u << c) - 1;
    const bool dit = flags & NTT_DIT;
    const bool inverse = flags & NTT_INVERSE;

    for (u32 e = threadIdx.x; e < E; e += blockDim.x) {
        const u32 l = e & cmask, J = e >> c;
        const u32 L = (Lg << c) | l;
        const u32 g = (H << s) | (J << Lbits) | L;
        fr_t x = f_load<FR>(data + g);
        if (flags & NTT_SCALE_LOAD) {
            u32 xi = (flags & NTT_SCALE_BITREV) ? bitrev_bits(g, log_n) : g;
            x = f_mul<FR>(x, ntt_scale_factor(scale_tab, xi));
        }
        if (dit && L != 0 && J != 0) {
            u32 ex = (L * bitrev_bits(J, t)) << (tw.log_tw - s);
            x = f_mul<FR>(x, ntt_twiddle(tw, ex, inverse));
        }
        ntt_sm_put(ntt_sm, E, e, x);
    }
    __syncthreads();

    u32 st = 0;
    if (QUAD) {
        for (; st + 1 < t; st += 2) {
            if (dit)
                ntt_dit_quad(ntt_sm, tw, E, c, st, inverse);
            else
                ntt_dif_quad(ntt_sm, tw, E, c, t - 1 - st, inverse);
            __syncthreads();
        }
    }
    for (; st < t; st++) {
        const u32 m = dit ? st : (t - 1 - st);  // half-span 2^m over J
        for (u32 q = threadIdx.x; q < (E >> 1); q += blockDim.x) {
            const u32 l = q & cmask, qq = q >> c;
            const u32 j = qq & ((1u << m) - 1);
            const u32 J0 = ((qq >> m) << (m + 1)) | j;
            const u32 e0 = (J0 << c) | l;
            const u32 e1 = ((J0 + (1u << m)) << c) | l;
            fr_t u = ntt_sm_get(ntt_sm, E, e0);
            fr_t v = ntt_sm_get(ntt_sm, E, e1);
            if (dit) {
                if (j != 0) v = f_mul<FR>(v, ntt_twiddle(tw, j << (tw.log_tw - m - 1), inverse));
                ntt_sm_put(ntt_sm, E, e0, f_add<FR>(u, v));
                ntt_sm_put(ntt_sm, E, e1, f_sub<FR>(u, v));
            } else {
                fr_t d = f_sub<FR>(u, v);
                if (j != 0) d = f_mul<FR>(d, ntt_twiddle(tw, j << (tw.log_tw - m - 1), inverse));
                ntt_sm_put(ntt_sm, E, e0, f_add<FR>(u, v));
                ntt_sm_put(ntt_sm, E, e1, d);
            }
        }
        __syncthreads();
    }

    for (u32 e = threadIdx.x; e < E; e += blockDim.x) {
        const u32 l = e & cmask, J = e >> c;
        const u32 L = (Lg << c) | l;
        const u32 g = (H << s) | (J << Lbits) | L;
        fr_t x = ntt_sm_get(ntt_sm, E, e);
        if (!dit && L != 0 && J != 0) {
            u32 ex = (L * bitrev_bits(J, t)) << (tw.log_tw - s);
            x = f_mul<FR>(x, ntt_twiddle(tw, ex, inverse));
        }
        if (flags & NTT_SCALE_STORE) {
            u32 xi = (flags & NTT_SCALE_BITREV) ? bitrev_bits(g, log_n) : g;
            x = f_mul<FR>(x, ntt_scale_factor(scale_tab, xi));
        }
        f_store<FR>(data + g, x);
    }
}

// a[i] = (a[i]*b[i] - c[i]) * zinv
DEVI void ntt_coset_h_dev(fr_t* a, const fr_t* b, const fr_t* c, const fr_t* zinv, u32 n) {
    u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    fr_t z = f_ldg<FR>(zinv);
    fr_t x = f_mul<FR>(f_load<FR>(a + i), f_ldg<FR>(b + i));
    x = f_sub<FR>(x, f_ldg<FR>(c + i));
    f_store<FR>(a + i, f_mul<FR>(x, z));
}

// H in two buffers (a device too small for a, b, c at once): step 0: x[i] = x[i]*y[i] (a*b on
// the coset); step 1: x[i] = (x[i] - y[i]) * zinv (y then holds c on the coset).
DEVI void ntt_coset_h2_dev(fr_t* x, const fr_t* y, const fr_t* zinv, u32 n, u32 step) {
    u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    fr_t v = f_load<FR>(x + i);
    fr_t w = f_ldg<FR>(y + i);
    if (step == 0) {
        f_store<FR>(x + i, f_mul<FR>(v, w));
    } else {
        f_store<FR>(x + i, f_mul<FR>(f_sub<FR>(v, w), f_ldg<FR>(zinv)));
    }
}

// data[i] *= c*q^x, x = i or rev(i) (flags & NTT_SCALE_BITREV), same table as above
DEVI void fr_scale_tab_dev(fr_t* data, u32 log_n, const fr_t* tab, u32 flags) {
    u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (1u << log_n)) return;
    u32 xi = (flags & NTT_SCALE_BITREV) ? bitrev_bits(i, log_n) : i;
    f_store<FR>(data + i, f_mul<FR>(f_load<FR>(data + i), ntt_scale_factor(tab, xi)));
}

// data[i] *= *s
DEVI void fr_scale_dev(fr_t* data, u32 n, const fr_t* s) {
    u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    f_store<FR>(data + i, f_mul<FR>(f_load<FR>(data + i), f_ldg<FR>(s)));
}

// out[rev(i)] = in[i]  (out-of-place)
DEVI void fr_bitrev_dev(fr_t* out, const fr_t* in, u32 log_n) {
    u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (1u << log_n)) return;
    f_store<FR>(out + bitrev_bits(i, log_n), f_ldg<FR>(in + i));
}

// in place: swap data[i] and data[rev(i)]
DEVI void fr_bitrev_inplace_dev(fr_t* data, u32 log_n) {
    u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (1u << log_n)) return;
    u32 j = bitrev_bits(i, log_n);
    if (i < j) {
        fr_t x = f_load<FR>(data + i);
        fr_t y = f_load<FR>(data + j);
        f_store<FR>(data + i, y);
        f_store<FR>(data + j, x);
    }
}

// out[i] = c * base^i for i < count; sq[b] = base^(2^b) for b < 32 (entries
// past log2(count) unused); c = *cptr, or 1 when cptr == 0.
DEVI void fr_powers_dev(fr_t* out, u32 count, const fr_t* sq, const fr_t* cptr) {
    u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= count) return;
    fr_t r = cptr ? f_ldg<FR>(cptr) : f_one<FR>();
    for (u32 b = 0; b < 32; b++)
        if ((i >> b) & 1) r = f_mul<FR>(r, f_ldg<FR>(sq + b));
    f_store<FR>(out + i, r);
}

#endif // BATON_NTT_NTT_CUH
