//! Launch checks of the MSM kernels (kernels/msm.cu): digits, accumulation, finalization,
//! reduction levels and the sums of the ones.

use super::check::{
    blocks, Check, Launch, ACCUMULATE_BLOCK, ELEMENTWISE_BLOCK, REDUCE_BLOCK, SUM_BLOCK,
};
use crate::gpu::error::GpuResult;
use crate::gpu::host::FR_LIMBS;
use crate::gpu::plan::{scatter_parts_ok, MsmShape, MSM_CHAIN_LEVELS, MSM_CHAIN_SPAN, MSM_SEGMENT};

/// u64 limbs of the G1 affine points a batch-affine round writes (`msm_pairs_round`).
pub const PAIRS_POINT_LIMBS: usize = crate::gpu::host::AFFINE_LIMBS;
/// Threads of a `msm_pairs_round` block: the kernel's shared inversion needs exactly these.
const PAIRS_BLOCK: u32 = 128;

/// Blocks of `msm_nontrivial` (a grid-stride loop: enough to fill the device).
const NONTRIVIAL_BLOCKS: usize = 4096;

/// `msm_nontrivial` over n scalars (u64 limbs) into one zeroed u32 count.
pub fn msm_nontrivial(n: usize, scalars: usize, count: usize) -> GpuResult<Launch> {
    let grid = blocks(n, ELEMENTWISE_BLOCK).min(NONTRIVIAL_BLOCKS as u64);
    Check::new("msm_nontrivial", grid, ELEMENTWISE_BLOCK)
        .rule(n < 1 << 31, || format!("{n} scalars"))
        .buf("scalars", scalars, n * FR_LIMBS)
        .buf("count", count, 1)
        .done()
}

/// `msm_count` (`scatter` `None`) or `msm_scatter` over n scalars (u64 limbs) with `shape`;
/// `scatter` holds the keys' length (`None`: the keyless scatter, a null pointer) and the
/// values'. Every entry goes below `shape.entries`: the shape's count of scalars that make
/// digits must be right (n, or the device's count). A scatter of a shape scattered by window
/// (`msm_scatter_window`) takes one slice of the scalars' blocks per window.
pub fn msm_digits(
    kernel: &'static str,
    n: usize,
    sh: &MsmShape,
    scalars: usize,
    counts: usize,
    scatter: Option<(Option<usize>, usize)>,
) -> GpuResult<Launch> {
    let slices = match scatter {
        Some(_) if sh.by_window => u64::from(sh.nwin),
        _ => 1,
    };
    let grid = blocks(n, ELEMENTWISE_BLOCK) * slices;
    let ch = digit_rules(Check::new(kernel, grid, ELEMENTWISE_BLOCK), n, sh, counts).buf(
        "scalars",
        scalars,
        n * FR_LIMBS,
    );
    with_entries(ch, sh, scatter).done()
}

/// `msm_count_store`: `msm_count` over n scalars (u64 limbs) that also stores every digit
/// in `digits` (u32s: the segments' buffer lent, n per window).
pub fn msm_count_store(
    n: usize,
    sh: &MsmShape,
    scalars: usize,
    counts: usize,
    digits: usize,
) -> GpuResult<Launch> {
    let ch = Check::new(
        "msm_count_store",
        blocks(n, ELEMENTWISE_BLOCK),
        ELEMENTWISE_BLOCK,
    );
    stored_rules(digit_rules(ch, n, sh, counts), n, sh, digits)
        .buf("scalars", scalars, n * FR_LIMBS)
        .done()
}

/// `msm_scatter_stored`: the window-order scatter of n scalars' stored digits (`digits`
/// u32s, as [`msm_count_store`] left them), each window in `parts` slices
/// ([`scatter_parts_ok`], at most the window's 2^(c−1) buckets); `scatter` as for
/// [`msm_digits`].
pub fn msm_scatter_stored(
    n: usize,
    sh: &MsmShape,
    digits: usize,
    counts: usize,
    scatter: (Option<usize>, usize),
    parts: u32,
) -> GpuResult<Launch> {
    let grid = blocks(n, ELEMENTWISE_BLOCK) * u64::from(sh.nwin) * u64::from(parts);
    let ch = Check::new("msm_scatter_stored", grid, ELEMENTWISE_BLOCK).rule(
        scatter_parts_ok(parts) && parts.trailing_zeros() < sh.c,
        || format!("{parts} parts of a window of {} bits", sh.c),
    );
    let ch = stored_rules(digit_rules(ch, n, sh, counts), n, sh, digits);
    with_entries(ch, sh, Some(scatter)).done()
}

