// Host check of the batch-affine arithmetic (no GPU): kernels/field/inv.cuh and kernels/ec/affine.cuh
// compiled as C++ with the field and curve headers they need, the PTX carry chain emulated as in
// field_check.cpp (emulation.h). Built by scripts/affine-host-check.sh once with the host's
// defaults (FIELD_SQR=1, FIELD_LAZY=1) and once with the headers' own (0, 0).
//
// Checks (each counts its failures; any failure makes the exit status 1):
//   * f_inv_window<P>(a) * a == 1 and f_inv_window(a) < m, for Fp and Fr, on edge values (0 must
//     give 0; 1, R mod m, R^2 mod m, 2, m - 1, m - 2, all-ones limbs) and `count` random residues
//     (a quarter of them just below m), split over the CPU's threads; the windows W = 3 and
//     W = 5 (digits that straddle limbs) and mont.cuh's bitwise f_inv must give the same values
//     on a few thousand of them; the product count of W = 4 is printed.
//   * G1: points k*G built from the generator by XYZZ additions and doublings (ec_add_affine,
//     ec_add, ec_dbl of ec/xyzz.cuh), made affine with one f_inv_window each (X/ZZ, Y/ZZZ); then
//     batches of K = 1, 2, 4, 8, 16 pairs mixing chords, equal pairs (tangent), negated pairs,
//     infinity on either side or both, some with out aliasing a or b and some with b the same
//     array as a: ec_affine_add_pairs must equal the XYZZ sum ec_add_affine(xyzz(a), b) made
//     affine, and every input and output must be infinity or satisfy y^2 = x^3 + 4.
//   * Printed on stdout for the driver's Python: a few inversions (Montgomery limbs) and a few
//     pair additions of every case (normal form), which Python checks with its own integers
//     (the inverse, the curve equation, the chord and tangent formulas).
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <thread>
#include <vector>

#include "emulation.h"  // the qualifiers, vector types and carry chain of the GPU side

#include "../../kernels/field/mont.cuh"
#include "../../kernels/field/fp.cuh"
#include "../../kernels/field/fr.cuh"
#include "../../kernels/field/inv.cuh"
#include "../../kernels/ec/xyzz.cuh"
#include "../../kernels/ec/g1.cuh"
#include "../../kernels/ec/affine.cuh"

// kernels/msm/pairs.cuh run as the GPU runs it: one block after another, each block's threads as
// CPU threads that meet at a barrier for __syncthreads; __shared__ data is a function-local
// static, which the one block running shares.
#include <barrier>
struct dim1 { u32 x; };
static thread_local dim1 threadIdx, blockIdx;
static dim1 blockDim, gridDim;
static std::barrier<>* block_barrier = nullptr;
static void __syncthreads() { block_barrier->arrive_and_wait(); }
static inline u32 min(u32 a, u32 b) { return a < b ? a : b; }
#define __shared__ static
#include "../../kernels/msm/pairs.cuh"
#undef __shared__

static char TAG[64];  // the build, "sqr=1 lazy=1", at the head of every summary line

// body(lo, hi) over [0, n) cut into one range per CPU thread (each thread has its own carry flag)
static void parallel_for(size_t n, const std::function<void(size_t, size_t)>& body) {
    unsigned t = std::thread::hardware_concurrency();
    t = t == 0 ? 1 : t > 32 ? 32 : t;
    std::vector<std::thread> pool;
    for (unsigned k = 0; k < t; k++) {
        const size_t lo = n * k / t, hi = n * (k + 1) / t;
        if (lo < hi) pool.emplace_back([&body, lo, hi] { body(lo, hi); });
    }
    for (auto& th : pool) th.join();
}

template <class P> static bool below_m(const mont_t<P>& x) {
    for (int i = P::N - 1; i >= 0; i--)
        if (x.v[i] != P::m(i)) return x.v[i] < P::m(i);
    return false;  // m itself
}

template <class P> static mont_t<P> random_elem(std::mt19937_64& r) {
    mont_t<P> x;
    for (int i = 0; i < P::N; i++) x.v[i] = (u32)r();
    x.v[P::N - 1] %= P::m(P::N - 1);  // below the modulus
    if (r() % 4 == 0) {  // a quarter just below m: m - d, 0 < d < 2^64
        const u64 d = (r() >> (r() % 64)) | 1;
        u64 borrow = 0;
        for (int i = 0; i < P::N; i++) {
            const u64 sub = (i == 0 ? (d & 0xffffffffu) : i == 1 ? (d >> 32) : 0) + borrow;
            x.v[i] = (u32)((u64)P::m(i) - sub);
            borrow = P::m(i) < sub ? 1 : 0;
        }
    }
    return x;
}

