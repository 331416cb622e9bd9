//! Launch plans that need no device: the NTT pass list ([`ntt`]), the MSM window and its
//! buffer sizes, and the level plan of the bucket reduction. Pure and tested on the CPU.

use super::host::{GpuGroup, XYZZ_LIMBS};
use super::options::{MsmScatterOrder, WindowRule};

mod ntt;
mod pieces;
mod reduce;
mod streamed;

pub use ntt::{
    flags, ntt_auto_columns, ntt_plan, ntt_plan_cols, ntt_plan_in, twiddle_bytes, twiddle_entries,
    twiddle_split, Pass, TWIDDLE_SPLIT_FROM,
};
pub use pieces::{msm_pieces, piece_bounds, resident_msm_scratch, Cut, LEAN_PIECE};
pub use reduce::{reduce_plan, ReduceLevel};
pub use streamed::{
    partition_minimum, split_rooms, streamed_bytes, streamed_minimum, streamed_pieces, Streams,
    H_TABLES_BYTES, STREAM_PIECES_MIN, STREAM_PIECE_MIN, STREAM_ROOM, STREAM_SLOTS,
};

/// Points below which the MSM stays on the CPU.
pub const MIN_GPU_MSM: usize = 1 << 10;

/// The MSM window for `n` scalars: grows with n up to 16 (2^18..2^22), `large` bits above 2^22
/// (`gpu.msm_window_large`, [`crate::gpu::options::DEFAULT_MSM_WINDOW_LARGE`] unless configured;
/// kernels/NOTES.md measurements).
pub fn msm_window(n: usize, large: u32) -> u32 {
    let log = usize::BITS - n.max(1).leading_zeros() - 1;
    if n > 1 << 22 {
        large
    } else {
        log.saturating_sub(2).clamp(8, 16)
    }
}

/// The window for an MSM of n points, `nontrivial` of them with a scalar other than 0 and 1, under
/// `rule`: from n ([`msm_window`]), or from the count (the 0/1 scalars make no bucket entries, so
/// the count is the work the window trades against its buckets), but not below the points rule's
/// window capped at 16: the per-window work (the sums of the ones, the bucket reduction) follows n,
/// and a window of 14 for the ~10^5 non-trivial scalars of a PoRep-like 2^20 MSM measured 1.35x
/// slower than 16 on the H200 (BENCHMARKS.md, "H200 — GPU knob defaults").
pub fn window_for(rule: WindowRule, n: usize, nontrivial: usize) -> u32 {
    let w = |k: usize| msm_window(k, rule.large);
    if rule.counts(n) {
        w(nontrivial.min(n).max(1)).max(w(n).min(16))
    } else {
        w(n)
    }
}

/// Whether the bucket sort of an MSM of n scalars scatters a window at a time
/// (`msm_scatter_window`) under `order`, `counted` being the device's count of its scalars other
/// than 0 and 1 (`None`: not counted). `"auto"` takes it where at least half of the scalars were
/// counted as making digits. On the H200 (BENCHMARKS.md, "H200 — GPU knob defaults") it took the
/// scatter of a dense 2^24 MSM from 17.8 to 10.8 ms (the MSM 0.951x, 2^26 0.942x, 2^20 and 2^22
/// 0.98-1.00x), but every window's slice reads all n scalars again, so with the ~10 % of
/// non-trivial scalars of a PoRep-like witness it was slower (1.07-1.33x). A model fitted to those
/// rows (scatter time a·k per entry in scalar order, b·k + r·n in window order) breaks even at k ≈
/// n/2.
pub fn scatter_by_window(order: MsmScatterOrder, n: usize, counted: Option<usize>) -> bool {
    match order {
        MsmScatterOrder::Scalar => false,
        MsmScatterOrder::Window => true,
        MsmScatterOrder::Auto => counted.is_some_and(|k| 2 * k.min(n) >= n),
    }
}

/// Device scratch bytes an MSM of n points of group `G` may need under `rule`, before the
/// count is known: with the count-chosen window, the most over every count up to n (within
/// one window's range of counts the scratch grows with the count, so the top of each range
/// and n itself are the candidates).
pub fn msm_scratch_bound<G: GpuGroup>(n: usize, rule: WindowRule) -> u64 {
    let n = n.max(1);
    let at = |k: usize| {
        MsmShape::for_group::<G>(n, window_for(rule, n, k))
            .with_nontrivial(k)
            .scratch_bytes(n)
    };
    if !rule.counts(n) {
        return at(n);
    }
    (1..usize::BITS)
        .flat_map(|j| [(1usize << j) - 1, 1usize << j])
        .map(|k| k.min(n))
        .chain([n])
        .map(at)
        .max()
        .unwrap_or(0)
}