/// The rules every digit pass shares: n scalars, the window, the bucket counts.
fn digit_rules(ch: Check, n: usize, sh: &MsmShape, counts: usize) -> Check {
    let entries = sh.entries;
    ch.rule(
        (1..1 << 31).contains(&n) && (entries as u64) < 1 << 32,
        || format!("{n} scalars, {entries} entries"),
    )
    .rule(sh.c >= 2 && sh.c <= 31, || {
        format!("window of {} bits", sh.c)
    })
    .buf("counts", counts, sh.nbk as usize + 1)
}

/// Stored digits: n per window, and every key below 2^31 (bit 31 is the digit's sign and
/// all ones marks no digit).
fn stored_rules(ch: Check, n: usize, sh: &MsmShape, digits: usize) -> Check {
    ch.rule(sh.nbk < 1 << 31, || format!("{} buckets", sh.nbk))
        .buf("digits", digits, sh.nwin as usize * n)
}

/// The sorted entries' buffers of a scatter (keys optional: the keyless scatter).
fn with_entries(ch: Check, sh: &MsmShape, scatter: Option<(Option<usize>, usize)>) -> Check {
    match scatter {
        Some((k, v)) => ch.opt("keys", k, sh.entries).buf("vals", v, sh.entries),
        None => ch,
    }
}

/// `msm_seg_keys`: the first bucket of each of `shape.nseg` segments, from the bucket starts.
pub fn msm_seg_keys(sh: &MsmShape, counts: usize, segkeys: usize) -> GpuResult<Launch> {
    Check::new(
        "msm_seg_keys",
        blocks(sh.nbk as usize, ELEMENTWISE_BLOCK),
        ELEMENTWISE_BLOCK,
    )
    .buf("counts", counts, sh.nbk as usize + 1)
    .buf("segkeys", segkeys, sh.nseg as usize)
    .done()
}

/// `msm_pairs_count`: every bucket's entries after a batch-affine round, from its starts.
pub fn msm_pairs_count(sh: &MsmShape, counts: usize, ncounts: usize) -> GpuResult<Launch> {
    let m = sh.nbk as usize + 1;
    Check::new(
        "msm_pairs_count",
        blocks(sh.nbk as usize, ELEMENTWISE_BLOCK),
        ELEMENTWISE_BLOCK,
    )
    .buf("starts", counts, m)
    .buf("ncounts", ncounts, m)
    .done()
}

/// `msm_pairs_round`: one batch-affine round over the entries of `sh` (their values index the
/// `src` points, u64 limbs) into the entries of `sh.paired()`: points, keys (`None`: not
/// written, the keyless accumulation) and values. One thread per `per` entries (the kernels'
/// `MSM_PAIRS_PER`, `gpu.experimental.msm_affine_per`).
#[allow(clippy::too_many_arguments)]
pub fn msm_pairs_round(
    sh: &MsmShape,
    per: usize,
    src: usize,
    vals: usize,
    counts: usize,
    ncounts: usize,
    points: usize,
    nkeys: Option<usize>,
    nvals: usize,
) -> GpuResult<Launch> {
    let m = sh.nbk as usize + 1;
    let out = sh.paired().entries;
    let threads = sh.entries.div_ceil(per.max(1));
    Check::new("msm_pairs_round", blocks(threads, PAIRS_BLOCK), PAIRS_BLOCK)
        .rule(sh.xyzz_limbs == crate::gpu::host::XYZZ_LIMBS, || {
            "G1 only".into()
        })
        .rule(src >= PAIRS_POINT_LIMBS, || {
            format!("{src} limbs of points")
        })
        .buf("vals", vals, sh.entries)
        .buf("starts", counts, m)
        .buf("nstarts", ncounts, m)
        .buf("dst", points, out * PAIRS_POINT_LIMBS)
        .opt("nkeys", nkeys, out)
        .buf("nvals", nvals, out)
        .done()
}

/// u64 limbs of one Fp residue: a denominator of the split round.
pub const PAIRS_DEN_LIMBS: usize = PAIRS_POINT_LIMBS / 2;

/// Blocks a multiprocessor of `msm_batch_inverse`: each block inverts once (485 products on one
/// thread while the rest wait), so a few resident blocks share the device's residues.
pub const BATCH_INVERSE_BLOCKS_PER_SM: u32 = 4;
/// The least residues a thread of `msm_batch_inverse` takes where there are few (a block per
/// 2,048 of them).
const BATCH_INVERSE_LEAST: u32 = 16;
/// The split round's entries stay below this: its kernels flag a pair in bit 31 of an index.
pub const SPLIT_MAX_ENTRIES: usize = 1 << 31;