// 0, 1 (raw), R mod m (Montgomery 1), R^2 mod m, 2 (raw), m - 1, m - 2, all-ones limbs under
// the top, one all-ones limb under the top
constexpr int INV_EDGES = 9;
template <class P> static mont_t<P> inv_edge(int k) {
    mont_t<P> x = f_zero<P>();
    if (k == 1) x.v[0] = 1;
    if (k == 2) x = f_one<P>();
    if (k == 3)
        for (int i = 0; i < P::N; i++) x.v[i] = P::r2(i);
    if (k == 4) x.v[0] = 2;
    if (k == 5 || k == 6) {
        u32 borrow = (u32)(k - 4);
        for (int i = 0; i < P::N; i++) {
            x.v[i] = P::m(i) - borrow;
            borrow = P::m(i) < borrow ? 1u : 0u;
        }
    }
    if (k == 7)
        for (int i = 0; i < P::N - 1; i++) x.v[i] = 0xffffffffu;
    if (k == 8) x.v[P::N - 2] = 0xffffffffu;
    return x;
}

template <class P> static void print_hex(const char* tag, const mont_t<P>& x) {
    printf(" %s ", tag);
    for (int i = P::N - 1; i >= 0; i--) printf("%08x", x.v[i]);
}

// 1 unless f_inv_window(a) is below m and a's inverse (0 for a = 0)
template <class P> static int inv_wrong(const mont_t<P>& a) {
    const mont_t<P> ai = f_inv_window<P>(a);
    if (!below_m<P>(ai)) return 1;
    if (f_is_zero<P>(a)) return f_is_zero<P>(ai) ? 0 : 1;
    return f_is_one<P>(f_mul<P>(ai, a)) ? 0 : 1;
}

template <class P> static int check_inv(const char* name, size_t count, size_t cross) {
    std::mt19937_64 r(777);
    std::vector<mont_t<P>> xs(count + cross + 4);
    for (auto& x : xs) x = random_elem<P>(r);
    int bad = 0;
    for (int k = 0; k < INV_EDGES; k++) bad += inv_wrong<P>(inv_edge<P>(k));
    std::atomic<int> rbad{0};
    parallel_for(count, [&](size_t lo, size_t hi) {
        int b = 0;
        for (size_t i = lo; i < hi; i++) b += inv_wrong<P>(xs[i]);
        rbad += b;
    });
    bad += rbad;
    // the other windows (W = 5: digits across limbs) and mont.cuh's bitwise f_inv: the same values
    int cross_bad = 0;
    for (size_t i = 0; i < cross + INV_EDGES; i++) {
        const mont_t<P> a = i < INV_EDGES ? inv_edge<P>((int)i) : xs[i - INV_EDGES];
        const mont_t<P> x = f_inv_window<P>(a);
        if (!f_eq<P>(x, f_inv_window<P, 3>(a))) cross_bad++;
        if (!f_eq<P>(x, f_inv_window<P, 5>(a))) cross_bad++;
        if (!f_eq<P>(x, f_inv<P>(a))) cross_bad++;
    }
    // for Python: the edges and a few random ones, as Montgomery limbs
    for (int k = 0; k < INV_EDGES + 4; k++) {
        const mont_t<P> a = k < INV_EDGES ? inv_edge<P>(k) : xs[k];
        printf("inv %s", name);
        print_hex<P>("a", a);
        print_hex<P>("ai", f_inv_window<P>(a));
        printf("\n");
    }
    fprintf(stderr, "%s %s: f_inv_window runs %d products (W = 4; W = 3: %d, W = 5: %d)\n", TAG, name,
            f_inv_window_products<P, 4>(), f_inv_window_products<P, 3>(), f_inv_window_products<P, 5>());
    fprintf(stderr, "%s %s: %zu inversions, %d wrong\n", TAG, name, count + INV_EDGES, bad);
    fprintf(stderr, "%s %s: %zu inversions by W = 3, W = 5 and mont.cuh's f_inv, %d mismatches\n", TAG,
            name, cross + INV_EDGES, cross_bad);
    return bad + cross_bad;
}

