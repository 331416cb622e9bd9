//! The GPU tuning knobs of the `[gpu]` and `[gpu.experimental]` config sections (which knob sits
//! where: `config::raw::EXPERIMENTAL`), as the CUDA backend takes them. Plain
//! data, no device: `config.rs` hands each key's text to [`GpuOptions::set`] and validates the
//! result; `CudaBackend::with_options` reads them at start (the kernels are compiled with the
//! MSM knobs as defines).

mod bounds;
mod choices;
mod msm_variants;

pub use bounds::*;

pub use choices::{
    choice_name, parse_choice, CappedCut, CappedHBeside, CappedRecording, Choice, FieldKara,
    FieldLazy, FieldSqr, HStream, MemoryPool, MsmFirstPiece, MsmMul, MsmOnes, MsmPieceBuckets,
    MsmScatter, MsmScatterDigits, MsmScatterOrder, MsmWindow, NttTwiddles, WindowRule,
    DEFAULT_MSM_WINDOW_LARGE,
};
pub use msm_variants::{variant, variants, MSM_VARIANTS};

use super::plan::{scatter_parts_ok, MAX_SCATTER_PARTS};

/// The CUDA backend's knobs. The defaults are the measured best (BENCHMARKS.md, "H200 — GPU knob
/// defaults").
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GpuOptions {
    /// Threads of a pool of each device's own for its host work (staging copies, density
    /// filtering on the host path); `None`: rayon's global pool (`gpu.host_threads = "auto"`).
    pub host_threads: Option<usize>,
    /// Blocks of `msm_accumulate` one multiprocessor must fit (a register cap), 1 to 8.
    pub msm_acc_minb: u32,
    /// Whether `msm_accumulate` loads the next base one addition ahead.
    pub msm_prefetch: bool,
    /// The products of the accumulation's mixed addition (G1).
    pub msm_mul: MsmMul,
    /// What the window is chosen from.
    pub msm_window: MsmWindow,
    /// The window above 2^22 points ([`MSM_WINDOWS_LARGE`]).
    pub msm_window_large: u32,
    /// Keys beside the sorted entries, or bucket boundaries from the starts.
    pub msm_scatter: MsmScatter,
    /// The order in which the scatter writes the entries.
    pub msm_scatter_order: MsmScatterOrder,
    /// Where the window-order scatter takes its digits from.
    pub msm_scatter_digits: MsmScatterDigits,
    /// Slices each window of the stored-digit scatter is written in (1, 2, 4 or 8): a slice
    /// writes the entries of its share of the window's buckets, so the writes in flight stay
    /// within a smaller stretch of the sorted entries (and of the L2).
    pub msm_scatter_parts: u32,
    /// How the sum of the bases whose scalar is one runs (G1).
    pub msm_ones: MsmOnes,
    /// Pieces an MSM of scalars from the host is cut into (1 to [`MAX_MSM_PIECES`], or 0 for
    /// `"auto"`: one per [`MSM_AUTO_PIECE`] scalars, at most [`MSM_AUTO_PIECES`]): the host
    /// copies the next piece's scalars into the pinned staging while the device runs the
    /// current piece's kernels; each piece at least [`MSM_PIECE_MIN`] scalars.
    pub msm_pieces: u32,
    /// Whether those pieces add to one set of buckets (reduced once) or reduce their own.
    pub msm_piece_buckets: MsmPieceBuckets,
    /// How the first of those pieces is sized.
    pub msm_first_piece: MsmFirstPiece,
    /// Whether the device's memory pool keeps freed memory between calls.
    pub memory_pool: MemoryPool,
    /// How the kernels square a base-field element.
    pub field_sqr: FieldSqr,
    /// How the curve formulas compute Y3's difference of two products.
    pub field_lazy: FieldLazy,
    /// Which of G1's out-of-line Fp products take one level of Karatsuba.
    pub field_karatsuba: FieldKara,
    /// Whether a partition runs as one device call (`gpu.partition = "device"`: a, b, c and
    /// the witness uploaded once, densities applied and H kept on the device); `false`
    /// (`"calls"`): one backend call per H and per MSM, as before.
    pub device_partition: bool,
    /// Which stream a device partition's H transforms run on.
    pub h_stream: HStream,
    /// Whether a job's proving key is made resident on the device when the job is admitted,
    /// while its partitions synthesize (`gpu.warm_keys`, default on), where it fits in free
    /// device memory without evicting anything; off: the key's first partition uploads it.
    pub warm_keys: bool,
    /// Elements (log2) per `ntt_pass` block, 4 to 10: smaller blocks mean more passes over
    /// the data but more blocks resident per multiprocessor (host side: only the pass list).
    pub ntt_block: u32,
    /// Radix of the `ntt_pass` butterflies ([`NTT_RADIXES`]; host side: a flag and the block's
    /// thread count).
    pub ntt_radix: u32,
    /// Columns of an `ntt_pass` block (log2 of the consecutive elements of a row, 0 to 3, or
    /// [`NTT_COLUMNS_AUTO`]): fewer columns leave more stages to each pass, so fewer passes
    /// (host side: only the pass list).
    pub ntt_columns: u32,
    /// Register cap of the radix-4 NTT kernel (0: ptxas's choice; else 64 to 128, a multiple
    /// of 8): fewer registers fit more blocks per multiprocessor (compiled in).
    pub ntt_regs: u32,
    /// The twiddle table's layout (host side: the table and a kernel argument).
    pub ntt_twiddles: NttTwiddles,
    /// How a partition whose key's sets do not all fit resident beside it cuts its MSMs.
    pub capped_cut: CappedCut,
    /// Whether such a partition, from a, b, c evaluated from a resident recording, may evict
    /// that recording to keep a set resident.
    pub capped_recording: CappedRecording,
    /// Whether such a partition under the lean cut, its H set streamed, runs H's MSM on a
    /// second pair of streams beside the witness's MSMs where a second streaming room fits.
    pub capped_h_beside: CappedHBeside,
    /// Batch-affine rounds before each G1 accumulation (0 to [`MAX_AFFINE_ROUNDS`]; 0: none,
    /// the default): an experiment, kernels/msm/pairs.cuh.
    pub msm_affine_rounds: u32,
    /// Entries one thread of a batch-affine round takes (one of [`AFFINE_PER`]; 16): a block
    /// shares one inversion over up to 64 times this many pairs (compiled in).
    pub msm_affine_per: u32,
    /// Each batch-affine round as three kernels (the denominators, their batch inversion, the
    /// sums) instead of one: an experiment, kernels/msm/pairs.cuh.
    pub msm_affine_split: bool,
    /// The most device memory the backend takes on each device (`gpu.memory_limit`, bytes or
    /// "24GiB"): resident bases, twiddles and tables plus a call's buffers; `None`: the
    /// device's memory (less a margin).
    pub memory_limit: Option<u64>,
}