/// The split round's three launches over the outputs of `sh.paired()`: `msm_pairs_den` (a thread
/// an output: its denominator into `den`, u64 limbs, and its keys and values), then
/// `msm_batch_inverse` ([`BATCH_INVERSE_BLOCKS_PER_SM`] blocks on each of `sms`, at most one
/// block a 2,048 outputs; its running products in `points`), then `msm_pairs_finish` (a thread
/// an output: the points). The values carry an entry index with a flag in bit 31 between the
/// kernels, so the entries must be fewer than 2^31.
#[allow(clippy::too_many_arguments)]
pub fn msm_pairs_split(
    sh: &MsmShape,
    sms: u32,
    src: usize,
    vals: usize,
    counts: usize,
    ncounts: usize,
    den: usize,
    points: usize,
    nkeys: Option<usize>,
    nvals: usize,
) -> GpuResult<[Launch; 3]> {
    let m = sh.nbk as usize + 1;
    let out = sh.paired().entries;
    let per_thread = |name| {
        Check::new(name, blocks(out, ELEMENTWISE_BLOCK), ELEMENTWISE_BLOCK)
            .rule(sh.xyzz_limbs == crate::gpu::host::XYZZ_LIMBS, || {
                "G1 only".into()
            })
            .rule(sh.entries < SPLIT_MAX_ENTRIES, || {
                format!("{} entries", sh.entries)
            })
            .rule(src >= PAIRS_POINT_LIMBS, || {
                format!("{src} limbs of points")
            })
            .buf("vals", vals, sh.entries)
            .buf("nstarts", ncounts, m)
            .buf("den", den, out * PAIRS_DEN_LIMBS)
            .buf("nvals", nvals, out)
    };
    let den_l = per_thread("msm_pairs_den")
        .buf("starts", counts, m)
        .opt("nkeys", nkeys, out)
        .done()?;
    let most = sms.max(1) as u64 * BATCH_INVERSE_BLOCKS_PER_SM as u64;
    let grid = blocks(out, PAIRS_BLOCK * BATCH_INVERSE_LEAST).clamp(1, most);
    let inv_l = Check::new("msm_batch_inverse", grid, PAIRS_BLOCK)
        .buf("den", den, out * PAIRS_DEN_LIMBS)
        .buf("pre", points, out * PAIRS_DEN_LIMBS)
        .buf("nstarts", ncounts, m)
        .done()?;
    let fin_l = per_thread("msm_pairs_finish")
        .buf("dst", points, out * PAIRS_POINT_LIMBS)
        .done()?;
    Ok([den_l, inv_l, fin_l])
}

/// The accumulation's bucket keys: one per entry, or (keyless scatter) one per segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AccKeys {
    /// `keys` of every entry, this long.
    Entries(usize),
    /// `msm_seg_keys`'s first bucket of every segment, this long.
    Segments(usize),
}

impl AccKeys {
    /// The keys' argument name, its length and the length `shape` needs, for a launch check.
    fn check(self, sh: &MsmShape) -> (&'static str, usize, usize) {
        match self {
            AccKeys::Entries(k) => ("keys", k, sh.entries),
            AccKeys::Segments(k) => ("segkeys", k, sh.nseg as usize),
        }
    }
}

/// `msm_accumulate` over n points (u64 limbs per affine point `affine_limbs`) with `shape`.
#[allow(clippy::too_many_arguments)]
pub fn msm_accumulate(
    n: usize,
    sh: &MsmShape,
    affine_limbs: usize,
    bases: usize,
    keys: AccKeys,
    vals: usize,
    counts: usize,
    buckets: usize,
    segments: [usize; 2],
) -> GpuResult<Launch> {
    let entries = sh.entries;
    let x = sh.xyzz_limbs;
    let (name, have, need) = keys.check(sh);
    Check::new(
        "msm_accumulate",
        (sh.nseg as u64).div_ceil(ACCUMULATE_BLOCK as u64),
        ACCUMULATE_BLOCK,
    )
    .buf("bases", bases, n * affine_limbs)
    .buf(name, have, need)
    .buf("vals", vals, entries)
    .buf("counts", counts, sh.nbk as usize + 1)
    .buf("buckets", buckets, sh.nbk as usize * x)
    .buf("pfirst", segments[0], sh.nseg as usize * x)
    .buf("plast", segments[1], sh.nseg as usize * x)
    .rule(sh.nseg as usize == entries.div_ceil(MSM_SEGMENT), || {
        format!("{} segments for {entries} entries", sh.nseg)
    })
    .done()
}

