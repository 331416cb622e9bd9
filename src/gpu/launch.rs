//! Launch checks, host side: for each kernel the backend launches, the grid it needs and the
//! elements every buffer argument must hold, checked before anything reaches the device. A
//! [`Launch`] exists only when its check passed, and the device code launches only from a
//! `Launch`, so a too-short buffer is an error and no launch. Pure: tested without a GPU.

use super::error::{GpuError, GpuResult};
use super::host::FR_LIMBS;
use super::plan::{MsmShape, Pass, MSM_SEGMENT};

/// Threads per block of the element-wise kernels.
pub const ELEMENTWISE_BLOCK: u32 = 256;
/// Threads per block of `scan_block` and `scan_add`.
pub const SCAN_BLOCK: u32 = 1024;
/// Elements one `scan_block` block covers.
pub const SCAN_SPAN: usize = 4096;
/// Threads per block of `msm_accumulate`.
pub const ACCUMULATE_BLOCK: u32 = 128;
/// Threads per block of `msm_reduce_level`.
pub const REDUCE_BLOCK: u32 = 64;
/// Threads per block of `msm_ones` and `ec_sum` (the kernels assume it).
pub const SUM_BLOCK: u32 = 128;
/// Entries of an NTT scale table (two halves of 16384).
pub const SCALE_TABLE: usize = 32768;
/// Largest NTT pass block (`NTT_MAX_BLOCK_LOG`): 2^10 elements in shared memory.
pub const NTT_MAX_BLOCK_LOG: u32 = 10;

/// A checked launch: the kernel's name, a 1-D grid, the block and the dynamic shared memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Launch {
    kernel: &'static str,
    grid: u32,
    block: u32,
    smem: u32,
}

impl Launch {
    /// The kernel's name.
    pub fn kernel(&self) -> &'static str {
        self.kernel
    }

    /// (grid, block, dynamic shared memory bytes).
    pub fn dims(&self) -> (u32, u32, u32) {
        (self.grid, self.block, self.smem)
    }
}

/// Collects the checks of one launch; the first failure is kept.
struct Check {
    kernel: &'static str,
    grid: u64,
    block: u32,
    smem: u64,
    err: Option<GpuError>,
}

impl Check {
    fn new(kernel: &'static str, grid: u64, block: u32) -> Self {
        Check {
            kernel,
            grid,
            block,
            smem: 0,
            err: None,
        }
    }

    fn smem(mut self, bytes: u64) -> Self {
        self.smem = bytes;
        self
    }

    /// Buffer `arg` holds `have` elements and the launch touches `need`.
    fn buf(mut self, arg: &'static str, have: usize, need: usize) -> Self {
        if self.err.is_none() && have < need {
            self.err = Some(GpuError::BufferTooShort {
                kernel: self.kernel,
                arg,
                have,
                need,
            });
        }
        self
    }

    /// An optional buffer (`None` is passed as a null pointer).
    fn opt(self, arg: &'static str, have: Option<usize>, need: usize) -> Self {
        match have {
            Some(h) => self.buf(arg, h, need),
            None => self,
        }
    }

    fn rule(mut self, ok: bool, reason: impl FnOnce() -> String) -> Self {
        if self.err.is_none() && !ok {
            self.err = Some(GpuError::BadLaunch {
                kernel: self.kernel,
                reason: reason(),
            });
        }
        self
    }

    fn done(self) -> GpuResult<Launch> {
        let (kernel, grid, block, smem) = (self.kernel, self.grid, self.block, self.smem);
        let this = self
            .rule((1..1 << 31).contains(&grid), || {
                format!("grid of {grid} blocks")
            })
            .rule((1..=1024).contains(&block), || {
                format!("block of {block} threads")
            })
            .rule(smem <= 48 << 10, || {
                format!("{smem} bytes of shared memory")
            });
        match this.err {
            Some(e) => Err(e),
            None => Ok(Launch {
                kernel,
                grid: this.grid as u32,
                block: this.block,
                smem: this.smem as u32,
            }),
        }
    }
}

/// Blocks of `block` threads covering `n` elements.
fn blocks(n: usize, block: u32) -> u64 {
    (n as u64).div_ceil(block as u64)
}