// ---- G1 ----------------------------------------------------------------------------------------
typedef FpParams FP;

static fp_t fp_hex(const char* h) {  // a normal-form integer below p, 96 hex digits
    fp_t x = f_zero<FP>();
    for (int i = 0; i < 96; i++) {
        const char c = h[95 - i];
        const u32 d = c <= '9' ? c - '0' : c - 'a' + 10;
        x.v[i / 8] |= d << (4 * (i % 8));
    }
    return f_to_mont<FP>(x);
}

static g1_affine g1_inf_affine() {
    g1_affine r;
    r.x = f_zero<FP>();
    r.y = f_zero<FP>();
    return r;
}

static bool same(const g1_affine& a, const g1_affine& b) { return f_eq<FP>(a.x, b.x) && f_eq<FP>(a.y, b.y); }

// infinity, or y^2 = x^3 + 4 (with both coordinates canonical)
static bool on_curve(const g1_affine& p) {
    if (ec_affine_is_inf(p)) return true;
    if (!below_m<FP>(p.x) || !below_m<FP>(p.y)) return false;
    fp_t four = f_zero<FP>();
    four.v[0] = 4;
    const fp_t rhs = f_add<FP>(f_mul<FP>(f_sqr<FP>(p.x), p.x), f_to_mont<FP>(four));
    return f_eq<FP>(f_sqr<FP>(p.y), rhs);
}

// x = X/ZZ, y = Y/ZZZ with one inversion: 1/ZZ = ZZZ/(ZZ ZZZ), 1/ZZZ = ZZ/(ZZ ZZZ)
static g1_affine to_affine(const g1_xyzz& p) {
    if (ec_is_inf(p)) return g1_inf_affine();
    const fp_t inv = f_inv_window<FP>(f_mul<FP>(p.zz, p.zzz));
    g1_affine r;
    r.x = f_mul<FP>(p.x, f_mul<FP>(p.zzz, inv));
    r.y = f_mul<FP>(p.y, f_mul<FP>(p.zz, inv));
    return r;
}

static g1_affine neg(const g1_affine& p) {
    g1_affine r = p;
    r.y = f_neg<FP>(p.y);
    return r;
}

template <int K, bool INL> static void add_pairs(const g1_affine* a, const g1_affine* b, g1_affine* out) {
    ec_affine_add_pairs<FpOps, K, INL>(a, b, out);
}

static void add_pairs_k(int k, bool inl, const g1_affine* a, const g1_affine* b, g1_affine* out) {
    switch (k * 2 + (inl ? 1 : 0)) {
        case 2: add_pairs<1, false>(a, b, out); break;
        case 3: add_pairs<1, true>(a, b, out); break;
        case 4: add_pairs<2, false>(a, b, out); break;
        case 5: add_pairs<2, true>(a, b, out); break;
        case 8: add_pairs<4, false>(a, b, out); break;
        case 9: add_pairs<4, true>(a, b, out); break;
        case 16: add_pairs<8, false>(a, b, out); break;
        case 17: add_pairs<8, true>(a, b, out); break;
        case 32: add_pairs<16, false>(a, b, out); break;
        case 33: add_pairs<16, true>(a, b, out); break;
        default: fprintf(stderr, "no batch of %d\n", k); exit(2);
    }
}

struct Batch {
    int k, mode;          // mode 0-2: separate arrays; 3: out = a; 4: out = b; 5: b = a
    g1_affine a[16], b[16], out[16], ref[16];
    u32 kind[16];         // ec_pair_den's case of each pair
};

static std::vector<g1_affine> PTS;  // check_g1's points k*G, for check_pairs_round