impl Default for GpuOptions {
    fn default() -> Self {
        GpuOptions {
            host_threads: None,
            msm_acc_minb: DEFAULT_MSM_ACC_MINB,
            msm_prefetch: false,
            msm_mul: MsmMul::Call,
            msm_window: MsmWindow::Auto,
            msm_window_large: DEFAULT_MSM_WINDOW_LARGE,
            msm_scatter: MsmScatter::Starts,
            msm_scatter_order: MsmScatterOrder::Auto,
            msm_scatter_digits: MsmScatterDigits::Stored,
            msm_scatter_parts: 4,
            msm_pieces: 0,
            msm_piece_buckets: MsmPieceBuckets::Shared,
            msm_first_piece: MsmFirstPiece::Equal,
            memory_pool: MemoryPool::Keep,
            msm_ones: MsmOnes::Compact,
            field_sqr: FieldSqr::Pairs,
            field_lazy: FieldLazy::Sum,
            field_karatsuba: FieldKara::Off,
            device_partition: true,
            h_stream: HStream::Own,
            warm_keys: true,
            ntt_block: DEFAULT_NTT_BLOCK,
            ntt_radix: DEFAULT_NTT_RADIX,
            ntt_columns: DEFAULT_NTT_COLUMNS,
            ntt_regs: DEFAULT_NTT_REGS,
            ntt_twiddles: NttTwiddles::Auto,
            capped_cut: CappedCut::Lean,
            capped_recording: CappedRecording::Spare,
            capped_h_beside: CappedHBeside::Off,
            msm_affine_rounds: 0,
            msm_affine_per: 16,
            msm_affine_split: false,
            memory_limit: None,
        }
    }
}

