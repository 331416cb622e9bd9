//! The `[gpu]` knobs with a fixed set of spellings, and the MSM window rule.

/// The MSM window above 2^22 points (or non-trivial scalars) unless configured
/// (`gpu.msm_window_large`).
pub const DEFAULT_MSM_WINDOW_LARGE: u32 = 20;

/// A knob with a fixed set of spellings.
pub trait Choice: Sized + Copy + 'static {
    /// Every value with its spelling, the default first.
    const ALL: &'static [(&'static str, Self)];
}

/// The value spelled `text`, or why not (the spellings it takes).
pub fn parse_choice<T: Choice>(text: &str) -> Result<T, String> {
    let t = text.trim();
    T::ALL
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case(t))
        .map(|(_, v)| *v)
        .ok_or_else(|| {
            let names: Vec<&str> = T::ALL.iter().map(|(n, _)| *n).collect();
            format!("expected one of {}, got {text:?}", names.join(", "))
        })
}

/// The spelling of `v`.
pub fn choice_name<T: Choice + PartialEq>(v: T) -> &'static str {
    T::ALL.iter().find(|(_, x)| *x == v).map_or("?", |(n, _)| n)
}

/// How the bucket accumulation's mixed addition computes its Fp products (`gpu.msm_mul`,
/// G1 only; define `MSM_ACC_INLINE`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MsmMul {
    /// Every product inlined: the fastest arithmetic, a loop body larger than the
    /// instruction cache (kernels/NOTES.md, "What bounds the kernels, and the next step").
    Inline,
    /// One out-of-line product called ten times: a small loop body, a call per product.
    Call,
    /// Every product inlined with its row loop rolled (`f_mul_rolled`: a twelfth of the code,
    /// the same multiply-adds plus register moves); also in the sums of the ones.
    Rolled,
}

impl Choice for MsmMul {
    const ALL: &'static [(&'static str, Self)] = &[
        ("inline", MsmMul::Inline),
        ("call", MsmMul::Call),
        ("rolled", MsmMul::Rolled),
    ];
}

/// What the MSM window is chosen from (`gpu.msm_window`, host side).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MsmWindow {
    /// `Nontrivial` above [`MsmWindow::AUTO_COUNT_ABOVE`] points, `Points` up to it: the count
    /// pays from 2^24 on (0.70x PoRep-like, 1.00x dense on the H200) and costs its
    /// synchronize below (1.02–1.03x dense at 2^20/2^22).
    Auto,
    /// The number of points (one window per size).
    Points,
    /// The number of scalars that are neither 0 nor 1, counted on the device first (the others
    /// make no bucket entries; PoRep-like witnesses have ~10 % of them).
    Nontrivial,
}

impl MsmWindow {
    /// Points above which `Auto` counts the non-trivial scalars.
    pub const AUTO_COUNT_ABOVE: usize = 1 << 22;

    /// Whether an MSM of n points counts its non-trivial scalars first under this rule.
    pub fn counts(self, n: usize) -> bool {
        match self {
            MsmWindow::Auto => n > Self::AUTO_COUNT_ABOVE,
            MsmWindow::Points => false,
            MsmWindow::Nontrivial => true,
        }
    }
}

/// How an MSM's window is chosen: what from (`gpu.msm_window`) and how large it is above
/// 2^22 (`gpu.msm_window_large`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WindowRule {
    /// What the window is chosen from.
    pub from: MsmWindow,
    /// The window above 2^22 points (or counted scalars).
    pub large: u32,
}

impl Default for WindowRule {
    fn default() -> Self {
        WindowRule {
            from: MsmWindow::Auto,
            large: DEFAULT_MSM_WINDOW_LARGE,
        }
    }
}

impl WindowRule {
    /// The rule with the default large window.
    pub fn from(from: MsmWindow) -> Self {
        WindowRule {
            from,
            ..WindowRule::default()
        }
    }

    /// Whether an MSM of n points counts its non-trivial scalars first.
    pub fn counts(self, n: usize) -> bool {
        self.from.counts(n)
    }
}

impl Choice for MsmWindow {
    const ALL: &'static [(&'static str, Self)] = &[
        ("auto", MsmWindow::Auto),
        ("points", MsmWindow::Points),
        ("nontrivial", MsmWindow::Nontrivial),
    ];
}

