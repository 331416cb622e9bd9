#!/usr/bin/env python3
"""Compile and check baton's CUDA kernels.

  python3 scripts/kernel_check.py            NVRTC compile check (no GPU needed;
                                             set NVRTC_LIB or LD_LIBRARY_PATH)
  python3 scripts/kernel_check.py --ptx F    also write the PTX to F
  python3 scripts/kernel_check.py --gpu [--quick] [--bench] [--big]
                                             run on a GPU with CuPy: correctness
                                             checks against scripts/kernel_ref.py,
                                             then timings; short table last.

The kernel sources are concatenated in ORDER (the same order the Rust crate
uses, see kernels/NOTES.md) into one translation unit.
"""
import argparse
import ctypes
import os
import random
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
KDIR = os.path.join(ROOT, "kernels")
sys.path.insert(0, HERE)
import kernel_ref as ref  # noqa: E402

ORDER = [
    "common.cuh",
    "field/mont.cuh",
    "field/fp.cuh",
    "field/fr.cuh",
    "field/inv.cuh",
    "ec/xyzz.cuh",
    "ec/g1.cuh",
    "ec/g2.cuh",
    "ec/affine.cuh",
    "ntt/ntt.cuh",
    "msm/msm.cuh",
    "msm/pairs.cuh",
    "witness/density.cuh",
    "ntt.cu",
    "msm.cu",
    "witness.cu",
    "sparse/spmv.cuh",
    "sparse.cu",
]
TEST_ORDER = ["test/test.cuh", "test.cu"]
NVRTC_OPTS = ["--gpu-architecture=compute_90", "-default-device", "--std=c++17"]


def source(with_tests=True):
    parts = []
    for f in ORDER + (TEST_ORDER if with_tests else []):
        with open(os.path.join(KDIR, f)) as fh:
            txt = fh.read()
        if any(ln.lstrip().startswith("#include") for ln in txt.splitlines()):
            raise SystemExit(f"{f}: #include is not allowed (single concatenated unit)")
        parts.append(f"// ---- {f}\n{txt}\n")
    return "".join(parts)


# ------------------------------------------------------------------ NVRTC
def load_nvrtc():
    cands = [os.environ.get("NVRTC_LIB"), "libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12",
             "/tmp/nvrtc/nvidia/cu13/lib/libnvrtc.so.13"]
    for c in cands:
        if not c:
            continue
        try:
            return ctypes.CDLL(c)
        except OSError:
            pass
    raise SystemExit("libnvrtc not found (pip install --target /tmp/nvrtc 'nvidia-cuda-nvrtc==13.0.*')")


def nvrtc_compile(src, opts=NVRTC_OPTS, name="baton.cu"):
    lib = load_nvrtc()
    prog = ctypes.c_void_p()
    rc = lib.nvrtcCreateProgram(ctypes.byref(prog), src.encode(), name.encode(), 0, None, None)
    if rc != 0:
        raise SystemExit(f"nvrtcCreateProgram failed: {rc}")
    copts = (ctypes.c_char_p * len(opts))(*[o.encode() for o in opts])
    t0 = time.time()
    rc = lib.nvrtcCompileProgram(prog, len(opts), copts)
    dt = time.time() - t0
    size = ctypes.c_size_t()
    lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
    log = ctypes.create_string_buffer(size.value)
    lib.nvrtcGetProgramLog(prog, log)
    logtxt = log.value.decode(errors="replace")
    ptx = None
    if rc == 0:
        lib.nvrtcGetPTXSize(prog, ctypes.byref(size))
        buf = ctypes.create_string_buffer(size.value)
        lib.nvrtcGetPTX(prog, buf)
        ptx = buf.value.decode()
    lib.nvrtcDestroyProgram(ctypes.byref(prog))
    return rc, logtxt, ptx, dt


def compile_check(ptx_out=None, defines=(), with_tests=True):
    src = source(with_tests)
    rc, log, ptx, dt = nvrtc_compile(src, NVRTC_OPTS + [f"-D{d}" for d in defines])
    if log.strip():
        print(log)
    if rc != 0:
        print(f"NVRTC compile FAILED (rc={rc})")
        return False
    entries = [ln.split()[2].split("(")[0] for ln in ptx.splitlines() if ln.startswith(".visible .entry")]
    print(f"NVRTC compile OK in {dt:.2f}s: {len(src)} chars, PTX {len(ptx)} chars, {len(entries)} kernels:")
    print("  " + " ".join(entries))
    if ptx_out:
        with open(ptx_out, "w") as fh:
            fh.write(ptx)
    return True