/// The spans of the `msm_chains` levels an MSM of `shape` runs, in order: [`MSM_CHAIN_SPAN`]
/// segments and its powers, [`MSM_CHAIN_LEVELS`] at most (32, 1024, 32768), each while a group of
/// that span fits in the segments. `msm_finalize` takes a group whole only at such a span; the
/// kernels get the same two constants as defines (`kernels::nvrtc_options`).
pub fn msm_chain_spans(sh: &MsmShape) -> impl Iterator<Item = u32> {
    let nseg = sh.nseg;
    (1..=MSM_CHAIN_LEVELS)
        .map(|k| MSM_CHAIN_SPAN.pow(k))
        .filter(move |&span| span <= nseg)
}

/// One `msm_chains` level of `span` segments with `shape`; `keys` as [`msm_accumulate`]'s.
pub fn msm_chains(
    sh: &MsmShape,
    span: u32,
    keys: AccKeys,
    counts: usize,
    pfirst: usize,
) -> GpuResult<Launch> {
    let (name, have, need) = keys.check(sh);
    Check::new(
        "msm_chains",
        blocks((sh.nseg / span.max(1)) as usize, ELEMENTWISE_BLOCK),
        ELEMENTWISE_BLOCK,
    )
    .rule(span >= MSM_CHAIN_SPAN && span <= sh.nseg, || {
        format!("span {span} for {} segments", sh.nseg)
    })
    .buf(name, have, need)
    .buf("counts", counts, sh.nbk as usize + 1)
    .buf("pfirst", pfirst, sh.nseg as usize * sh.xyzz_limbs)
    .done()
}

/// `msm_finalize` with `shape`.
pub fn msm_finalize(
    sh: &MsmShape,
    counts: usize,
    buckets: usize,
    segments: [usize; 2],
) -> GpuResult<Launch> {
    let x = sh.xyzz_limbs;
    Check::new(
        "msm_finalize",
        blocks(sh.nbk as usize, ELEMENTWISE_BLOCK),
        ELEMENTWISE_BLOCK,
    )
    .buf("counts", counts, sh.nbk as usize + 1)
    .buf("buckets", buckets, sh.nbk as usize * x)
    .buf("pfirst", segments[0], sh.nseg as usize * x)
    .buf("plast", segments[1], sh.nseg as usize * x)
    .done()
}

/// One `msm_reduce_level`: `nwin` windows of m values in groups of 2^lg. `t_in` is absent on
/// the first level, `r_out` on the last (one group per window).
pub fn msm_reduce_level(
    sh: &MsmShape,
    m: u32,
    lg: u32,
    t_in: Option<usize>,
    r_in: usize,
    t_out: usize,
    r_out: Option<usize>,
) -> GpuResult<Launch> {
    let x = sh.xyzz_limbs;
    let g = m.checked_shr(lg).unwrap_or(0) as usize;
    let (ins, outs) = (sh.nwin as usize * m as usize, sh.nwin as usize * g);
    Check::new("msm_reduce_level", blocks(outs, REDUCE_BLOCK), REDUCE_BLOCK)
        .rule(lg >= 1 && g >= 1 && (g << lg) == m as usize, || {
            format!("{m} values in groups of 2^{lg}")
        })
        .rule(r_out.is_some() || g == 1, || {
            format!("{g} groups need an R output")
        })
        .opt("Tin", t_in, ins * x)
        .buf("Rin", r_in, ins * x)
        .buf("Tout", t_out, outs * x)
        .opt("Rout", r_out, outs * x)
        .done()
}

/// `msm_ones` over n points and scalars into `shape.nb1` partial sums.
pub fn msm_ones(
    n: usize,
    sh: &MsmShape,
    affine_limbs: usize,
    bases: usize,
    scalars: usize,
    partials: usize,
) -> GpuResult<Launch> {
    Check::new("msm_ones", sh.nb1 as u64, SUM_BLOCK)
        .buf("bases", bases, n * affine_limbs)
        .buf("scalars", scalars, n * FR_LIMBS)
        .buf("partials", partials, sh.nb1 as usize * sh.xyzz_limbs)
        .done()
}

/// `ec_sum` of `count` XYZZ points (`xyzz_limbs` u64 each) into one.
pub fn ec_sum(count: usize, xyzz_limbs: usize, input: usize, out: usize) -> GpuResult<Launch> {
    Check::new("ec_sum", 1, SUM_BLOCK)
        .buf("in", input, count * xyzz_limbs)
        .buf("out", out, xyzz_limbs)
        .done()
}