/// How the bucket accumulation learns which bucket each sorted entry belongs to
/// (`gpu.msm_scatter`; define `MSM_KEYLESS`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MsmScatter {
    /// The scatter writes a key beside every entry.
    Keys,
    /// No keys: each segment's first bucket comes from the bucket starts (`msm_seg_keys`), the
    /// rest by walking them; half the scatter's scattered writes.
    Starts,
}

impl Choice for MsmScatter {
    const ALL: &'static [(&'static str, Self)] =
        &[("keys", MsmScatter::Keys), ("starts", MsmScatter::Starts)];
}

/// How `msm_ones` walks the scalars equal to one (`gpu.msm_ones`; define `MSM_ONES_COMPACT`, G1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MsmOnes {
    /// Each lane adds the bases of its own ones (the lanes without one wait).
    Each,
    /// Each warp queues its ones in shared memory and adds 32 at a time, every lane busy.
    Compact,
}

impl Choice for MsmOnes {
    const ALL: &'static [(&'static str, Self)] =
        &[("each", MsmOnes::Each), ("compact", MsmOnes::Compact)];
}

/// How the kernels square a base-field element (`gpu.field_sqr`; define `FIELD_SQR`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldSqr {
    /// The Montgomery product of the element with itself.
    Mul,
    /// `f_sqr_pairs`: each cross product once, doubled, then the reduction (222 instead of
    /// 288 32x32 products in Fp; 0.975-1.001x of `Mul` on the H200's MSM rows,
    /// BENCHMARKS.md, "H200 — GPU knob defaults").
    Pairs,
}

impl Choice for FieldSqr {
    const ALL: &'static [(&'static str, Self)] =
        &[("mul", FieldSqr::Mul), ("pairs", FieldSqr::Pairs)];
}

/// How the curve formulas compute their one difference of two products, Y3 = a·b − c·d of every
/// addition and doubling (`gpu.field_lazy`; define `FIELD_LAZY`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldLazy {
    /// Two Montgomery products, then their difference.
    Off,
    /// `f_mul_sum`: a·b + c·(−d) summed unreduced (below 2p², so it fits twice the limbs) and
    /// reduced once: 420 instead of 550 wide multiply-adds in Fp (G1 only; G2 keeps two products).
    Sum,
}

impl Choice for FieldLazy {
    const ALL: &'static [(&'static str, Self)] =
        &[("off", FieldLazy::Off), ("sum", FieldLazy::Sum)];
}

/// Which of G1's out-of-line Fp products take one level of Karatsuba (`gpu.field_karatsuba`;
/// define `FIELD_KARA`): three half-size products instead of one full one, for ~100 more
/// additions and logic operations, which pays where the multiplier's pipe is the bound.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldKara {
    /// The limb-pair products throughout.
    Off,
    /// The out-of-line product (`fp_mul_noinline`): 240 instead of 275 wide multiply-adds.
    Mul,
    /// The product and the once-reduced sum of two (`fp_mul_sum_noinline`: 348 instead of 420).
    MulSum,
}

impl Choice for FieldKara {
    const ALL: &'static [(&'static str, Self)] = &[
        ("off", FieldKara::Off),
        ("mul", FieldKara::Mul),
        ("mul_sum", FieldKara::MulSum),
    ];
}

/// The order in which the bucket sort's scatter writes its entries (`gpu.msm_scatter_order`;
/// host side: which of `msm_scatter` and `msm_scatter_window` runs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MsmScatterOrder {
    /// A window at a time where the device counted the scalars other than 0 and 1 and at
    /// least half are ([`crate::gpu::plan::scatter_by_window`]), else one scalar at a time.
    Auto,
    /// One thread per scalar writes that scalar's entries of every window.
    Scalar,
    /// One slice of blocks per window, each writing that window's entries only, so the writes
    /// in flight stay within one window's stretch of the entries.
    Window,
}

impl Choice for MsmScatterOrder {
    const ALL: &'static [(&'static str, Self)] = &[
        ("auto", MsmScatterOrder::Auto),
        ("scalar", MsmScatterOrder::Scalar),
        ("window", MsmScatterOrder::Window),
    ];
}

