//! The NTT's pass list: which `ntt_pass` launches make a transform of 2^log_n elements, for a
//! block size and a column count (kernels/NOTES.md). Pure and tested on the CPU.

use crate::gpu::options::NTT_COLUMNS_AUTO;

/// NTT flags of `ntt_pass` (kernels/NOTES.md).
pub mod flags {
    /// Decimation in time (bit-reversed input → natural output).
    pub const DIT: u32 = 1;
    /// Use ω⁻¹.
    pub const INVERSE: u32 = 2;
    /// Multiply by the scale table on the first pass's load.
    pub const SCALE_LOAD: u32 = 4;
    /// Multiply by the scale table on the last pass's store.
    pub const SCALE_STORE: u32 = 8;
    /// Index the scale table by bit-reversed position.
    pub const SCALE_BITREV: u32 = 16;
}

/// The smallest twiddle table (log2) that a device short of memory splits in two.
pub const TWIDDLE_SPLIT_FROM: u32 = 20;

/// Where a twiddle table of 2^log_tw (the whole circle) is split, kernels/ntt/ntt.cuh: 0 (one
/// part, 2^log_tw entries) unless `split` and the table is at least 2^[`TWIDDLE_SPLIT_FROM`];
/// else K = ⌈log_tw / 2⌉, at most log_tw − 10 so that the stages inside the largest block read
/// the second part alone: parts of 2^K and 2^(log_tw − K) entries (768 KiB at 2^27 against 4 GiB).
pub fn twiddle_split(log_tw: u32, split: bool) -> u32 {
    if !split || log_tw < TWIDDLE_SPLIT_FROM {
        return 0;
    }
    log_tw.div_ceil(2).min(log_tw - 10)
}

/// Entries of a twiddle table of 2^log_tw split at `k` ([`twiddle_split`]; 0: one part).
pub fn twiddle_entries(log_tw: u32, k: u32) -> usize {
    match k {
        0 => 1usize << log_tw.max(1),
        k => (1usize << k) + (1usize << (log_tw - k)),
    }
}

/// Device bytes of that table.
pub fn twiddle_bytes(log_tw: u32, k: u32) -> u64 {
    32 * twiddle_entries(log_tw, k) as u64
}

/// One `ntt_pass` launch: stage offset `s`, `t` stages, `c` columns (kernels/NOTES.md).
pub type Pass = (u32, u32, u32);

/// The DIF pass list of a 2^log_n transform (DIT runs it reversed), as `ntt_plan` in
/// scripts/kernel_check.py: blocks of 2^10 elements.
pub fn ntt_plan(log_n: u32) -> Vec<Pass> {
    ntt_plan_in(log_n, 10)
}

/// The DIF pass list with blocks of 2^block elements (4 ≤ block ≤ 10, `gpu.ntt_block`) and
/// three columns (2^3 consecutive elements a row), as [`ntt_plan_cols`].
pub fn ntt_plan_in(log_n: u32, block: u32) -> Vec<Pass> {
    ntt_plan_cols(log_n, block, 3)
}

/// The DIF pass list with blocks of 2^block elements (4 ≤ block ≤ 10, `gpu.ntt_block`) whose
/// rows are 2^cols consecutive elements (0 ≤ cols ≤ 3, `gpu.ntt_columns`): as few passes of at
/// most block − cols stages as cover the stages above the last pass, each with `cols` columns
/// where they fit, then one pass of `block` stages inside a block. Fewer columns buy longer
/// passes (three at 2^27 with blocks of 2^10 and one column, against four) at shorter
/// contiguous runs in memory.
pub fn ntt_plan_cols(log_n: u32, block: u32, cols: u32) -> Vec<Pass> {
    let block = block.clamp(4, 10);
    let cols = if cols == NTT_COLUMNS_AUTO {
        ntt_auto_columns(log_n, block)
    } else {
        cols.min(3)
    };
    if log_n <= block {
        return vec![(log_n, log_n, 0)];
    }
    let most = block - cols;
    let npass = (log_n - block).div_ceil(most);
    let mut rest = log_n - block;
    let mut s = log_n;
    let mut out = Vec::with_capacity(npass as usize + 1);
    for k in 0..npass {
        let t = rest.div_ceil(npass - k).min(most);
        let mut c = cols.min(s - t);
        if t + c > block {
            c = block - t;
        }
        out.push((s, t, c));
        s -= t;
        rest -= t;
    }
    out.push((s, s, 0));
    out
}