def ntt_plan(log_n):
    """Passes (s, t, c) of a DIF transform, s descending (DIT: reversed).
    Block = 2^(t+c) elements (<= 1024), 2^(t+c-1) threads, 32*2^(t+c) bytes
    dynamic shared memory, grid = 2^log_n >> (t+c)."""
    if log_n <= 10:
        return [(log_n, log_n, 0)]
    npass = -(-(log_n - 10) // 7)
    rest = log_n - 10
    ps = []
    s = log_n
    for k in range(npass):
        t = -(-rest // (npass - k))
        t = min(t, 7)
        c = min(3, s - t)
        if t + c > 10:
            c = 10 - t
        ps.append((s, t, c))
        s -= t
        rest -= t
    ps.append((s, s, 0))
    return ps



# ------------------------------------------------------------------ GPU side
def gpu_main(args):
    import numpy as np
    import cupy as cp

    rng = random.Random(args.seed)
    src = source()
    t0 = time.time()
    mod = cp.RawModule(code=src, options=tuple(NVRTC_OPTS[1:]), backend="nvrtc")
    MODS = [mod]
    K = {}

    def kern(name):
        key = (id(MODS[0]), name)
        if key not in K:
            K[key] = MODS[0].get_function(name)
        return K[key]

    for n in ["ntt_pass", "test_fr_ops", "msm_accumulate"]:
        kern(n)
    print(f"module compiled+loaded in {time.time() - t0:.1f}s")
    results = []  # (check, status)
    table = []    # timing rows

    def rec(name, ok, extra=""):
        results.append((name, ok, extra))
        print(f"[{'PASS' if ok else 'FAIL'}] {name} {extra}", flush=True)

    # ---------- host <-> device encodings
    def ints_to_u32(vals, nl):
        a = np.zeros((len(vals), nl), dtype=np.uint32)
        for i, v in enumerate(vals):
            for k in range(nl):
                a[i, k] = (v >> (32 * k)) & 0xffffffff
        return a

    def u32_to_ints(a):
        a = np.asarray(a).reshape(-1, a.shape[-1]) if a.ndim > 1 else a
        out = []
        for row in a:
            v = 0
            for k in range(len(row) - 1, -1, -1):
                v = (v << 32) | int(row[k])
            out.append(v)
        return out

    def fr_m(vals):  # canonical ints -> Montgomery u32 rows
        return ints_to_u32([ref.fr_to_mont(v) for v in vals], 8)

    def fr_from_rows(rows):
        return [ref.fr_from_mont(v) for v in u32_to_ints(rows)]

    def fp_m(vals):
        return ints_to_u32([ref.fp_to_mont(v) for v in vals], 12)

    def aff_rows(pts):
        a = np.zeros((len(pts), 24), dtype=np.uint32)
        for i, p in enumerate(pts):
            if p is not ref.INF:
                a[i, :12] = fp_m([p[0]])[0]
                a[i, 12:] = fp_m([p[1]])[0]
        return a

    def xyzz_rows_to_aff(rows):
        out = []
        for r in rows.reshape(-1, 48):
            X, Y, ZZ, ZZZ = (ref.fp_from_mont(v) for v in u32_to_ints(r.reshape(4, 12)))
            out.append(ref.xyzz_to_affine(X, Y, ZZ, ZZZ))
        return out

    def launch(name, grid, block, a, smem=0):
        kern(name)(grid, block, a, shared_mem=smem)

    def sync_check():
        cp.cuda.runtime.deviceSynchronize()

    # ---------- 1. field ops
    def field_check(which, n=1 << 20, nsample=2000):
        nl, mod_, tom, frm = (8, ref.R, ref.fr_to_mont, ref.fr_from_mont) if which == "fr" else \
            (12, ref.P, ref.fp_to_mont, ref.fp_from_mont)
        nrng = np.random.default_rng(rng.randrange(1 << 30))
        a = nrng.integers(0, 1 << 32, size=(n, nl), dtype=np.uint64).astype(np.uint32)
        b = nrng.integers(0, 1 << 32, size=(n, nl), dtype=np.uint64).astype(np.uint32)
        top = 0x3fffffff if which == "fr" else 0x0fffffff  # < modulus
        a[:, -1] &= top
        b[:, -1] &= top
        # special values
        specials = [0, 1, mod_ - 1, mod_ - 2, (mod_ - 1) // 2, 1 << 200]
        for k, v in enumerate(specials):
            a[k] = ints_to_u32([v], nl)[0]
            b[k] = ints_to_u32([specials[-1 - k]], nl)[0]
        b[10] = a[10]
        n_inv = 256
        da, db = cp.asarray(a), cp.asarray(b)
        out = cp.full((9, n, nl), 0xdeadbeef, dtype=cp.uint32)
        launch(f"test_{which}_ops", ((n + 255) // 256,), (256,), (da, db, out, np.uint32(n), np.uint32(n_inv)))
        sync_check()
        o = out.get()
        idx = list(range(12)) + rng.sample(range(12, n), nsample)
        bad = 0
        rinv = ref.inv(1 << (32 * nl), mod_)
        for i in idx:
            x = u32_to_ints(a[i:i + 1])[0]
            y = u32_to_ints(b[i:i + 1])[0]
            got = u32_to_ints(o[:, i, :])
            exp = [(x + y) % mod_, (x - y) % mod_, x * y * rinv % mod_, x * x * rinv % mod_, (-x) % mod_,
                   x * rinv % mod_, x * (1 << (32 * nl)) % mod_, (1 if x == y else 0) | ((1 if x == 0 else 0) << 32),
                   (ref.inv(x * rinv % mod_, mod_) * (1 << (32 * nl)) % mod_ if x else 0) if i < n_inv else x]
            for k in range(9):
                if got[k] != exp[k]:
                    bad += 1
                    if bad < 5:
                        print(f"  {which} op {k} i={i}: got {got[k]:x} exp {exp[k]:x}")
        rec(f"{which} ops (n={n}, {len(idx)} sampled x 9 ops)", bad == 0, f"bad={bad}")

    field_check("fr")
    field_check("fp")

    # ---------- 2. G1 ops
    G = (ref.G1_X, ref.G1_Y)
    npts = 64
    ks = [rng.randrange(1, ref.R) for _ in range(2 * npts)]
    pts = [ref.g1_mul(G, k) for k in ks]
    Pp, Qp = pts[:npts], pts[npts:]
    Qp[3] = Pp[3]                        # P == Q (mixed add doubling branch)
    Qp[4] = ref.g1_neg(Pp[4])            # P == -Q
    dP, dQ = cp.asarray(aff_rows(Pp)), cp.asarray(aff_rows(Qp))
    out = cp.zeros((9, npts, 48), dtype=cp.uint32)
    launch("test_g1_ops", (1,), (npts,), (dP, dQ, out, np.uint32(npts)))
    sync_check()
    o = out.get()
    bad = 0
    for i in range(npts):
        p, q = Pp[i], Qp[i]
        p2 = ref.g1_add(p, p)
        exp = [ref.g1_add(p, q), p2, ref.g1_add(p2, ref.g1_add(q, q)), ref.g1_add(p2, p2), ref.INF, p2, p, p, p]
        got = xyzz_rows_to_aff(o[:, i, :])
        for k in range(9):
            if got[k] != exp[k]:
                bad += 1
                if bad < 5:
                    print(f"  g1 op {k} i={i} mismatch")
    rec(f"g1 xyzz ops ({npts} pts x 9 cases)", bad == 0, f"bad={bad}")

    # ---------- 3. NTT
    log_tw = 28 if args.big else 24
    W = ref.fr_omega(log_tw)

    def sq_table(base):
        t, x = [], base
        for _ in range(32):
            t.append(x)
            x = x * x % ref.R
        return cp.asarray(fr_m(t))

    def powers(count, base, c=None):
        out = cp.empty((count, 8), dtype=cp.uint32)
        cptr = cp.asarray(fr_m([c])) if c is not None else None
        launch("fr_powers", ((count + 255) // 256,), (256,),
               (out, np.uint32(count), sq_table(base), cptr if cptr is not None else np.uint64(0)))
        return out

    t0 = time.time()
    tw = powers(1 << log_tw, W)
    sync_check()
    print(f"twiddle table 2^{log_tw} built in {time.time() - t0:.2f}s")
    # check a few twiddles
    twh = tw[:4].get()
    assert fr_from_rows(twh) == [pow(W, e, ref.R) for e in range(4)], "twiddle table"
    tws = [(1 << (log_tw - 1)) - 1, 1 << (log_tw - 1), (1 << log_tw) - 1, 12345]
    for e in tws:
        assert fr_from_rows(tw[e:e + 1].get())[0] == pow(W, e, ref.R)

    def scale_table(cval, q):
        t = cp.empty((1 << 15, 8), dtype=cp.uint32)
        t[:1 << 14] = powers(1 << 14, q, cval)
        t[1 << 14:] = powers(1 << 14, pow(q, 1 << 14, ref.R))
        return t

    def ntt_run(data, log_n, dit, inverse, scale=None, scale_flags=0):
        """data: cupy (n,8) u32.  DIF: natural->bitrev; DIT: bitrev->natural."""
        ps = ntt_plan(log_n)
        if dit:
            ps = ps[::-1]
        for k, (s, t, c) in enumerate(ps):
            flags = (1 if dit else 0) | (2 if inverse else 0)
            if scale is not None:
                if (scale_flags & 4) and k == 0:
                    flags |= 4 | (scale_flags & 16)
                if (scale_flags & 8) and k == len(ps) - 1:
                    flags |= 8 | (scale_flags & 16)
            E = 1 << (t + c)
            launch("ntt_pass", ((1 << log_n) >> (t + c),), (E // 2,),
                   (data, tw, np.uint32(log_n), np.uint32(log_tw), np.uint32(0), np.uint32(s), np.uint32(t),
                    np.uint32(c),
                    np.uint32(flags), scale if scale is not None else np.uint64(0)), smem=E * 32)

    def rand_fr(n, nrng):
        a = nrng.integers(0, 1 << 32, size=(n, 8), dtype=np.uint64).astype(np.uint32)
        a[:, 7] &= 0x3fffffff
        return a

    g = ref.FR_GENERATOR
    nrng = np.random.default_rng(rng.randrange(1 << 30))
    for log_n in range(1, 17) if not args.quick else (4, 10, 13):
        n = 1 << log_n
        om = ref.fr_omega(log_n)
        a = rand_fr(n, nrng)
        av = fr_from_rows(a)
        expf = ref.ntt(av, om)
        # forward DIF natural -> bitrev
        d = cp.asarray(a)
        ntt_run(d, log_n, dit=False, inverse=False)
        got = fr_from_rows(d.get())
        ok1 = all(got[ref.bitrev(i, log_n)] == expf[i] for i in range(n))
        # forward DIT bitrev -> natural
        d = cp.asarray(a[[ref.bitrev(i, log_n) for i in range(n)]])
        ntt_run(d, log_n, dit=True, inverse=False)
        ok2 = fr_from_rows(d.get()) == expf
        # inverse DIF with 1/n scale on store, then DIT forward back -> identity (in natural order)
        ninv = ref.inv(n, ref.R)
        st = scale_table(ninv, 1)
        d = cp.asarray(a)
        ntt_run(d, log_n, dit=False, inverse=True, scale=st, scale_flags=8)
        got = fr_from_rows(d.get())
        expi = ref.intt(av, om)
        ok3 = all(got[ref.bitrev(i, log_n)] == expi[i] for i in range(n))
        # coset forward: coeffs natural, scale g^i on load, DIF
        st = scale_table(1, g)
        d = cp.asarray(a)
        ntt_run(d, log_n, dit=False, inverse=False, scale=st, scale_flags=4)
        got = fr_from_rows(d.get())
        expc = ref.coset_ntt(av, om, g)
        ok4 = all(got[ref.bitrev(i, log_n)] == expc[i] for i in range(n))
        rec(f"ntt 2^{log_n} (DIF fwd, DIT fwd, DIF inv+1/n, coset fwd) plan={ntt_plan(log_n)}",
            ok1 and ok2 and ok3 and ok4, f"{ok1} {ok2} {ok3} {ok4}")

    # H pipeline on device vs reference
    def h_device(da, db, dc, log_n):
        n = 1 << log_n
        ninv = ref.inv(n, ref.R)
        st_fwd = scale_table(ninv, g)                     # (1/n) g^i, on coefficient index
        st_inv = scale_table(ninv, ref.inv(g, ref.R))     # (1/n) g^-i
        for d in (da, db, dc):
            ntt_run(d, log_n, dit=False, inverse=True, scale=st_fwd, scale_flags=8 | 16)
            ntt_run(d, log_n, dit=True, inverse=False)
        zinv = cp.asarray(fr_m([ref.inv((pow(g, n, ref.R) - 1) % ref.R, ref.R)]))
        launch("ntt_coset_h", ((n + 255) // 256,), (256,), (da, db, dc, zinv, np.uint32(n)))
        ntt_run(da, log_n, dit=False, inverse=True, scale=st_inv, scale_flags=8 | 16)
        out = cp.empty_like(da)
        launch("fr_bitrev", ((n + 255) // 256,), (256,), (out, da, np.uint32(log_n)))
        return out

    for log_n in (3, 10, 12) if not args.quick else (10,):
        n = 1 << log_n
        om = ref.fr_omega(log_n)
        a, b, c = rand_fr(n, nrng), rand_fr(n, nrng), rand_fr(n, nrng)
        got = fr_from_rows(h_device(cp.asarray(a), cp.asarray(b), cp.asarray(c), log_n).get())
        exp = ref.h_pipeline(fr_from_rows(a), fr_from_rows(b), fr_from_rows(c), om, g)
        rec(f"H pipeline 2^{log_n}", got == exp)

    # ---------- 4. MSM
    R_ONE = fr_m([1])[0]

    def msm_device(dbases, dscal, n, c, S=64, keep=None, phases=None):
        evs = []

        def mark(name):
            if phases is not None:
                e = cp.cuda.Event()
                e.record()
                evs.append((name, e))
        mark("start")
        nwin = -(-256 // c)
        half = 1 << (c - 1)
        nbk = nwin * half
        counts = cp.zeros(nbk + 1, dtype=cp.uint32)
        cap = n * nwin
        keys = cp.empty(cap, dtype=cp.uint32)
        vals = cp.empty(cap, dtype=cp.uint32)
        nseg = -(-cap // S)
        buckets = cp.empty((nbk, 48), dtype=cp.uint32)
        pfirst = cp.empty((nseg, 48), dtype=cp.uint32)
        plast = cp.empty((nseg, 48), dtype=cp.uint32)
        tb = 256
        launch("msm_count", (-(-n // tb),), (tb,), (dscal, np.uint32(n), np.uint32(c), np.uint32(nwin), counts))
        mark("count")
        scan(counts, nbk + 1)
        mark("scan")
        launch("msm_scatter", (-(-n // tb),), (tb,),
               (dscal, np.uint32(n), np.uint32(c), np.uint32(nwin), counts, keys, vals))
        mark("scatter")
        launch("msm_accumulate", (-(-nseg // 128),), (128,),
               (dbases, keys, vals, counts, np.uint32(nbk), np.uint32(S), buckets, pfirst, plast))
        mark("accumulate")
        launch("msm_finalize", (-(-nbk // 256),), (256,),
               (counts, np.uint32(nbk), np.uint32(S), buckets, pfirst, plast))
        mark("finalize")
        # reduction levels
        out = cp.empty((nwin + 1, 48), dtype=cp.uint32)
        M = half
        Tin, Rin = None, buckets
        while True:
            lg = min(7, M.bit_length() - 1)
            G_ = M >> lg
            if G_ == 1:
                launch("msm_reduce_level", (-(-nwin // 64),), (64,),
                       (Tin if Tin is not None else np.uint64(0), Rin, np.uint32(nwin), np.uint32(M),
                        np.uint32(lg), out, np.uint64(0)))
                break
            To = cp.empty((nwin * G_, 48), dtype=cp.uint32)
            Ro = cp.empty((nwin * G_, 48), dtype=cp.uint32)
            launch("msm_reduce_level", (-(-(nwin * G_) // 64),), (64,),
                   (Tin if Tin is not None else np.uint64(0), Rin, np.uint32(nwin), np.uint32(M), np.uint32(lg),
                    To, Ro))
            Tin, Rin, M = To, Ro, G_
        mark("reduce")
        nb1 = min(1024, -(-n // 128))
        partials = cp.empty((nb1, 48), dtype=cp.uint32)
        launch("msm_ones", (nb1,), (128,), (dbases, dscal, np.uint32(n), partials))
        launch("ec_sum", (1,), (128,), (partials, np.uint32(nb1), out[nwin:]))
        mark("ones")
        if phases is not None:
            evs[-1][1].synchronize()
            for (n0, e0), (n1, e1) in zip(evs, evs[1:]):
                phases[n1] = phases.get(n1, 0.0) + cp.cuda.get_elapsed_time(e0, e1)
        if keep is not None:
            keep.update(counts=counts, keys=keys)
        return out

    def scan(arr, m):
        nb = -(-m // 4096)
        sums = cp.empty(nb, dtype=cp.uint32) if nb > 1 else None
        launch("scan_block", (nb,), (1024,), (arr, np.uint32(m), sums if sums is not None else np.uint64(0)))
        if nb > 1:
            scan(sums, nb)
            launch("scan_add", (nb,), (1024,), (arr, np.uint32(m), sums))

    def combine(out_rows, c):
        nwin = out_rows.shape[0] - 1
        aff = xyzz_rows_to_aff(out_rows)
        acc = (1, 1, 0)
        for w in range(nwin - 1, -1, -1):
            for _ in range(c):
                acc = ref.jac_double(acc)
            acc = ref.jac_add(acc, ref.jac_from_affine(aff[w]))
        acc = ref.jac_add(acc, ref.jac_from_affine(aff[nwin]))
        return ref.jac_to_affine(acc)

    # scan check
    for m in (5, 4096, 4097, 1 << 20, 3 * (1 << 22) + 17):
        x = cp.asarray(nrng.integers(0, 50, size=m, dtype=np.uint32))
        e = cp.cumsum(x.astype(cp.uint64)).astype(cp.uint32)
        scan(x, m)
        rec(f"scan m={m}", bool((x == e).all()))

    # small MSMs vs Python: bases random multiples of G (host), scalars random/PoRep-like
    basepool = [ref.g1_mul(G, rng.randrange(1, ref.R)) for _ in range(64)]

    def make_bases(n):
        # cheap distinct-ish points: pool[i % 64] + pool[(i // 64) % 64] combos computed on host
        pts = []
        for i in range(n):
            a, b = basepool[i % 64], basepool[(i * 7 + 3) % 64]
            pts.append(ref.g1_add(a, b) if i % 3 else a)
        return pts

    def scal_rows(kind, n):
        if kind == "random":
            rows = rand_fr(n, nrng)
        else:  # porep-like: 45% zero, 45% one, 10% random
            rows = rand_fr(n, nrng)
            u = nrng.random(n)
            rows[u < 0.45] = 0
            rows[(u >= 0.45) & (u < 0.9)] = R_ONE
        return rows

    for log_n in (8, 10, 12) if not args.quick else (8,):
        n = 1 << log_n
        pts = make_bases(n)
        pts[5] = ref.INF
        db = cp.asarray(aff_rows(pts))
        for kind in ("random", "porep"):
            rows = scal_rows(kind, n)
            rows[7] = fr_m([ref.R - 1])[0]  # -1
            rows[9] = fr_m([2])[0]
            sc = fr_from_rows(rows)
            exp = ref.msm_pippenger(pts, sc, 8) if n > 512 else ref.msm_naive(pts, sc)
            for c in ((5, 13) if log_n == 8 else (9,)):
                got = combine(msm_device(db, cp.asarray(rows), n, c).get(), c)
                rec(f"msm 2^{log_n} {kind} c={c} vs python", got == exp)
    # all scalars equal (one huge bucket per window, spans many segments) + all ones
    n = 1 << 10
    pts = make_bases(n)
    db = cp.asarray(aff_rows(pts))
    for name, val in (("all-equal", rng.randrange(ref.R)), ("all-ones", 1), ("all-zero", 0)):
        rows = fr_m([val] * n)
        s = (1, 1, 0)
        for p in pts:
            s = ref.jac_add(s, ref.jac_from_affine(p))
        exp = ref.jac_to_affine(ref.jac_mul(s, val)) if val else ref.INF
        got = combine(msm_device(db, cp.asarray(rows), n, 10, S=16).get(), 10)
        rec(f"msm 2^10 {name} vs python", got == exp)

    # ---------- large MSM: device-generated bases e_i * G, check via sum s_i e_i
    def multiples(step, count):
        # step*1, step*2, ..., step*count (affine) via Jacobian sums + batch inversion
        js, cur = [], ref.jac_from_affine(step)
        jstep = cur
        for _ in range(count):
            js.append(cur)
            cur = ref.jac_add(cur, jstep)
        zs = [j[2] for j in js]
        pref, acc = [], 1
        for z in zs:
            pref.append(acc)
            acc = acc * z % ref.P
        inv = ref.inv(acc, ref.P)
        out = [None] * count
        for k in range(count - 1, -1, -1):
            zi = inv * pref[k] % ref.P
            inv = inv * zs[k] % ref.P
            X, Y, _ = js[k]
            out[k] = (X * zi * zi % ref.P, Y * zi * zi * zi % ref.P)
        return out

    t0 = time.time()
    maxlog = 26 if args.bench else 22
    A = multiples(G, 1024)
    Bs = multiples(ref.g1_mul(G, 2048), 1 << (maxlog - 10))
    assert Bs[5] == ref.g1_mul(G, 2048 * 6) and A[7] == ref.g1_mul(G, 8)
    print(f"host tables for device bases: {time.time() - t0:.1f}s")
    dA, dB = cp.asarray(aff_rows(A)), cp.asarray(aff_rows(Bs))
    NMAX = 1 << maxlog
    bases_big = cp.empty((NMAX, 24), dtype=cp.uint32)
    t0 = time.time()
    launch("test_gen_bases", (-(-(NMAX // 16) // 128),), (128,), (dA, dB, bases_big, np.uint32(NMAX)))
    sync_check()
    print(f"device bases 2^{maxlog}: {time.time() - t0:.2f}s")
    # spot check a few generated bases
    for i in (0, 1, 1023, 1024, NMAX - 1):
        e = (i & 1023) + 1 + 2048 * ((i >> 10) + 1)
        assert xyzz_like_aff(bases_big[i].get(), ref, u32_to_ints) == ref.g1_mul(G, e), f"gen base {i}"

    def expected_big(dscal, n):
        nb = 1024
        part = cp.empty((nb, 8), dtype=cp.uint32)
        launch("test_fr_dot_eidx", (nb,), (256,), (dscal, np.uint32(n), part))
        k = sum(fr_from_rows(part.get())) % ref.R
        return ref.g1_mul(G, k)

    big_sizes = (20, 22) if not args.quick else (22,)
    for log_n in big_sizes:
        n = 1 << log_n
        for kind in ("random", "porep"):
            dsc = cp.asarray(scal_rows(kind, n))
            exp = expected_big(dsc, n)
            c = 16
            got = combine(msm_device(bases_big[:n], dsc, n, c, S=64).get(), c)
            # halves must also add up
            h1 = combine(msm_device(bases_big[:n // 2], dsc[:n // 2], n // 2, 13).get(), 13)
            h2 = combine(msm_device(bases_big[n // 2:n], dsc[n // 2:], n // 2, 13).get(), 13)
            rec(f"msm 2^{log_n} {kind} c={c} vs sum(s_i e_i)G and halves(c=13)", got == exp and ref.g1_add(h1, h2) == exp)

    # ---------- timings
    def timeit(fn, reps=5, warm=1):
        for _ in range(warm):
            fn()
        cp.cuda.runtime.deviceSynchronize()
        ts = []
        for _ in range(reps):
            e0, e1 = cp.cuda.Event(), cp.cuda.Event()
            e0.record()
            fn()
            e1.record()
            e1.synchronize()
            ts.append(cp.cuda.get_elapsed_time(e0, e1))
        ts.sort()
        return ts[len(ts) // 2]

    if args.bench:
        # raw multiplication throughput
        nthr = 132 * 2048
        for which, nl in (("fp", 12), ("fr", 8)):
            d = cp.asarray(nrng.integers(0, 1 << 28, size=(nthr, nl), dtype=np.uint32))
            iters = 256
            ms = timeit(lambda: launch(f"test_{which}_mul_bench", (nthr // 256,), (256,), (d, np.uint32(iters))))
            rate = nthr * iters * 2 / (ms * 1e-3)
            table.append((f"{which} mul throughput", f"{rate / 1e9:.1f} G mul/s", ""))
        for log_n in range(20, 28):
            n = 1 << log_n
            d = cp.asarray(rand_fr(n, nrng))
            ms = timeit(lambda: ntt_run(d, log_n, dit=False, inverse=False))
            table.append((f"NTT 2^{log_n} (DIF, {len(ntt_plan(log_n))} passes)", f"{ms:.2f} ms", ""))
            del d
        for log_n in (20, 22, 24, 26):
            n = 1 << log_n
            for kind in ("random", "porep"):
                dsc = cp.asarray(scal_rows(kind, n))
                for c in ((16, 20) if log_n >= 24 else (16,)):
                    ms = timeit(lambda: msm_device(bases_big[:n], dsc, n, c, S=64), reps=3)
                    ph = {}
                    msm_device(bases_big[:n], dsc, n, c, S=64, phases=ph)
                    phs = " ".join(f"{k}={v:.1f}" for k, v in ph.items())
                    table.append((f"MSM 2^{log_n} {kind} c={c}", f"{ms:.1f} ms", phs))
                    print(table[-1], flush=True)
                del dsc
                cp.get_default_memory_pool().free_all_blocks()

    if args.bench:
        # register-cap variants of msm_accumulate (MSM_ACC_MINB), 2^26 c=20
        n = 1 << 26
        for minb in (4, 5):
            MODS[0] = cp.RawModule(code=src, options=tuple(NVRTC_OPTS[1:] + [f"-DMSM_ACC_MINB={minb}"]),
                                   backend="nvrtc")
            for kind in ("random", "porep"):
                dsc = cp.asarray(scal_rows(kind, n))
                ms = timeit(lambda: msm_device(bases_big[:n], dsc, n, 20, S=64), reps=3)
                ph = {}
                msm_device(bases_big[:n], dsc, n, 20, S=64, phases=ph)
                phs = " ".join(f"{k}={v:.1f}" for k, v in ph.items())
                table.append((f"MSM 2^26 {kind} c=20 MINB={minb}", f"{ms:.1f} ms", phs))
                print(table[-1], flush=True)
                del dsc
        MODS[0] = mod

    print("\n==== summary ====")
    nfail = sum(1 for r in results if not r[1])
    for name, ok, extra in results:
        print(f"{'PASS' if ok else 'FAIL'}  {name}")
    for row in table:
        print(f"{row[0]:<34} {row[1]:>10}  {row[2]}")
    print(f"checks: {len(results) - nfail} passed, {nfail} failed")
    return nfail == 0


def xyzz_like_aff(row, ref_, u32_to_ints):
    x, y = u32_to_ints(row.reshape(2, 12))
    if x == 0 and y == 0:
        return ref_.INF
    return (ref_.fp_from_mont(x), ref_.fp_from_mont(y))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpu", action="store_true")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--bench", action="store_true")
    ap.add_argument("--big", action="store_true", help="2^28 twiddle table (for NTT 2^27)")
    ap.add_argument("--ptx")
    ap.add_argument("-D", dest="defines", action="append", default=[],
                    help="NAME=VALUE passed to NVRTC (a [gpu] knob's define, e.g. MSM_ACC_MINB=4)")
    ap.add_argument("--production", action="store_true", help="leave the test kernels out")
    ap.add_argument("--seed", type=int, default=int(time.time()))
    args = ap.parse_args()
    if args.gpu:
        ok = gpu_main(args)
    else:
        ok = compile_check(args.ptx, args.defines, not args.production)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