/// The `[gpu]` keys [`GpuOptions::set`] takes (without the `gpu.` prefix).
pub const KNOBS: [&str; 33] = [
    "host_threads",
    "msm_acc_minb",
    "msm_prefetch",
    "msm_mul",
    "msm_window",
    "msm_window_large",
    "msm_scatter",
    "msm_scatter_order",
    "msm_scatter_digits",
    "msm_scatter_parts",
    "msm_pieces",
    "msm_piece_buckets",
    "msm_first_piece",
    "memory_pool",
    "msm_ones",
    "field_sqr",
    "field_lazy",
    "field_karatsuba",
    "partition",
    "h_stream",
    "warm_keys",
    "ntt_block",
    "ntt_radix",
    "ntt_columns",
    "ntt_regs",
    "ntt_twiddles",
    "capped_cut",
    "capped_recording",
    "capped_h_beside",
    "msm_affine_rounds",
    "msm_affine_per",
    "msm_affine_split",
    "memory_limit",
];

fn whole(v: &str, min: usize) -> Result<usize, String> {
    match v.trim().parse::<usize>() {
        Ok(n) if n >= min => Ok(n),
        _ => Err(format!("expected a whole number ≥ {min}, got {v:?}")),
    }
}

/// A boolean knob's text (`true`/`1`/`on`, `false`/`0`/`off`), or why it is none.
pub(crate) fn flag(v: &str) -> Result<bool, String> {
    match v.trim().to_ascii_lowercase().as_str() {
        "true" | "1" | "on" => Ok(true),
        "false" | "0" | "off" => Ok(false),
        _ => Err(format!("expected true or false, got {v:?}")),
    }
}

impl GpuOptions {
    /// Sets the knob `key` (one of [`KNOBS`]) from its text, or says why the text is no value
    /// of it. Ranges are checked by [`GpuOptions::problem`].
    pub fn set(&mut self, key: &str, v: &str) -> Result<(), String> {
        match key {
            "host_threads" if v.trim().eq_ignore_ascii_case("auto") => self.host_threads = None,
            "host_threads" => self.host_threads = Some(whole(v, 1)?),
            "msm_acc_minb" => self.msm_acc_minb = whole(v, 1)?.min(u32::MAX as usize) as u32,
            "msm_prefetch" => self.msm_prefetch = flag(v)?,
            "msm_mul" => self.msm_mul = parse_choice(v)?,
            "msm_window" => self.msm_window = parse_choice(v)?,
            "msm_window_large" => {
                self.msm_window_large = whole(v, 1)?.min(u32::MAX as usize) as u32
            }
            "msm_scatter" => self.msm_scatter = parse_choice(v)?,
            "msm_scatter_order" => self.msm_scatter_order = parse_choice(v)?,
            "msm_scatter_digits" => self.msm_scatter_digits = parse_choice(v)?,
            "msm_scatter_parts" => {
                self.msm_scatter_parts = whole(v, 1)?.min(u32::MAX as usize) as u32
            }
            "msm_pieces" => {
                self.msm_pieces = if v.trim().eq_ignore_ascii_case("auto") {
                    0
                } else {
                    whole(v, 1)?.min(u32::MAX as usize) as u32
                }
            }
            "msm_piece_buckets" => self.msm_piece_buckets = parse_choice(v)?,
            "msm_first_piece" => self.msm_first_piece = parse_choice(v)?,
            "memory_pool" => self.memory_pool = parse_choice(v)?,
            "msm_ones" => self.msm_ones = parse_choice(v)?,
            "field_sqr" => self.field_sqr = parse_choice(v)?,
            "field_lazy" => self.field_lazy = parse_choice(v)?,
            "field_karatsuba" => self.field_karatsuba = parse_choice(v)?,
            "h_stream" => self.h_stream = parse_choice(v)?,
            "warm_keys" => self.warm_keys = flag(v)?,
            "ntt_block" => self.ntt_block = whole(v, 1)?.min(u32::MAX as usize) as u32,
            "ntt_radix" => self.ntt_radix = whole(v, 1)?.min(u32::MAX as usize) as u32,
            "ntt_columns" => {
                self.ntt_columns = if v.trim().eq_ignore_ascii_case("auto") {
                    NTT_COLUMNS_AUTO
                } else {
                    whole(v, 0)?.min(u32::MAX as usize - 1) as u32
                }
            }
            "ntt_regs" => self.ntt_regs = whole(v, 0)?.min(u32::MAX as usize) as u32,
            "ntt_twiddles" => self.ntt_twiddles = parse_choice(v)?,
            "capped_cut" => self.capped_cut = parse_choice(v)?,
            "capped_recording" => self.capped_recording = parse_choice(v)?,
            "capped_h_beside" => self.capped_h_beside = parse_choice(v)?,
            "msm_affine_rounds" => {
                self.msm_affine_rounds = whole(v, 0)?.min(u32::MAX as usize) as u32
            }
            "msm_affine_per" => self.msm_affine_per = whole(v, 1)?.min(u32::MAX as usize) as u32,
            "msm_affine_split" => self.msm_affine_split = flag(v)?,
            "memory_limit" if v.trim().eq_ignore_ascii_case("device") => self.memory_limit = None,
            "memory_limit" => {
                self.memory_limit = match crate::units::parse_bytes(v) {
                    Some(b) if b > 0 => Some(b),
                    _ => {
                        return Err(format!(
                            "expected a size such as \"24GiB\" or a byte count, or \"device\", \
                             got {v:?}"
                        ))
                    }
                }
            }
            "partition" => {
                self.device_partition = match v.trim() {
                    "device" => true,
                    "calls" => false,
                    other => return Err(format!("expected device or calls, got {other:?}")),
                }
            }
            other => return Err(format!("no such [gpu] knob {other:?}")),
        }
        Ok(())
    }