static int check_g1(int pairs_per_k) {
    const g1_affine G = {fp_hex("17f1d3a73197d7942695638c4fa9ac0fc3688c4f9774b905a14e3a3f171bac586c55e83ff97a1aeffb3af00adb22c6bb"),
                         fp_hex("08b3f481e3aaa0f1a09e30ed741d8ae4fcf5e095d5d00af600db18cb2c04b3edd03cc744a2888ae40caa232946c5e7e1")};
    int off = on_curve(G) ? 0 : 1;
    // k*G by the XYZZ formulas: + G, doublings, + an earlier XYZZ point, + an earlier affine point
    const int NPTS = 512;
    std::vector<g1_affine> pts(NPTS);
    g1_xyzz acc = ec_from_affine(G), prev = acc;
    for (int i = 0; i < NPTS; i++) {
        pts[i] = to_affine(acc);
        off += on_curve(pts[i]) ? 0 : 1;
        const g1_xyzz was = acc;
        switch (i % 4) {
            case 0: ec_add_affine<FpOps>(acc, G); break;
            case 1: acc = ec_dbl<FpOps>(acc); break;
            case 2: ec_add<FpOps>(acc, prev); break;
            case 3: ec_add_affine<FpOps>(acc, pts[i / 2]); break;
        }
        prev = was;
    }
    PTS = pts;
    std::mt19937_64 r(4242);
    auto pt = [&] { return pts[r() % NPTS]; };
    std::vector<Batch> batches;
    const int ks[5] = {1, 2, 4, 8, 16};
    for (int k : ks) {
        for (int bi = 0; bi < pairs_per_k / k; bi++) {
            Batch B;
            B.k = k;
            B.mode = bi % 7 == 6 ? 6 : bi % 6;  // 6: only the cases without a division
            for (int i = 0; i < k; i++) {
                int c = (int)(r() % 20);
                if (B.mode == 6) c = 12 + (int)(r() % 7);
                const g1_affine p = pt();
                g1_affine q = pt();
                while (same(p, q)) q = pt();
                switch (c) {
                    case 10: case 11: B.a[i] = p; B.b[i] = p; break;           // tangent
                    case 12: case 13: B.a[i] = p; B.b[i] = neg(p); break;      // a == -b
                    case 14: case 15: B.a[i] = g1_inf_affine(); B.b[i] = p; break;
                    case 16: case 17: B.a[i] = p; B.b[i] = g1_inf_affine(); break;
                    case 18: B.a[i] = B.b[i] = g1_inf_affine(); break;
                    default: B.a[i] = p; B.b[i] = q; break;                    // chord
                }
                if (B.mode == 5) B.b[i] = B.a[i];
                fp_t den;
                B.kind[i] = ec_pair_den<FpOps>(B.a[i], B.b[i], den);
            }
            batches.push_back(B);
        }
    }
    std::atomic<int> bad{0}, boff{0};
    parallel_for(batches.size(), [&](size_t lo, size_t hi) {
        for (size_t j = lo; j < hi; j++) {
            Batch& B = batches[j];
            int bb = 0, oo = 0;
            for (int i = 0; i < B.k; i++) {
                g1_xyzz s = ec_from_affine(B.a[i]);
                ec_add_affine<FpOps>(s, B.b[i]);
                B.ref[i] = to_affine(s);
                oo += (on_curve(B.a[i]) ? 0 : 1) + (on_curve(B.b[i]) ? 0 : 1) + (on_curve(B.ref[i]) ? 0 : 1);
            }
            g1_affine a[16], b[16];
            for (int i = 0; i < B.k; i++) a[i] = B.a[i], b[i] = B.b[i];
            const bool inl = j % 2 == 1;
            if (B.mode == 3) add_pairs_k(B.k, inl, a, b, a);
            else if (B.mode == 4) add_pairs_k(B.k, inl, a, b, b);
            else if (B.mode == 5) add_pairs_k(B.k, inl, a, a, B.out);
            else add_pairs_k(B.k, inl, a, b, B.out);
            for (int i = 0; i < B.k; i++) {
                if (B.mode == 3) B.out[i] = a[i];
                if (B.mode == 4) B.out[i] = b[i];
                bb += same(B.out[i], B.ref[i]) ? 0 : 1;
                oo += on_curve(B.out[i]) ? 0 : 1;
            }
            bad += bb;
            boff += oo;
        }
    });
    off += boff;
    // counts by case, and a few of each case printed for Python, in normal form
    int by_kind[5] = {0, 0, 0, 0, 0}, printed[5] = {0, 0, 0, 0, 0}, total = 0;
    for (const Batch& B : batches) {
        for (int i = 0; i < B.k; i++) {
            const u32 c = B.kind[i];
            by_kind[c]++;
            total++;
            if (printed[c] >= 4 || (B.mode != 0 && B.mode < 6 && printed[c] >= 2)) continue;
            printed[c]++;
            printf("pair %u k %d mode %d", c, B.k, B.mode);
            print_hex<FP>("x1", f_from_mont<FP>(B.a[i].x));
            print_hex<FP>("y1", f_from_mont<FP>(B.a[i].y));
            print_hex<FP>("x2", f_from_mont<FP>(B.b[i].x));
            print_hex<FP>("y2", f_from_mont<FP>(B.b[i].y));
            print_hex<FP>("x3", f_from_mont<FP>(B.out[i].x));
            print_hex<FP>("y3", f_from_mont<FP>(B.out[i].y));
            printf("\n");
        }
    }
    fprintf(stderr,
            "%s g1: %d pair additions in %zu batches of K = 1, 2, 4, 8, 16 (chord %d, tangent %d, "
            "a infinity %d, b infinity %d, sum infinity %d)\n",
            TAG, total, batches.size(), by_kind[EC_PAIR_CHORD], by_kind[EC_PAIR_TANGENT], by_kind[EC_PAIR_B],
            by_kind[EC_PAIR_A], by_kind[EC_PAIR_INF]);
    fprintf(stderr, "%s g1: %d differ from the XYZZ sums, %d points off the curve\n", TAG, (int)bad, off);
    return bad + off;
}


