//! Launch checks, host side: for each kernel the backend launches, the grid it needs and the
//! elements every buffer argument must hold, checked before anything reaches the device. A
//! [`Launch`] exists only when its check passed, and the device code launches only from a
//! `Launch`, so a too-short buffer is an error and no launch. Pure: tested without a GPU.

mod check;
mod fr;
mod msm;
mod sparse;

pub use check::{
    launch_checked, Launch, ACCUMULATE_BLOCK, ELEMENTWISE_BLOCK, NTT_MAX_BLOCK_LOG, REDUCE_BLOCK,
    SCALE_TABLE, SCAN_BLOCK, SCAN_SPAN, SUM_BLOCK,
};
pub use fr::{density_gather, density_popc, elementwise, ntt_pass, packed_expand, scan};
pub use msm::{
    ec_sum, msm_accumulate, msm_chain_spans, msm_chains, msm_count_store, msm_digits, msm_finalize,
    msm_nontrivial, msm_ones, msm_pairs_count, msm_pairs_round, msm_pairs_split, msm_reduce_level,
    msm_scatter_stored, msm_seg_keys, AccKeys, BATCH_INVERSE_BLOCKS_PER_SM, PAIRS_DEN_LIMBS,
    PAIRS_POINT_LIMBS, SPLIT_MAX_ENTRIES,
};
pub use sparse::{abc_check, spmv, SpmvBufs, SpmvShape};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::error::GpuError;
    use crate::gpu::plan::{MsmShape, MAX_SCATTER_PARTS};
    use crate::gpu::GpuResult;
    use std::cell::Cell;

    /// Counts the launches a checked call lets through.
    fn launches(checked: GpuResult<Launch>) -> (GpuResult<()>, usize) {
        let count = Cell::new(0);
        let r = launch_checked(checked, |_| {
            count.set(count.get() + 1);
            Ok(())
        });
        (r, count.get())
    }

    #[test]
    fn a_paired_round_needs_room_for_half_the_entries_and_every_odd_bucket() {
        let sh = MsmShape::new(1 << 16, 12);
        let out = sh.paired();
        // Every bucket may hold an odd count: half the entries plus half the buckets.
        assert_eq!(out.entries, (sh.entries + sh.nbk as usize) / 2);
        assert_eq!(
            out.nseg as usize,
            out.entries.div_ceil(crate::gpu::plan::MSM_SEGMENT)
        );
        assert_eq!((out.nbk, out.c, out.nwin), (sh.nbk, sh.c, sh.nwin));
        let m = sh.nbk as usize + 1;
        let limbs = out.entries * PAIRS_POINT_LIMBS;
        let args = |dst: usize, nkeys: Option<usize>, nvals: usize| {
            msm_pairs_round(&sh, 16, 12, sh.entries, m, m, dst, nkeys, nvals)
        };
        assert!(args(limbs, Some(out.entries), out.entries).is_ok());
        assert!(
            args(limbs, None, out.entries).is_ok(),
            "keys may be left out"
        );
        assert!(args(limbs - 1, None, out.entries).is_err());
        assert!(args(limbs, Some(out.entries - 1), out.entries).is_err());
        assert!(args(limbs, None, out.entries - 1).is_err());
        let g2 = MsmShape::for_group::<crate::gpu::host::G2>(1 << 16, 12);
        assert!(msm_pairs_round(&g2, 16, 24, g2.entries, m, m, limbs, None, out.entries).is_err());
        // Fewer entries a thread, more blocks: 2^16 · 22 entries, 16 a thread, 128 a block.
        let grid = |per| msm_pairs_round(&sh, per, 12, sh.entries, m, m, limbs, None, out.entries);
        let blocks = |per| grid(per).map(|l| l.dims().0).unwrap_or(0) as usize;
        assert_eq!(blocks(16), sh.entries.div_ceil(16).div_ceil(128));
        assert_eq!(blocks(32), sh.entries.div_ceil(32).div_ceil(128));
        assert!(msm_pairs_count(&sh, m, m).is_ok());
        assert!(msm_pairs_count(&sh, m, m - 1).is_err());
        // The split round: a thread an output for its first and last kernels, a few blocks a
        // multiprocessor for the inversion; every buffer checked.
        let den = out.entries * PAIRS_DEN_LIMBS;
        let split = |den: usize, dst: usize, nkeys: Option<usize>| {
            msm_pairs_split(&sh, 8, 12, sh.entries, m, m, den, dst, nkeys, out.entries)
        };
        let [d, i, f] = split(den, limbs, Some(out.entries)).expect("fits");
        assert_eq!(
            d.dims().0 as usize,
            out.entries.div_ceil(ELEMENTWISE_BLOCK as usize)
        );
        assert_eq!(f.dims().0, d.dims().0);
        assert_eq!(
            i.dims().0,
            8 * BATCH_INVERSE_BLOCKS_PER_SM,
            "a few blocks an SM"
        );
        // Fewer outputs than that many blocks' 2,048 each: a block a 2,048.
        let few = MsmShape::new(1 << 10, 10);
        let fm = few.nbk as usize + 1;
        let (fo, fl) = (few.paired().entries, few.paired().entries * PAIRS_DEN_LIMBS);
        let small = msm_pairs_split(&few, 132, 12, few.entries, fm, fm, fl, 2 * fl, None, fo);
        assert_eq!(
            small.expect("fits")[1].dims().0 as usize,
            fo.div_ceil(16 * 128)
        );
        assert!(split(den, limbs, None).is_ok(), "keys may be left out");
        assert!(split(den - 1, limbs, None).is_err());
        assert!(split(den, limbs - 1, None).is_err());
        assert!(split(den, limbs, Some(out.entries - 1)).is_err());
        let g2 = MsmShape::for_group::<crate::gpu::host::G2>(1 << 16, 12);
        let g2_split =
            msm_pairs_split(&g2, 16, 24, g2.entries, m, m, den, limbs, None, out.entries);
        assert!(g2_split.is_err());
        // A few entries in many buckets: never more entries after a round than before.
        let few = MsmShape::new(3, 16).paired();
        assert!(few.entries <= MsmShape::new(3, 16).entries);
    }

    #[test]
    fn chain_levels_follow_the_segments() {
        // Every span that fits in the segments, and none that does not: msm_finalize takes a
        // group whole only at a span these launched.
        for (n, c) in [
            (100usize, 8u32),
            (1 << 12, 12),
            (1 << 16, 14),
            (1 << 22, 16),
        ] {
            let sh = MsmShape::new(n, c);
            let spans: Vec<u32> = msm_chain_spans(&sh).collect();
            let want: Vec<u32> = [32, 1024, 32768]
                .into_iter()
                .filter(|&s| s <= sh.nseg)
                .collect();
            assert_eq!(spans, want, "2^{} points", n.ilog2());
            for span in spans {
                let keys = AccKeys::Segments(sh.nseg as usize);
                let pfirst = sh.nseg as usize * sh.xyzz_limbs;
                let l = msm_chains(&sh, span, keys, sh.nbk as usize + 1, pfirst);
                let threads = l
                    .as_ref()
                    .map(|l| u64::from(l.dims().0) * u64::from(l.dims().1));
                assert!(threads.is_ok_and(|t| t >= u64::from(sh.nseg / span)));
                let short = msm_chains(&sh, span, keys, sh.nbk as usize + 1, pfirst - 1);
                assert!(matches!(
                    short,
                    Err(GpuError::BufferTooShort { arg: "pfirst", .. })
                ));
            }
        }
        let sh = MsmShape::new(1 << 16, 14);
        let keys = AccKeys::Segments(sh.nseg as usize);
        let bad = msm_chains(&sh, 16, keys, sh.nbk as usize + 1, 1 << 30);
        assert!(bad.is_err(), "a span below 32 is refused");
    }

    #[test]
    fn a_too_short_buffer_is_an_error_and_no_launch() {
        let n = 1usize << 12;
        let (ok, count) = launches(ntt_pass(12, (12, 0), (12, 2, 0), false, n * 4, n * 4, None));
        assert!(ok.is_ok() && count == 1);
        let (err, count) = launches(ntt_pass(
            12,
            (12, 0),
            (12, 2, 0),
            false,
            n * 4 - 1,
            n * 4,
            None,
        ));
        assert_eq!(count, 0, "nothing launched");
        match err {
            Err(GpuError::BufferTooShort {
                kernel, arg, need, ..
            }) => assert_eq!((kernel, arg, need), ("ntt_pass", "data", n * 4)),
            other => panic!("expected BufferTooShort, got {other:?}"),
        }
        let (err, count) = launches(ntt_pass(
            12,
            (12, 0),
            (12, 2, 0),
            false,
            n * 4,
            n * 4,
            Some(7),
        ));
        assert!(matches!(
            err,
            Err(GpuError::BufferTooShort {
                arg: "scale_tab",
                ..
            })
        ));
        assert_eq!(count, 0);

        let sh = MsmShape::new(1 << 16, 14);
        let entries = (1 << 16) * sh.nwin as usize;
        let xyzz = |k: u32| k as usize * sh.xyzz_limbs;
        let acc = |keys: usize| {
            msm_accumulate(
                1 << 16,
                &sh,
                12,
                12 << 16,
                AccKeys::Entries(keys),
                entries,
                sh.nbk as usize + 1,
                xyzz(sh.nbk),
                [xyzz(sh.nseg), xyzz(sh.nseg)],
            )
        };
        assert_eq!(launches(acc(entries)).1, 1);
        let (err, count) = launches(acc(entries - 1));
        assert_eq!(count, 0);
        assert!(matches!(
            err,
            Err(GpuError::BufferTooShort { arg: "keys", .. })
        ));
        let (err, count) = launches(msm_digits(
            "msm_scatter",
            1 << 16,
            &sh,
            4 << 16,
            sh.nbk as usize,
            Some((Some(entries), entries)),
        ));
        assert_eq!(count, 0);
        assert!(matches!(
            err,
            Err(GpuError::BufferTooShort { arg: "counts", .. })
        ));
        // The keyless path: no keys, one first bucket per segment; a shape sized for k scalars
        // that make digits takes buffers of k · nwin entries.
        let few = sh.with_nontrivial(1000);
        let counts = sh.nbk as usize + 1;
        let keyless = |vals: usize, by_window: bool| {
            msm_digits(
                if by_window {
                    "msm_scatter_window"
                } else {
                    "msm_scatter"
                },
                1 << 16,
                &few.scattered_by_window(by_window),
                4 << 16,
                counts,
                Some((None, vals)),
            )
        };
        assert!(keyless(few.entries, false).is_ok());
        assert!(keyless(few.entries - 1, false).is_err());
        // A window at a time: one slice of the scalars' blocks per window.
        let by_scalar = keyless(few.entries, false).map(|l| l.dims().0).ok();
        let by_window = keyless(few.entries, true).map(|l| l.dims().0).ok();
        assert_eq!(by_scalar.map(|g| g * few.nwin), by_window);
        assert!(keyless(few.entries - 1, true).is_err());
        let count = msm_digits(
            "msm_count",
            1 << 16,
            &few.scattered_by_window(true),
            4 << 16,
            counts,
            None,
        );
        assert_eq!(
            count.map(|l| l.dims().0).ok(),
            by_scalar,
            "the count is not sliced"
        );
        // Stored digits: n per window in the lent buffer, the scatter in window slices.
        let digits = (1usize << 16) * few.nwin as usize;
        let store = |d: usize| msm_count_store(1 << 16, &few, 4 << 16, counts, d);
        assert_eq!(launches(store(digits)).1, 1);
        assert!(matches!(
            store(digits - 1),
            Err(GpuError::BufferTooShort { arg: "digits", .. })
        ));
        let stored =
            |d: usize, vals: usize| msm_scatter_stored(1 << 16, &few, d, counts, (None, vals), 1);
        assert_eq!(
            stored(digits, few.entries).map(|l| l.dims().0).ok(),
            by_window
        );
        assert!(stored(digits - 1, few.entries).is_err());
        assert!(stored(digits, few.entries - 1).is_err());
        assert!(
            msm_scatter_stored(1 << 16, &few, digits, counts - 1, (None, few.entries), 1).is_err()
        );
        // Parts: the grid grows by them; a power of two, at most MAX_SCATTER_PARTS.
        let parted = |p: u32| {
            msm_scatter_stored(1 << 16, &few, digits, counts, (None, few.entries), p)
                .map(|l| l.dims().0)
        };
        assert_eq!(parted(4).ok(), by_window.map(|g| g * 4));
        for bad in [0, 3, 2 * MAX_SCATTER_PARTS] {
            assert!(
                matches!(parted(bad), Err(GpuError::BadLaunch { .. })),
                "{bad} parts"
            );
        }
        assert!(msm_seg_keys(&few, counts, few.nseg as usize).is_ok());
        assert!(msm_seg_keys(&few, counts, few.nseg as usize - 1).is_err());
        let seg = |k: AccKeys| {
            msm_accumulate(
                1 << 16,
                &few,
                12,
                12 << 16,
                k,
                few.entries,
                counts,
                xyzz(few.nbk),
                [xyzz(few.nseg), xyzz(few.nseg)],
            )
        };
        assert!(seg(AccKeys::Segments(few.nseg as usize)).is_ok());
        assert!(matches!(
            seg(AccKeys::Segments(few.nseg as usize - 1)),
            Err(GpuError::BufferTooShort { arg: "segkeys", .. })
        ));
        assert!(msm_nontrivial(1 << 16, 4 << 16, 1).is_ok());
        assert!(msm_nontrivial(1 << 16, 4 << 16, 0).is_err());
    }

    #[test]
    fn shapes_follow_the_kernel_notes() {
        let tab = Some(4 * SCALE_TABLE);
        let l = ntt_pass(27, (27, 0), (27, 6, 3), false, 4 << 27, 4 << 27, tab).unwrap();
        assert_eq!(l.dims(), (1 << 18, 256, 32 * 512));
        // Radix 4: a quarter of the elements as threads, the same blocks and shared memory;
        // a one-stage pass keeps two elements a thread.
        let l = ntt_pass(27, (27, 0), (27, 6, 3), true, 4 << 27, 4 << 27, tab).unwrap();
        assert_eq!(l.dims(), (1 << 18, 128, 32 * 512));
        let l = ntt_pass(27, (27, 0), (27, 1, 3), true, 4 << 27, 4 << 27, tab).unwrap();
        assert_eq!(l.dims(), (1 << 23, 8, 32 * 16));
        // The twiddles cover the whole circle: half of it is too short.
        assert!(matches!(
            ntt_pass(27, (27, 0), (27, 6, 3), true, 4 << 27, 4 << 26, tab),
            Err(GpuError::BufferTooShort { .. })
        ));
        // Split at 2^14: 2^14 + 2^13 entries, and no split at or above the table's size.
        let split = 4 * ((1 << 14) + (1 << 13));
        assert!(ntt_pass(27, (27, 14), (27, 6, 3), true, 4 << 27, split, tab).is_ok());
        assert!(matches!(
            ntt_pass(27, (27, 14), (27, 6, 3), true, 4 << 27, split - 1, tab),
            Err(GpuError::BufferTooShort { .. })
        ));
        assert!(matches!(
            ntt_pass(27, (27, 27), (27, 6, 3), true, 4 << 27, 4 << 27, tab),
            Err(GpuError::BadLaunch { .. })
        ));
        assert!(matches!(
            ntt_pass(12, (12, 0), (12, 8, 3), false, 4 << 12, 4 << 12, None),
            Err(GpuError::BadLaunch { .. })
        ));
        assert_eq!(scan("scan_block", 5000, 5000, Some(2)).unwrap().dims().0, 2);
        assert!(scan("scan_block", 5000, 5000, None).is_err());
        let sh = MsmShape::new(1 << 20, 16);
        let x = sh.xyzz_limbs;
        let m = sh.half;
        let first = msm_reduce_level(
            &sh,
            m,
            3,
            None,
            (sh.nbk as usize) * x,
            16 * (m as usize >> 3) * x,
            Some(16 * (m as usize >> 3) * x),
        )
        .unwrap();
        assert_eq!(first.dims(), ((16 * (m >> 3)).div_ceil(64), 64, 0));
        assert!(msm_reduce_level(&sh, 8, 3, Some(16 * 8 * x), 16 * 8 * x, 16 * x, None).is_ok());
        assert!(msm_reduce_level(&sh, 16, 3, None, 16 * 16 * x, 16 * 2 * x, None).is_err());
        assert_eq!(ec_sum(1024, 24, 1024 * 24, 24).unwrap().dims(), (1, 128, 0));
        assert!(elementwise("fr_bitrev", 0, &[]).is_err());
        let n = 100;
        assert!(density_gather(n, 40, 160, 400, 4, 4).is_ok());
        let short = density_gather(n, 40, 159, 400, 4, 4);
        assert!(matches!(
            short,
            Err(GpuError::BufferTooShort { arg: "out", .. })
        ));
        let short = density_gather(n, 40, 160, 400, 3, 4);
        assert!(matches!(
            short,
            Err(GpuError::BufferTooShort { arg: "words", .. })
        ));
        assert!(packed_expand(n, 40, 400, 160, 4, 4, 4).is_ok());
        for (bad, arg) in [
            (packed_expand(n, 40, 399, 160, 4, 4, 4), "out"),
            (packed_expand(n, 40, 400, 159, 4, 4, 4), "dense"),
            (packed_expand(n, 40, 400, 160, 3, 4, 4), "ones"),
            (packed_expand(n, 40, 400, 160, 4, 3, 4), "dense_words"),
            (packed_expand(n, 40, 400, 160, 4, 4, 3), "incl"),
        ] {
            assert!(
                matches!(bad, Err(GpuError::BufferTooShort { arg: a, .. }) if a == arg),
                "{arg}"
            );
        }
    }
}
