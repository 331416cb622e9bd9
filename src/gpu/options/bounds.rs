//! The defaults and ranges of the numeric `[gpu]` knobs, each default with the measurement that
//! chose it.

/// Register cap of `msm_accumulate` (blocks per multiprocessor) unless configured: 3 (168
/// registers), where the out-of-line product of the default `msm_mul = "call"` spills nothing.
pub const DEFAULT_MSM_ACC_MINB: u32 = 3;
/// Largest register cap `gpu.msm_acc_minb` takes (8 blocks of 128 threads: 64 registers each).
pub const MAX_MSM_ACC_MINB: u32 = 8;
/// Elements (log2) one `ntt_pass` block holds unless configured: 512 (16 KiB of shared memory; four
/// passes at 2^27). With the radix-4 kernel it took 1.00 / 0.948 / 0.919 of the time of the
/// previous default (256-element blocks, radix 2) at 2^24 / 2^26 / 2^27 on the H200, the best of
/// every block and radix at the production sizes (BENCHMARKS.md, "H200 — GPU knob defaults").
pub const DEFAULT_NTT_BLOCK: u32 = 9;
/// The range `gpu.ntt_block` takes: a pass needs at least one stage beside its three columns,
/// and the kernel holds at most 2^10 elements in shared memory.
pub const NTT_BLOCKS: std::ops::RangeInclusive<u32> = 4..=10;
/// Stages an `ntt_pass` thread runs from registers between two shared-memory round trips
/// unless configured, as the radix of its butterflies: 4 (two stages, the `ntt_pass_r4`
/// kernel), with [`DEFAULT_NTT_BLOCK`].
pub const DEFAULT_NTT_RADIX: u32 = 4;
/// `gpu.ntt_columns = "auto"`: per transform, one column where that takes fewer passes than
/// three, else three ([`crate::gpu::plan::ntt_auto_columns`]).
pub const NTT_COLUMNS_AUTO: u32 = u32::MAX;
/// Columns (log2 of the consecutive elements in a row of an `ntt_pass` block) unless configured:
/// "auto". On the H200 (BENCHMARKS.md, "H200 — GPU knob defaults") one column took 0.93-0.95x the
/// time of three at 2^22, 2^24 and 2^25, where it saves a pass, and 1.00-1.21x at 2^26 and 2^27,
/// where it does not.
pub const DEFAULT_NTT_COLUMNS: u32 = NTT_COLUMNS_AUTO;
/// The range `gpu.ntt_columns` takes besides "auto".
pub const NTT_COLUMNS: std::ops::RangeInclusive<u32> = 0..=3;
/// Register cap of `ntt_pass_r4` unless configured: 96, five 128-thread blocks a multiprocessor
/// (8 bytes spilled). It took 0.93x the time of ptxas's choice (118 registers, four blocks) at
/// 2^26 and 2^27 on the H200 (BENCHMARKS.md, "H200 — GPU knob defaults").
pub const DEFAULT_NTT_REGS: u32 = 96;
/// The caps `gpu.ntt_regs` takes besides 0 (multiples of 8).
pub const NTT_REGS: std::ops::RangeInclusive<u32> = 64..=128;
/// The radixes `gpu.ntt_radix` takes: 2, or 4 (two stages per round trip, four elements a
/// thread).
pub const NTT_RADIXES: [u32; 2] = [2, 4];

/// The range `gpu.msm_window_large` takes: from the largest window of the sizes below it, up to
/// where one window set of buckets (2^(c−1) of 192 bytes each, ⌈256/c⌉ sets) passes 18 GiB.
pub const MSM_WINDOWS_LARGE: std::ops::RangeInclusive<u32> = 16..=23;

/// The most batch-affine rounds `gpu.experimental.msm_affine_rounds` runs before a G1
/// accumulation (each halves the entries).
pub const MAX_AFFINE_ROUNDS: u32 = 4;
/// The entries one thread of a batch-affine round may take (`gpu.experimental.msm_affine_per`).
pub const AFFINE_PER: [u32; 4] = [8, 16, 32, 64];
/// The most pieces `gpu.msm_pieces` cuts an MSM into.
pub const MAX_MSM_PIECES: u32 = 8;
/// Scalars below which an MSM stays whole whatever `gpu.msm_pieces` says (2^20 each piece).
pub const MSM_PIECE_MIN: usize = 1 << 20;
/// Scalars per piece under `gpu.msm_pieces = "auto"` (0): one piece per 2^24 scalars, at most
/// [`MSM_AUTO_PIECES`], so 2^24 and below stay whole (where cutting was within noise or
/// slower on the H200) and 2^26 goes in four (BENCHMARKS.md, "H200 — GPU knob defaults").
pub const MSM_AUTO_PIECE: usize = 1 << 24;
/// The most pieces `"auto"` cuts an MSM into.
pub const MSM_AUTO_PIECES: usize = 4;