/// Segment length of `msm_accumulate`.
pub const MSM_SEGMENT: usize = 64;

/// Segments per group at the first level of `msm_chains`; each level's groups are this many of
/// the level below's (kernels/msm/msm.cuh; passed as `-DMSM_CHAIN_SPAN`).
pub const MSM_CHAIN_SPAN: u32 = 32;
/// The most slices one window of the stored-digit scatter is written in (`gpu.msm_scatter_parts`).
pub const MAX_SCATTER_PARTS: u32 = 8;

/// Whether `parts` is a slice count the stored-digit scatter takes: a power of two up to
/// [`MAX_SCATTER_PARTS`] (the config's check; the launch also wants it within the window).
pub fn scatter_parts_ok(parts: u32) -> bool {
    parts.is_power_of_two() && parts <= MAX_SCATTER_PARTS
}
/// Levels of `msm_chains` at most (`-DMSM_CHAIN_LEVELS`): groups of 32, 1024 and 32768 segments.
pub const MSM_CHAIN_LEVELS: u32 = 3;

/// Multiprocessors assumed when the device's count is unknown (the H200 has 132).
pub const DEFAULT_SMS: u32 = 132;

/// Sizes of one MSM launch sequence with window c over n scalars.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MsmShape {
    /// Window bits.
    pub c: u32,
    /// Windows.
    pub nwin: u32,
    /// Buckets per window (2^(c−1)).
    pub half: u32,
    /// All buckets.
    pub nbk: u32,
    /// Room for bucket entries (keys, values): windows × the scalars that may make digits.
    pub entries: usize,
    /// Accumulation segments (of [`MSM_SEGMENT`] entries).
    pub nseg: u32,
    /// Blocks of `msm_ones`.
    pub nb1: u32,
    /// u64 limbs per XYZZ point of the group (G1 unless made by [`MsmShape::for_group`]).
    pub xyzz_limbs: usize,
    /// Whether the scatter runs a window at a time ([`scatter_by_window`]; its grid is `nwin`
    /// slices). False unless set by [`MsmShape::scattered_by_window`].
    pub by_window: bool,
}

impl MsmShape {
    /// The shape for n scalars (n ≥ 1, n·nwin < 2^32), each of which may make digits.
    pub fn new(n: usize, c: u32) -> Self {
        let nwin = 256u32.div_ceil(c);
        let half = 1u32 << (c - 1);
        MsmShape {
            c,
            nwin,
            half,
            nbk: nwin * half,
            entries: 0,
            nseg: 0,
            nb1: (n.div_ceil(128)).min(1024) as u32,
            xyzz_limbs: XYZZ_LIMBS,
            by_window: false,
        }
        .with_nontrivial(n)
    }

    /// The same shape with room for the entries of `k` scalars only (the count of scalars
    /// other than 0 and 1, which alone make digits; at least one, so no buffer is empty).
    pub fn with_nontrivial(self, k: usize) -> Self {
        let entries = k.max(1) * self.nwin as usize;
        MsmShape {
            entries,
            nseg: (entries as u64).div_ceil(MSM_SEGMENT as u64) as u32,
            ..self
        }
    }

    /// Whether the digits of n scalars (4 bytes per scalar and window) fit the segments' buffer
    /// (two XYZZ points per segment), which the count pass may lend them
    /// (`gpu.msm_scatter_digits = "stored"`): the accumulation writes it only after the
    /// scatter has read them. With room for the entries of k ≥ 2n/3 scalars they always do.
    pub fn stored_digits_fit(&self, n: usize) -> bool {
        let digits = 4 * u64::from(self.nwin) * n as u64;
        digits <= 2 * 8 * self.xyzz_limbs as u64 * u64::from(self.nseg)
    }

    /// Whether an MSM of shape `other` can add to buckets of this shape (the same buckets:
    /// window, windows and group).
    pub fn shares_buckets(&self, other: &MsmShape) -> bool {
        (self.c, self.nwin, self.nbk, self.xyzz_limbs)
            == (other.c, other.nwin, other.nbk, other.xyzz_limbs)
    }

    /// The shape after one batch-affine round (kernels/msm/pairs.cuh): every bucket's entries
    /// halved, rounded up, so at most (entries + the buckets that hold one) / 2 of them.
    pub fn paired(&self) -> Self {
        let entries = ((self.entries + (self.nbk as usize).min(self.entries)) / 2).max(1);
        MsmShape {
            entries,
            nseg: (entries as u64).div_ceil(MSM_SEGMENT as u64) as u32,
            ..*self
        }
    }

    /// The same shape with the scatter a window at a time, or not.
    pub fn scattered_by_window(self, by_window: bool) -> Self {
        MsmShape { by_window, ..self }
    }

