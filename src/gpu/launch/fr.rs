//! Launch checks of the Fr kernels: NTT passes, element-wise kernels, the scan, and the
//! density filter of a witness.

use super::check::{
    blocks, Check, Launch, ELEMENTWISE_BLOCK, NTT_MAX_BLOCK_LOG, SCALE_TABLE, SCAN_BLOCK, SCAN_SPAN,
};
use crate::gpu::error::GpuResult;
use crate::gpu::host::FR_LIMBS;
use crate::gpu::plan::{twiddle_entries, Pass};

/// `ntt_pass` over `data` (u64 limbs) for pass `(s, t, c)` of a 2^log_n transform, twiddles of
/// 2^log_tw in `tw`, an optional scale table; `radix4`: the `ntt_pass_r4` kernel, whose
/// threads hold four elements where the pass has two stages or more.
#[allow(clippy::too_many_arguments)]
pub fn ntt_pass(
    log_n: u32,
    (log_tw, tw_split): (u32, u32),
    (s, t, c): Pass,
    radix4: bool,
    data: usize,
    tw: usize,
    scale: Option<usize>,
) -> GpuResult<Launch> {
    let n = 1usize << log_n;
    let e = 1u64 << (t + c);
    let per_thread = if radix4 && t >= 2 { 4 } else { 2 };
    Check::new("ntt_pass", (n as u64) >> (t + c), (e / per_thread) as u32)
        .smem(32 * e)
        .rule(
            t >= 1 && t + c <= NTT_MAX_BLOCK_LOG && c + t <= s && s <= log_n,
            || format!("pass (s {s}, t {t}, c {c}) of a 2^{log_n} transform"),
        )
        .rule(log_n <= log_tw && log_tw <= 31, || {
            format!("2^{log_n} transform with twiddles of 2^{log_tw}")
        })
        .buf("data", data, n * FR_LIMBS)
        .rule(tw_split == 0 || tw_split < log_tw, || {
            format!("twiddles of 2^{log_tw} split at 2^{tw_split}")
        })
        .buf("tw", tw, twiddle_entries(log_tw, tw_split) * FR_LIMBS)
        .opt("scale_tab", scale, SCALE_TABLE * FR_LIMBS)
        .done()
}

/// An element-wise kernel over n elements: every buffer in `bufs` (name, elements held,
/// elements touched) must hold what the launch touches, in its own element type.
pub fn elementwise(
    kernel: &'static str,
    n: usize,
    bufs: &[(&'static str, usize, usize)],
) -> GpuResult<Launch> {
    bufs.iter()
        .fold(
            Check::new(kernel, blocks(n, ELEMENTWISE_BLOCK), ELEMENTWISE_BLOCK),
            |ch, &(arg, have, need)| ch.buf(arg, have, need),
        )
        .rule((1..1 << 32).contains(&n), || format!("{n} elements"))
        .done()
}

/// `scan_block` (sums: one per block, or none for a single block) or `scan_add` over the first
/// `m` u32 of `data`.
pub fn scan(kernel: &'static str, m: usize, data: usize, sums: Option<usize>) -> GpuResult<Launch> {
    let nb = m.div_ceil(SCAN_SPAN);
    Check::new(kernel, nb as u64, SCAN_BLOCK)
        .rule((1..1 << 32).contains(&m), || format!("{m} entries"))
        .rule(sums.is_some() || nb == 1, || {
            format!("{nb} blocks need a block-sum buffer")
        })
        .buf("data", data, m)
        .opt("block_sums", sums, nb)
        .done()
}

/// `density_popc` over the `nwords` 32-bit words of a density bitmap.
pub fn density_popc(nwords: usize, words: usize, counts: usize) -> GpuResult<Launch> {
    elementwise(
        "density_popc",
        nwords,
        &[("words", words, nwords), ("counts", counts, nwords)],
    )
}

/// `density_gather` of the `kept` present values among n scalars (u64 limbs) into `out`, with
/// the bitmap's words and their inclusive popcount scan.
pub fn density_gather(
    n: usize,
    kept: usize,
    out: usize,
    input: usize,
    words: usize,
    incl: usize,
) -> GpuResult<Launch> {
    let nw = n.div_ceil(32);
    elementwise(
        "density_gather",
        n,
        &[
            ("out", out, kept * FR_LIMBS),
            ("in", input, n * FR_LIMBS),
            ("words", words, nw),
            ("incl", incl, nw),
        ],
    )
}

/// `packed_expand` of n values packed as bits (`dense` of them neither 0 nor 1) into `out`
/// (u64 limbs), with the two bitmaps' 32-bit words and the dense bitmap's inclusive popcount
/// scan.
pub fn packed_expand(
    n: usize,
    dense: usize,
    out: usize,
    values: usize,
    ones: usize,
    words: usize,
    incl: usize,
) -> GpuResult<Launch> {
    let nw = n.div_ceil(32);
    elementwise(
        "packed_expand",
        n,
        &[
            ("out", out, n * FR_LIMBS),
            ("dense", values, dense * FR_LIMBS),
            ("ones", ones, nw),
            ("dense_words", words, nw),
            ("incl", incl, nw),
        ],
    )
}
