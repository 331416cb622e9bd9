#!/usr/bin/env python3
"""A Python model of kernels/ntt/ntt.cuh's `ntt_pass` (index math only, plain ints mod r):
every pass of the plan (src/gpu/plan.rs `ntt_plan_in`), radix-2 stages and the quads of
`ntt_pass_r4` (`gpu.ntt_radix = 4`), DIF and DIT, forward and inverse, checked against kernel_ref's NTT. Barriers are
modelled by finishing each stage over the whole block before the next. No GPU needed:
run it after changing the pass's index math."""
import random
import sys

sys.path.insert(0, __file__.rsplit("/", 1)[0])
import kernel_ref as ref  # noqa: E402

R = ref.R


def plan_in(log_n, block):
    block = max(4, min(10, block))
    if log_n <= block:
        return [(log_n, log_n, 0)]
    most = block - 3
    rest = log_n - block
    npass = -(-rest // most)
    s, out = log_n, []
    for k in range(npass):
        t = min(-(-rest // (npass - k)), most)
        c = min(3, s - t)
        if t + c > block:
            c = block - t
        out.append((s, t, c))
        s -= t
        rest -= t
    out.append((s, s, 0))
    return out


def bitrev_bits(x, bits):
    return int(format(x, "0%db" % bits)[::-1], 2) if bits else 0


# The split table (`gpu.ntt_twiddles = "split"`, kernels/ntt/ntt.cuh) as the backend builds it:
# W^i for i < 2^K, then W^(j*2^K) for j < 2^(log_tw-K); SPLIT[0] is K (0: one table).
SPLIT = [0]


def split_table(W, log_tw, k):
    lo = [pow(W, i, R) for i in range(1 << k)]
    step = pow(W, 1 << k, R)
    return lo + [pow(step, j, R) for j in range(1 << (log_tw - k))]


TABLES = {}


def twiddle(W, log_tw, e, inverse):
    n = 1 << log_tw
    if inverse:
        e = (n - e) & (n - 1)
    k = SPLIT[0]
    if k == 0:
        return pow(W, e, R)
    tab = TABLES.setdefault((W, log_tw, k), split_table(W, log_tw, k))
    lo, hi = e & ((1 << k) - 1), e >> k
    if hi == 0:
        return tab[lo]
    h = tab[(1 << k) + hi]
    return h if lo == 0 else tab[lo] * h % R


def run_pass(data, W, log_tw, log_n, s, t, c, dit, inverse, radix4):
    E = 1 << (t + c)
    Lbits = s - t
    gbits = Lbits - c
    cmask = (1 << c) - 1
    for blk in range(len(data) >> (t + c)):
        H, Lg = blk >> gbits, blk & ((1 << gbits) - 1)
        sm = [0] * E
        gidx = [0] * E
        for e in range(E):
            l, J = e & cmask, e >> c
            L = (Lg << c) | l
            g = (H << s) | (J << Lbits) | L
            gidx[e] = g
            x = data[g]
            if dit and L and J:
                x = x * twiddle(W, log_tw, (L * bitrev_bits(J, t)) << (log_tw - s), inverse) % R
            sm[e] = x
        tw = lambda e: twiddle(W, log_tw, e, inverse)  # noqa: E731
        st = 0
        if radix4:
            while st + 1 < t:
                for q in range(E >> 2):
                    l, qq = q & cmask, q >> c
                    if dit:
                        p = st
                        h = 1 << p
                        j0 = qq & (h - 1)
                        J0 = ((qq >> p) << (p + 2)) | j0
                        e = [((J0 + i * h) << c) | l for i in range(4)]
                        a = [sm[k] for k in e]
                        if j0:
                            w = tw(j0 << (log_tw - p - 1))
                            a[1], a[3] = a[1] * w % R, a[3] * w % R
                        b0, b1, b2, b3 = a[0] + a[1], a[0] - a[1], a[2] + a[3], a[2] - a[3]
                        if j0:
                            b2 = b2 * tw(j0 << (log_tw - p - 2))
                        b3 = b3 * tw((j0 + h) << (log_tw - p - 2))
                        sm[e[0]], sm[e[2]] = (b0 + b2) % R, (b0 - b2) % R
                        sm[e[1]], sm[e[3]] = (b1 + b3) % R, (b1 - b3) % R
                    else:
                        m = t - 1 - st
                        h = 1 << (m - 1)
                        j0 = qq & (h - 1)
                        J0 = ((qq >> (m - 1)) << (m + 1)) | j0
                        e = [((J0 + i * h) << c) | l for i in range(4)]
                        a = [sm[k] for k in e]
                        d0, d1 = a[0] - a[2], a[1] - a[3]
                        a0, a1 = a[0] + a[2], a[1] + a[3]
                        if j0:
                            d0 = d0 * tw(j0 << (log_tw - m - 1))
                        d1 = d1 * tw((j0 + h) << (log_tw - m - 1))
                        x, y = a0 - a1, d0 - d1
                        if j0:
                            w = tw(j0 << (log_tw - m))
                            x, y = x * w, y * w
                        sm[e[0]], sm[e[1]] = (a0 + a1) % R, x % R
                        sm[e[2]], sm[e[3]] = (d0 + d1) % R, y % R
                st += 2
        while st < t:
            m = st if dit else t - 1 - st
            for q in range(E >> 1):
                l, qq = q & cmask, q >> c
                j = qq & ((1 << m) - 1)
                J0 = ((qq >> m) << (m + 1)) | j
                e0, e1 = (J0 << c) | l, ((J0 + (1 << m)) << c) | l
                u, v = sm[e0], sm[e1]
                w = tw(j << (log_tw - m - 1))
                if dit:
                    v = v * w % R
                    sm[e0], sm[e1] = (u + v) % R, (u - v) % R
                else:
                    sm[e0], sm[e1] = (u + v) % R, (u - v) * w % R
            st += 1
        for e in range(E):
            l, J = e & cmask, e >> c
            L = (Lg << c) | l
            x = sm[e]
            if not dit and L and J:
                x = x * twiddle(W, log_tw, (L * bitrev_bits(J, t)) << (log_tw - s), inverse) % R
            data[gidx[e]] = x


def transform(vals, log_n, log_tw, block, dit, inverse, radix4):
    W = ref.fr_omega(log_tw)
    plan = plan_in(log_n, block)
    if dit:
        plan = plan[::-1]
    d = list(vals)
    for s, t, c in plan:
        run_pass(d, W, log_tw, log_n, s, t, c, dit, inverse, radix4)
    return d


def main():
    rnd = random.Random(5)
    cases = 0
    for log_n in [2, 3, 5, 6, 7, 9, 10, 11, 12]:
        n = 1 << log_n
        v = [rnd.randrange(R) for _ in range(n)]
        for inverse in (False, True):
            w = ref.fr_omega(log_n)
            if inverse:
                w = pow(w, R - 2, R)
            want = ref.dft_naive(v, w) if n <= 64 else ref.ntt(v, w)
            rev = lambda a: [a[ref.bitrev(i, log_n)] for i in range(n)]  # noqa: E731
            for block in (4, 5, 7, 8):
                for radix4 in (False, True):
                    for log_tw in (log_n, log_n + 2):
                        # One table, and split at ceil(log_tw / 2) (the backend splits from
                        # 2^20 on; the layout's arithmetic is the same at every size).
                        for k in (0, (log_tw + 1) // 2):
                            SPLIT[0] = k if k < log_tw else 0
                            dif = transform(v, log_n, log_tw, block, False, inverse, radix4)
                            assert rev(dif) == want, ("DIF", log_n, block, radix4, inverse, k)
                            dit = transform(rev(v), log_n, log_tw, block, True, inverse, radix4)
                            assert dit == want, ("DIT", log_n, block, radix4, inverse, k)
                            cases += 2
    SPLIT[0] = 0
    print(f"ntt_pass model: {cases} transforms equal the reference NTT (one table and split)")


if __name__ == "__main__":
    main()