    /// Why these knobs cannot be used, naming the key, if they cannot.
    pub fn problem(&self) -> Option<(&'static str, String)> {
        if self.host_threads == Some(0) {
            return Some(("gpu.host_threads", "must be \"auto\" or at least 1".into()));
        }
        let ranged = [
            (
                "gpu.msm_acc_minb",
                1..=MAX_MSM_ACC_MINB,
                "blocks per multiprocessor",
                self.msm_acc_minb,
            ),
            (
                "gpu.msm_pieces",
                0..=MAX_MSM_PIECES,
                "pieces per MSM",
                self.msm_pieces,
            ),
            (
                "gpu.msm_affine_rounds",
                0..=MAX_AFFINE_ROUNDS,
                "batch-affine rounds before a G1 accumulation",
                self.msm_affine_rounds,
            ),
            (
                "gpu.msm_window_large",
                MSM_WINDOWS_LARGE,
                "bits of the MSM window above 2^22 points",
                self.msm_window_large,
            ),
            (
                "gpu.ntt_block",
                NTT_BLOCKS,
                "log2 of the elements per NTT block",
                self.ntt_block,
            ),
        ];
        for (key, range, what, v) in ranged {
            if !range.contains(&v) {
                let (lo, hi) = (range.start(), range.end());
                return Some((key, format!("expected {lo} to {hi} ({what}), got {v}")));
            }
        }
        let parts = self.msm_scatter_parts;
        if !scatter_parts_ok(parts) {
            return Some((
                "gpu.msm_scatter_parts",
                format!(
                    "expected 1, 2, 4 or {MAX_SCATTER_PARTS} (slices each window of the bucket \
                     sort's scatter is written in), got {parts}"
                ),
            ));
        }
        if !AFFINE_PER.contains(&self.msm_affine_per) {
            return Some((
                "gpu.msm_affine_per",
                format!(
                    "expected one of {AFFINE_PER:?} (entries a thread of a batch-affine round), \
                     got {}",
                    self.msm_affine_per
                ),
            ));
        }
        if !NTT_RADIXES.contains(&self.ntt_radix) {
            return Some((
                "gpu.ntt_radix",
                format!(
                    "expected 2 or 4 (stages a thread runs between shared-memory round trips, \
                     as a radix), got {}",
                    self.ntt_radix
                ),
            ));
        }
        if self.ntt_columns != NTT_COLUMNS_AUTO && !NTT_COLUMNS.contains(&self.ntt_columns) {
            return Some((
                "gpu.ntt_columns",
                format!(
                    "expected \"auto\" or {} to {} (log2 of the consecutive elements in an NTT \
                     block's row), got {}",
                    NTT_COLUMNS.start(),
                    NTT_COLUMNS.end(),
                    self.ntt_columns
                ),
            ));
        }
        if self.ntt_regs != 0
            && !(NTT_REGS.contains(&self.ntt_regs) && self.ntt_regs.is_multiple_of(8))
        {
            return Some((
                "gpu.ntt_regs",
                format!(
                    "expected 0 (the compiler's choice) or a multiple of 8 from {} to {} \
                     (registers of the radix-4 NTT kernel), got {}",
                    NTT_REGS.start(),
                    NTT_REGS.end(),
                    self.ntt_regs
                ),
            ));
        }
        None
    }

    /// The window rule of `gpu.msm_window` and `gpu.msm_window_large`.
    pub fn window_rule(&self) -> WindowRule {
        WindowRule {
            from: self.msm_window,
            large: self.msm_window_large,
        }
    }
}

#[cfg(test)]
mod tests;