/// Where the window-order scatter takes each scalar's digits from (`gpu.msm_scatter_digits`;
/// host side: which count and scatter kernels run).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MsmScatterDigits {
    /// Each window's slice reads its scalars and works the digits out again.
    Recompute,
    /// The count pass stores every digit (in the segments' buffer, where they fit:
    /// [`crate::gpu::plan::MsmShape::stored_digits_fit`]) and the slices read them.
    Stored,
}

impl Choice for MsmScatterDigits {
    const ALL: &'static [(&'static str, Self)] = &[
        ("recompute", MsmScatterDigits::Recompute),
        ("stored", MsmScatterDigits::Stored),
    ];
}

/// How the first piece of an MSM cut into pieces is sized (`gpu.msm_first_piece`; host side).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MsmFirstPiece {
    /// Every piece near-equal.
    Equal,
    /// A quarter of an equal share (at least 2^20 scalars), so the one upload no kernel hides
    /// is short; the others near-equal.
    Small,
}

impl Choice for MsmFirstPiece {
    const ALL: &'static [(&'static str, Self)] = &[
        ("equal", MsmFirstPiece::Equal),
        ("small", MsmFirstPiece::Small),
    ];
}

/// What the device's memory pool does with freed memory (`gpu.memory_pool`; host side).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemoryPool {
    /// Keeps it for the next allocations; the memory policy counts it as free and hands it
    /// back to the driver only when a call needs more than the driver has.
    Keep,
    /// Hands it back to the driver at every synchronize (the CUDA default): every call's
    /// first kernels wait while the pool grows again.
    Release,
}

impl Choice for MemoryPool {
    const ALL: &'static [(&'static str, Self)] =
        &[("keep", MemoryPool::Keep), ("release", MemoryPool::Release)];
}

/// Whether the pieces of an MSM share their buckets (`gpu.msm_piece_buckets`; host side).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MsmPieceBuckets {
    /// Consecutive pieces of one window add to one set of buckets, reduced once.
    Shared,
    /// Every piece reduces buckets of its own.
    Own,
}

impl Choice for MsmPieceBuckets {
    const ALL: &'static [(&'static str, Self)] = &[
        ("shared", MsmPieceBuckets::Shared),
        ("own", MsmPieceBuckets::Own),
    ];
}

/// Where a device partition runs H's transforms (`gpu.h_stream`; host side).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HStream {
    /// On the compute stream, between the witness's MSM kernels.
    Compute,
    /// On a stream of their own at the device's highest priority, beside the witness's MSMs, whose
    /// short kernels (count, scan, finalize, the reduction's small grids) leave multiprocessors
    /// idle. The default: on the H200 the partition from device a/b/c took 0.986x (2^26) and 0.980x
    /// (2^27) the time of `Compute`, from host buffers 0.996-1.002x (BENCHMARKS.md, "H200 — GPU
    /// knob defaults"). The MSMs' accumulation holds every multiprocessor's registers, so the
    /// transforms overlap little more than those short kernels.
    Own,
}

impl Choice for HStream {
    const ALL: &'static [(&'static str, Self)] =
        &[("compute", HStream::Compute), ("own", HStream::Own)];
}

/// How a device partition's MSMs are cut when its key's sets do not all fit resident beside it
/// (`gpu.capped_cut`, an experiment of issue 38; host side).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CappedCut {
    /// Lean pieces, H computed before the witness's MSMs, so that a, b, c and the witness are
    /// never on the device together: the smallest call, the most sets resident, but the a/b/c
    /// upload and H no longer overlap the MSMs (266 against 63 ms before the witness is up at
    /// 2^26 under 32 GiB on the H100; bench-log 2026-12-06, "Closing session").
    Lean,
    /// The cut of `gpu.msm_pieces`, with the overlaps of an uncapped call, and whichever sets do
    /// not fit beside that larger call streamed; lean where even it does not fit with every set
    /// streamed. Slower: its pieces' scratch streams more sets (H100, 2^26: 1.41x / 1.59x the
    /// uncapped time at 32 / 24 GiB against lean's 1.31x / 1.35x; BENCHMARKS.md, "H100 —
    /// partition under gpu.memory_limit").
    Knob,
    /// The lean pieces with the uncapped call's order: a, b, c stay beside the witness's MSMs
    /// so that H overlaps them ([`crate::gpu::plan::Cut::Overlap`]); lean where that call does
    /// not fit with every set streamed.
    Overlap,
}