// ---- the batch-affine round kernel (kernels/msm/pairs.cuh) -----------------------------------
// Buckets of every length (empty, one, two, odd, long), entries with random signs over bases
// that repeat (doublings), come with their negation (infinity sums) or are infinity; three
// rounds, one of them without keys (the keyless accumulation). After each round: every bucket
// holds ceil(len/2) entries from the scanned starts, keys and values name each output, every
// point is on the curve, and every bucket's points sum (XYZZ) to the same point as before.
static void run_blocks(u32 blocks, u32 threads, const std::function<void()>& body) {
    blockDim.x = threads;
    gridDim.x = blocks;
    for (u32 b = 0; b < blocks; b++) {
        std::barrier<> bar((std::ptrdiff_t)threads);
        block_barrier = &bar;
        std::vector<std::thread> ts;
        for (u32 t = 0; t < threads; t++)
            ts.emplace_back([&body, b, t] {
                blockIdx.x = b;
                threadIdx.x = t;
                body();
            });
        for (auto& th : ts) th.join();
    }
}

static g1_affine sum_affine(const std::vector<g1_affine>& pts) {
    g1_xyzz acc = g1_xyzz_inf();
    for (const g1_affine& p : pts) ec_add_affine<FpOps>(acc, p);
    return to_affine(acc);
}