    /// The shape for n scalars of group `G`.
    pub fn for_group<G: GpuGroup>(n: usize, c: u32) -> Self {
        MsmShape {
            xyzz_limbs: G::XYZZ_LIMBS,
            ..Self::new(n, c)
        }
    }

    /// The most scalars one launch sequence takes with window c (n < 2^31, n·nwin < 2^32).
    pub fn max_points(c: u32) -> usize {
        let nwin = 256u64.div_ceil(c as u64);
        (((1u64 << 32) - 1) / nwin).min((1 << 31) - 1) as usize
    }

    /// The reduction levels for a device of `sms` multiprocessors ([`reduce_plan`]).
    pub fn reduce_levels(&self, sms: u32) -> Vec<ReduceLevel> {
        reduce_plan(self.nwin, self.half, sms)
    }

    /// Device scratch bytes of one sequence over n scalars, scalars included, bases excluded.
    pub fn scratch_bytes(&self, n: usize) -> u64 {
        let n = n as u64;
        let xyzz = 8 * self.xyzz_limbs as u64;
        let entries = self.entries as u64;
        // Two consecutive levels (T and R each) are alive at once; the first level's output
        // is the largest (at most half the buckets).
        let reduce = 4 * xyzz * self.nbk as u64 / 2;
        32 * n
            + 4 * (self.nbk as u64 + 1)
            + 8 * entries
            + xyzz * self.nbk as u64
            + 2 * xyzz * self.nseg as u64
            + reduce
            + xyzz * (self.nwin as u64 + 1 + self.nb1 as u64)
            + (1 << 20)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::host::{G1, G2, G2_XYZZ_LIMBS};
    use crate::gpu::options::{MsmWindow, DEFAULT_MSM_WINDOW_LARGE};

    #[test]
    fn the_scatter_goes_by_window_for_counted_dense_scalars_only() {
        use MsmScatterOrder::{Auto, Scalar, Window};
        let n = 1usize << 24;
        assert!(scatter_by_window(Auto, n, Some(n)), "dense, counted");
        assert!(scatter_by_window(Auto, n, Some(n / 2)), "half, counted");
        assert!(!scatter_by_window(Auto, n, Some(n / 2 - 1)));
        assert!(!scatter_by_window(Auto, n, Some(n / 10)), "PoRep-like");
        assert!(
            !scatter_by_window(Auto, n, None),
            "not counted (2^22 and below)"
        );
        assert!(!scatter_by_window(Auto, 1, Some(0)));
        assert!(scatter_by_window(Auto, 1, Some(1)));
        assert!(
            scatter_by_window(Auto, n, Some(2 * n)),
            "a count above n is n"
        );
        for counted in [None, Some(0), Some(n)] {
            assert!(scatter_by_window(Window, n, counted));
            assert!(!scatter_by_window(Scalar, n, counted));
        }
        let sh = MsmShape::new(n, 20);
        assert!(!sh.by_window, "off unless set");
        assert!(sh.scattered_by_window(true).by_window);
    }

    #[test]
    fn stored_digits_fit_the_segments_buffer_when_most_scalars_make_digits() {
        // 4 bytes per scalar and window against two XYZZ points (192 bytes each in G1, 384 in
        // G2) per 64 entries, so room for the entries of k >= 2n/3 scalars holds them.
        let (g1, g2) = (
            |n, c| MsmShape::new(n, c),
            |n, c| MsmShape::for_group::<G2>(n, c),
        );
        assert!(
            g1(1 << 24, 20).stored_digits_fit(1 << 24),
            "0.87 of 1.31 GB"
        );
        assert!(g1(1 << 26, 20).stored_digits_fit(1 << 26), "3.5 of 5.2 GB");
        assert!(g2(1 << 25, 20).stored_digits_fit(1 << 25));
        assert!(g1(1 << 20, 16).stored_digits_fit(1 << 20));
        let n = 3 << 20;
        assert!(
            g1(n, 20).with_nontrivial(2 << 20).stored_digits_fit(n),
            "k = 2n/3"
        );
        assert!(
            !g1(n, 20)
                .with_nontrivial((2 << 20) - 1024)
                .stored_digits_fit(n),
            "k below 2n/3"
        );
    }

    #[test]
    fn pieces_share_buckets_of_one_window_and_group() {
        let a = MsmShape::new(1 << 24, 20);
        assert!(a.shares_buckets(&MsmShape::new((1 << 24) + 5, 20).with_nontrivial(9)));
        assert!(a.shares_buckets(&a.scattered_by_window(true)));
        assert!(
            !a.shares_buckets(&MsmShape::new(1 << 24, 16)),
            "another window"
        );
        assert!(
            !a.shares_buckets(&MsmShape::for_group::<G2>(1 << 24, 20)),
            "another group"
        );
    }

    #[test]
    fn windows_and_shapes() {
        assert_eq!(msm_window(1 << 10, DEFAULT_MSM_WINDOW_LARGE), 8);
        assert_eq!(msm_window(1 << 16, DEFAULT_MSM_WINDOW_LARGE), 14);
        assert_eq!(msm_window(1 << 22, DEFAULT_MSM_WINDOW_LARGE), 16);
        assert_eq!(msm_window((1 << 22) + 1, DEFAULT_MSM_WINDOW_LARGE), 20);
        let s = MsmShape::new(1 << 26, 20);
        assert_eq!((s.nwin, s.nbk), (13, 13 << 19));
        assert!(MsmShape::max_points(20) >= 1 << 28);
        assert!(s.scratch_bytes(1 << 26) > 12 << 30);
        let g2 = MsmShape::for_group::<G2>(1 << 20, 16);
        assert_eq!(g2.xyzz_limbs, G2_XYZZ_LIMBS);
        assert!(g2.scratch_bytes(1 << 20) > MsmShape::new(1 << 20, 16).scratch_bytes(1 << 20));
    }

    #[test]
    fn count_chosen_windows_and_their_scratch_bound() {
        let (p, nt) = (
            WindowRule::from(MsmWindow::Points),
            WindowRule::from(MsmWindow::Nontrivial),
        );
        let auto = WindowRule::from(MsmWindow::Auto);
        assert_eq!(
            window_for(auto, 1 << 24, 1_700_000),
            16,
            "auto counts above 2^22"
        );
        assert_eq!(
            window_for(auto, 1 << 22, 0),
            msm_window(1 << 22, DEFAULT_MSM_WINDOW_LARGE),
            "and not up to it"
        );
        assert_eq!(
            msm_scratch_bound::<G1>(1 << 20, auto),
            msm_scratch_bound::<G1>(1 << 20, p)
        );
        assert_eq!(
            msm_scratch_bound::<G1>(1 << 24, auto),
            msm_scratch_bound::<G1>(1 << 24, nt)
        );
        // PoRep-like 2^24: ~10 % of the scalars make digits and want the window of 2^20.7.
        assert_eq!(window_for(p, 1 << 24, 1_700_000), 20);
        let large = WindowRule { large: 22, ..nt };
        assert_eq!(window_for(large, 1 << 26, 1 << 26), 22, "the large window");
        assert_eq!(
            window_for(large, 1 << 24, 1_700_000),
            16,
            "not below 2^22 counted"
        );
        assert_eq!(
            window_for(large, 1 << 20, 1 << 20),
            msm_window(1 << 20, DEFAULT_MSM_WINDOW_LARGE)
        );
        assert!(msm_scratch_bound::<G1>(1 << 24, large) > msm_scratch_bound::<G1>(1 << 24, nt));
        assert_eq!(window_for(nt, 1 << 24, 1_700_000), 16);
        assert_eq!(window_for(nt, 1 << 26, 1 << 26), 20);
        assert_eq!(
            window_for(nt, 1 << 20, 0),
            16,
            "not below the points window capped at 16"
        );
        assert_eq!(window_for(nt, 1 << 20, 100_000), 16);
        assert_eq!(
            window_for(nt, 1 << 12, 0),
            msm_window(1 << 12, DEFAULT_MSM_WINDOW_LARGE)
        );
        assert_eq!(
            window_for(nt, 1 << 20, 1 << 30),
            msm_window(1 << 20, DEFAULT_MSM_WINDOW_LARGE)
        );
        let sh = MsmShape::new(1 << 20, 16).with_nontrivial(1000);
        assert_eq!((sh.entries, sh.nseg), (16_000, 250));
        assert_eq!(MsmShape::new(1 << 20, 16).entries, 16 << 20);
        // The bound covers every count, and is the points rule's figure under that rule.
        for n in [1usize << 10, 5000, 1 << 20, (1 << 22) + 1000, 1 << 24] {
            let bound = msm_scratch_bound::<G1>(n, nt);
            for k in [0, 1, n / 10, n / 2, (1 << 22).min(n), (1 << 22) - 1, n] {
                let k = k.min(n);
                let need = MsmShape::new(n, window_for(nt, n, k))
                    .with_nontrivial(k)
                    .scratch_bytes(n);
                assert!(need <= bound, "n {n} k {k}: {need} > {bound}");
            }
            let pts = MsmShape::new(n, msm_window(n, DEFAULT_MSM_WINDOW_LARGE)).scratch_bytes(n);
            assert_eq!(msm_scratch_bound::<G1>(n, p), pts);
            assert!(bound >= pts);
        }
    }
}