impl Choice for CappedCut {
    const ALL: &'static [(&'static str, Self)] = &[
        ("lean", CappedCut::Lean),
        ("knob", CappedCut::Knob),
        ("overlap", CappedCut::Overlap),
    ];
}

/// Whether a partition from a, b, c evaluated from a resident recording may evict that
/// recording to keep one of its base sets resident (`gpu.capped_recording`, issue 38; host
/// side). Under a 24 GiB limit the 2^27 PoRep partition's prepare evicted the recording (5.9
/// GB) to keep B_G1's set (3.18 GB) beside a full streaming room, and the next partition's
/// a/b/c evicted that set to upload the recording again: 9.1 GB of copies that hide behind
/// nothing (BENCHMARKS.md, "H200 — 32 GiB PoRep C2 through the engine").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CappedRecording {
    /// Like any other resident buffer (least recently used first): a partition held the
    /// device 2.39 s at 24 GiB on the H200 against 2.23 s under `Spare`.
    Evict,
    /// Spared while the call fits without evicting it: sets that fit only by evicting it
    /// stream, and the call's own resident sets are given up for its room first. The default:
    /// the 32 GiB C2 at 24 GiB, one partition to the next on the device, 0.93x of `Evict`'s
    /// (same section).
    Spare,
}

impl Choice for CappedRecording {
    const ALL: &'static [(&'static str, Self)] = &[
        ("evict", CappedRecording::Evict),
        ("spare", CappedRecording::Spare),
    ];
}

/// Whether a lean capped partition whose H set streams runs H's MSM (bound by its kernels) on
/// a second pair of streams beside the witness's MSMs (bound by their bases' copies) where a
/// second streaming room fits (`gpu.experimental.capped_h_beside`, issue 38).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CappedHBeside {
    /// H's MSM after the witness's, on the compute stream (the default).
    Off,
    /// Beside them, both at the compute stream's priority.
    On,
    /// Beside them, the compute stream (the witness's MSMs) made a stream of the device's
    /// highest priority, so that their short kernels, which their copies wait for, go before
    /// H's long ones. H's transforms (`gpu.h_stream = "own"`, also of the highest priority)
    /// then lose their precedence over the compute stream in every call, uncapped ones too.
    WitnessFirst,
}

impl Choice for CappedHBeside {
    const ALL: &'static [(&'static str, Self)] = &[
        ("off", CappedHBeside::Off),
        ("on", CappedHBeside::On),
        ("witness_first", CappedHBeside::WitnessFirst),
    ];
}

/// The layout of the NTT's twiddle table (`gpu.ntt_twiddles`; kernels/ntt/ntt.cuh).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NttTwiddles {
    /// `Split` on a device whose memory (or `gpu.memory_limit`) is below
    /// [`NttTwiddles::AUTO_SPLIT_BELOW`], `Full` on larger ones: the split table costs the NTT
    /// 1.12-1.13x at 2^26-2^27 and frees 4 GiB at 2^27, which on a 16 GiB card is the device
    /// path against the per-call one (1.22x against 2.86x the uncapped partition on the H100;
    /// BENCHMARKS.md, "H100 — partition under gpu.memory_limit").
    Auto,
    /// One table of the whole circle: 4 GiB at 2^27, each twiddle one load.
    Full,
    /// Two parts of 2^⌈log/2⌉ entries or fewer (768 KiB at 2^27), the twiddles between passes a
    /// product of one entry of each: the room that lets a 2^27 partition take the device path on a
    /// 16 GiB card.
    Split,
}

impl NttTwiddles {
    /// Device memory below which `Auto` splits the table: the consumer cards (16-32 GiB).
    pub const AUTO_SPLIT_BELOW: u64 = 48 << 30;

    /// Whether the table is split on a device of `memory` bytes (its memory or the limit).
    pub fn split(self, memory: u64) -> bool {
        match self {
            NttTwiddles::Auto => memory < Self::AUTO_SPLIT_BELOW,
            NttTwiddles::Full => false,
            NttTwiddles::Split => true,
        }
    }
}

impl Choice for NttTwiddles {
    const ALL: &'static [(&'static str, Self)] = &[
        ("auto", NttTwiddles::Auto),
        ("full", NttTwiddles::Full),
        ("split", NttTwiddles::Split),
    ];
}