static int check_pairs_round(const std::vector<g1_affine>& pts, bool split) {
    std::mt19937_64 r(99);
    // bases: points, a few infinities, a few repeated
    std::vector<g1_affine> bases;
    for (int i = 0; i < 200; i++) bases.push_back(pts[i]);
    bases.push_back(g1_inf_affine());
    bases.push_back(g1_inf_affine());
    const u32 INF = 200;
    std::vector<u32> vals;
    std::vector<u32> starts = {0};
    auto entry = [&](u32 idx, bool neg) { vals.push_back(idx | (neg ? 0x80000000u : 0u)); };
    auto close = [&] { starts.push_back((u32)vals.size()); };
    // the hand-made buckets: doubling, P + (-P), infinity on either side and both, P + P + P,
    // an empty one, a single one
    entry(5, false), entry(5, false), close();
    entry(7, false), entry(7, true), close();
    entry(INF, false), entry(9, true), close();
    entry(11, false), entry(INF, true), close();
    entry(INF, false), entry(INF + 1, false), close();
    entry(13, true), entry(13, true), entry(13, true), close();
    close();
    entry(17, false), close();
    // random buckets, many of them empty, one long one
    for (int b = 0; b < 300; b++) {
        const int kind = (int)(r() % 10);
        int len = kind < 2 ? 0 : kind < 4 ? 1 + (int)(r() % 3) : (int)(r() % 60);
        if (b == 150) len = 1000;
        for (int i = 0; i < len; i++) {
            const u32 idx = r() % 40 == 0 ? INF : (u32)(r() % (b % 7 == 0 ? 4 : 200));  // some reuse a few bases
            entry(idx, r() % 2 == 1);
        }
        close();
    }
    const u32 nbk = (u32)starts.size() - 1;
    // what every bucket sums to
    std::vector<g1_affine> want(nbk);
    for (u32 b = 0; b < nbk; b++) {
        std::vector<g1_affine> ps;
        for (u32 j = starts[b]; j < starts[b + 1]; j++) ps.push_back(msm_pairs_load(bases.data(), vals[j]));
        want[b] = sum_affine(ps);
    }
    int bad = 0, checked = 0;
    std::vector<g1_affine> src = bases;
    for (int round = 0; round < 3; round++) {
        const bool keyed = round != 1;
        const u32 total = starts[nbk];
        std::vector<u32> ncounts(nbk + 1, 0xdeadbeefu);
        run_blocks((nbk + 255) / 256, 256, [&] { msm_pairs_count_dev(starts.data(), nbk, ncounts.data()); });
        for (u32 b = 1; b <= nbk; b++) ncounts[b] += ncounts[b - 1];  // the scan kernels' inclusive scan
        const u32 out = ncounts[nbk];
        std::vector<g1_affine> dst(out + 1);
        std::vector<u32> nkeys(out + 1, 0xffffffffu), nvals(out + 1, 0xffffffffu);
        if (split) {
            // The three kernels, each grid past the outputs by a block (its threads must return),
            // the denominators filled with garbage first (den writes every one).
            std::vector<fp_t> den(out + 200);  // garbage past the outputs: not read
            memset(den.data(), 0x5a, den.size() * sizeof(fp_t));
            const u32 grid = out / 64 + 2;
            run_blocks(grid, 64, [&] {
                msm_pairs_den_dev(src.data(), vals.data(), starts.data(), ncounts.data(), nbk, den.data(),
                                  keyed ? nkeys.data() : nullptr, nvals.data());
            });
            // The inversion's grid as the host sizes it (a few blocks a multiprocessor): here 1 to
            // 3 blocks, so a thread takes 2 to 27 residues; its running products in dst.
            run_blocks(1 + (u32)round, MSM_PAIRS_THREADS,
                       [&] { msm_batch_inverse_dev(den.data(), (fp_t*)dst.data(), ncounts.data(), nbk); });
            run_blocks(grid, 64, [&] {
                msm_pairs_finish_dev(src.data(), vals.data(), ncounts.data(), nbk, den.data(), dst.data(),
                                     nvals.data());
            });
        } else {
            const u32 threads = (total + MSM_PAIRS_PER - 1) / MSM_PAIRS_PER;
            run_blocks((threads + MSM_PAIRS_THREADS - 1) / MSM_PAIRS_THREADS + 1, MSM_PAIRS_THREADS, [&] {
                msm_pairs_round_dev(src.data(), vals.data(), starts.data(), ncounts.data(), nbk, dst.data(),
                                    keyed ? nkeys.data() : nullptr, nvals.data());
            });
        }
        for (u32 b = 0; b < nbk; b++) {
            const u32 len = starts[b + 1] - starts[b], nlen = ncounts[b + 1] - ncounts[b];
            if (nlen != (len + 1) / 2) bad++;
            std::vector<g1_affine> ps;
            for (u32 o = ncounts[b]; o < ncounts[b + 1]; o++) {
                if ((keyed && nkeys[o] != b) || nvals[o] != o) bad++;
                if (!on_curve(dst[o])) bad++;
                ps.push_back(dst[o]);
            }
            if (!same(sum_affine(ps), want[b])) bad++;
            checked++;
        }
        if (!keyed && nkeys[0] != 0xffffffffu) bad++;  // no keys written without the buffer
        src = dst;
        starts = ncounts;
        vals = nvals;
        fprintf(stderr, "%s pairs%s (%u a thread): round %d, %u entries to %u in %u buckets\n", TAG,
                split ? " split" : "", MSM_PAIRS_PER, round + 1, total, out, nbk);
    }
    fprintf(stderr, "%s pairs%s (%u a thread): %d bucket checks after 3 rounds, %d wrong\n", TAG,
            split ? " split" : "", MSM_PAIRS_PER, checked, bad);
    return bad;
}

int main(int argc, char** argv) {
    const size_t fp_count = argc > 1 ? strtoull(argv[1], nullptr, 10) : 1000000;
    const size_t fr_count = argc > 2 ? strtoull(argv[2], nullptr, 10) : fp_count;
    const int pairs = argc > 3 ? atoi(argv[3]) : 4096;
    snprintf(TAG, sizeof TAG, "sqr=%d lazy=%d", FIELD_SQR, FIELD_LAZY);
    int bad = check_inv<FpParams>("fp", fp_count, 2000);
    bad += check_inv<FrParams>("fr", fr_count, 2000);
    bad += check_g1(pairs);
    bad += check_pairs_round(PTS, false);
    bad += check_pairs_round(PTS, true);
    return bad == 0 ? 0 : 1;
}