/// The columns `gpu.ntt_columns = "auto"` picks for a 2^log_n transform: one where that takes
/// fewer passes than three (with blocks of 2^9: 2^22 to 2^25 in three passes instead of four,
/// 2^16 and 2^17 in two instead of three), else three, whose longer runs in memory won
/// wherever the pass count was the same (BENCHMARKS.md, "H200 — GPU knob defaults").
pub fn ntt_auto_columns(log_n: u32, block: u32) -> u32 {
    if ntt_plan_cols(log_n, block, 1).len() < ntt_plan_cols(log_n, block, 3).len() {
        1
    } else {
        3
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plan_matches_notes() {
        assert_eq!(
            ntt_plan(27),
            vec![(27, 6, 3), (21, 6, 3), (15, 5, 3), (10, 10, 0)]
        );
        assert_eq!(ntt_plan(7), vec![(7, 7, 0)]);
        for log in 1..=28 {
            let p = ntt_plan(log);
            assert_eq!(p.iter().map(|x| x.1).sum::<u32>(), log);
            assert!(p.iter().all(|&(_, t, c)| t + c <= 10));
        }
    }

    #[test]
    fn a_split_table_is_small_and_its_blocks_read_one_part() {
        assert_eq!(twiddle_split(27, false), 0);
        assert_eq!(twiddle_split(19, true), 0);
        assert_eq!(twiddle_bytes(27, 0), 32 << 27);
        let k = twiddle_split(27, true);
        assert_eq!(k, 14);
        assert_eq!(twiddle_bytes(27, k), 768 << 10);
        for log in TWIDDLE_SPLIT_FROM..=28 {
            let k = twiddle_split(log, true);
            // Both parts in use, and every in-block stage's exponent (a multiple of
            // 2^(log − 10)) has no low part.
            assert!(k >= 10 && k < log && k <= log - 10, "2^{log}: {k}");
            assert!(
                twiddle_bytes(log, k) <= 32 * (2 << log.div_ceil(2)),
                "2^{log}"
            );
        }
    }

    #[test]
    fn smaller_blocks_cover_every_stage() {
        assert_eq!(
            ntt_plan_in(27, 8),
            vec![(27, 5, 3), (22, 5, 3), (17, 5, 3), (12, 4, 3), (8, 8, 0)]
        );
        // One column and blocks of 2^10: three passes at 2^27.
        assert_eq!(
            ntt_plan_cols(27, 10, 1),
            vec![(27, 9, 1), (18, 8, 1), (10, 10, 0)]
        );
        assert_eq!(ntt_plan_cols(27, 9, 3), ntt_plan_in(27, 9));
        // "auto": one column where it saves a pass (2^22, 2^24, 2^25 with blocks of 2^9),
        // three where it does not (2^26, 2^27, and 2^20 and 2^21: three passes either way).
        for (log, cols) in [
            (20, 3),
            (21, 3),
            (22, 1),
            (23, 1),
            (24, 1),
            (25, 1),
            (26, 3),
            (27, 3),
        ] {
            assert_eq!(ntt_auto_columns(log, 9), cols, "2^{log}");
            assert_eq!(
                ntt_plan_cols(log, 9, NTT_COLUMNS_AUTO),
                ntt_plan_cols(log, 9, cols)
            );
        }
        assert_eq!(ntt_plan_cols(24, 9, NTT_COLUMNS_AUTO).len(), 3);
        let all = [0, 1, 2, 3, NTT_COLUMNS_AUTO];
        for (block, cols) in (4..=10).flat_map(|b| all.map(move |c| (b, c))) {
            for log in 1..=28 {
                let p = ntt_plan_cols(log, block, cols);
                // The stages add up, each pass starts where the previous one ended, and
                // every pass fits a block and the launch rules of `ntt_pass`.
                assert_eq!(p.iter().map(|x| x.1).sum::<u32>(), log, "{block} {log}");
                let mut s = log;
                for &(ps, t, c) in &p {
                    assert_eq!(ps, s, "{block} {log}");
                    assert!(
                        t >= 1 && t + c <= block && c + t <= ps && c <= cols.min(3),
                        "{block} {cols} {log} {p:?}"
                    );
                    s -= t;
                }
                let last = p[p.len() - 1];
                assert_eq!((last.0, last.2), (last.1, 0), "{block} {log}");
            }
        }
        assert_eq!(ntt_plan_in(27, 10), ntt_plan(27));
    }
}