/// `ntt_pass` over `data` (u64 limbs) for pass `(s, t, c)` of a 2^log_n transform, twiddles of
/// 2^log_tw in `tw`, an optional scale table.
pub fn ntt_pass(
    log_n: u32,
    log_tw: u32,
    (s, t, c): Pass,
    data: usize,
    tw: usize,
    scale: Option<usize>,
) -> GpuResult<Launch> {
    let n = 1usize << log_n;
    let e = 1u64 << (t + c);
    Check::new("ntt_pass", (n as u64) >> (t + c), (e / 2) as u32)
        .smem(32 * e)
        .rule(
            t >= 1 && t + c <= NTT_MAX_BLOCK_LOG && c + t <= s && s <= log_n,
            || format!("pass (s {s}, t {t}, c {c}) of a 2^{log_n} transform"),
        )
        .rule(log_n <= log_tw && log_tw <= 31, || {
            format!("2^{log_n} transform with twiddles of 2^{log_tw}")
        })
        .buf("data", data, n * FR_LIMBS)
        .buf("tw", tw, (1usize << (log_tw.max(1) - 1)) * FR_LIMBS)
        .opt("scale_tab", scale, SCALE_TABLE * FR_LIMBS)
        .done()
}

/// An element-wise Fr kernel over n elements: every buffer in `bufs` must hold its stated
/// number of u64 limbs.
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

/// `msm_count` (keys/vals `None`) or `msm_scatter` over n scalars (u64 limbs) with `shape`.
pub fn msm_digits(
    kernel: &'static str,
    n: usize,
    sh: &MsmShape,
    scalars: usize,
    counts: usize,
    keys_vals: Option<(usize, usize)>,
) -> GpuResult<Launch> {
    let entries = n * sh.nwin as usize;
    let ch = Check::new(kernel, blocks(n, ELEMENTWISE_BLOCK), ELEMENTWISE_BLOCK)
        .rule(n >= 1 && (entries as u64) < 1 << 32, || {
            format!("{n} scalars × {} windows", sh.nwin)
        })
        .rule(sh.c >= 2 && sh.c <= 31, || {
            format!("window of {} bits", sh.c)
        })
        .buf("scalars", scalars, n * FR_LIMBS)
        .buf("counts", counts, sh.nbk as usize + 1);
    match keys_vals {
        Some((k, v)) => ch.buf("keys", k, entries).buf("vals", v, entries),
        None => ch,
    }
    .done()
}

/// `msm_accumulate` over n points (u64 limbs per affine point `affine_limbs`) with `shape`.
#[allow(clippy::too_many_arguments)]
pub fn msm_accumulate(
    n: usize,
    sh: &MsmShape,
    affine_limbs: usize,
    bases: usize,
    keys: usize,
    vals: usize,
    counts: usize,
    buckets: usize,
    segments: [usize; 2],
) -> GpuResult<Launch> {
    let entries = n * sh.nwin as usize;
    let x = sh.xyzz_limbs;
    Check::new(
        "msm_accumulate",
        (sh.nseg as u64).div_ceil(ACCUMULATE_BLOCK as u64),
        ACCUMULATE_BLOCK,
    )
    .buf("bases", bases, n * affine_limbs)
    .buf("keys", keys, entries)
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

/// Runs `launch` only when `checked` is a passed check: the device side's one entry to a launch.
pub fn launch_checked<T>(
    checked: GpuResult<Launch>,
    launch: impl FnOnce(&Launch) -> GpuResult<T>,
) -> GpuResult<T> {
    let l = checked?;
    launch(&l)
}

#[cfg(test)]
mod tests {
    use super::*;
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
    fn a_too_short_buffer_is_an_error_and_no_launch() {
        let n = 1usize << 12;
        let (ok, count) = launches(ntt_pass(12, 12, (12, 2, 0), n * 4, n * 2, None));
        assert!(ok.is_ok() && count == 1);
        let (err, count) = launches(ntt_pass(12, 12, (12, 2, 0), n * 4 - 1, n * 2, None));
        assert_eq!(count, 0, "nothing launched");
        match err {
            Err(GpuError::BufferTooShort {
                kernel, arg, need, ..
            }) => assert_eq!((kernel, arg, need), ("ntt_pass", "data", n * 4)),
            other => panic!("expected BufferTooShort, got {other:?}"),
        }
        let (err, count) = launches(ntt_pass(12, 12, (12, 2, 0), n * 4, n * 2, Some(7)));
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
                keys,
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
            Some((entries, entries)),
        ));
        assert_eq!(count, 0);
        assert!(matches!(
            err,
            Err(GpuError::BufferTooShort { arg: "counts", .. })
        ));
    }

    #[test]
    fn shapes_follow_the_kernel_notes() {
        let l = ntt_pass(27, 27, (27, 6, 3), 4 << 27, 4 << 26, Some(4 * SCALE_TABLE)).unwrap();
        assert_eq!(l.dims(), (1 << 18, 256, 32 * 512));
        assert!(matches!(
            ntt_pass(12, 12, (12, 8, 3), 4 << 12, 4 << 11, None),
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
    }
}
