//! Device NTTs: the twiddle and scale tables, the `ntt_pass` sequence of a transform, and the
//! Groth16 H pipeline exactly as kernels/NOTES.md lays it out.

use blstrs::Scalar;
use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::{CudaSlice, CudaViewMut, PushKernelArg};
use ff::Field;

use super::device::{drv, Device, Lane};
use crate::gpu::error::{GpuError, GpuResult};
use crate::gpu::host::{self, FR_LIMBS};
use crate::gpu::launch;
use crate::gpu::plan::{self, flags, ntt_plan_cols};
use crate::groth16::domain::Domain;

/// Entries of one half of a scale table.
const SCALE_HALF: usize = launch::SCALE_TABLE / 2;

/// Twiddles `W^e`, e < 2^log_tw (the whole circle, so that no pass negates one), serving every
/// NTT up to 2^log_tw: one table, or two parts whose product is the twiddle (`split` > 0, the
/// low part's log2; [`crate::gpu::plan::twiddle_split`]).
pub(crate) struct Twiddles {
    pub log_tw: u32,
    pub split: u32,
    pub table: CudaSlice<u64>,
}

/// The H pipeline's per-size constants: scale tables (1/n)·g^i and (1/n)·g^−i, and 1/Z.
pub(crate) struct HTables {
    pub fwd: CudaSlice<u64>,
    pub inv: CudaSlice<u64>,
    pub zinv: CudaSlice<u64>,
}

fn inv(x: Scalar) -> GpuResult<Scalar> {
    Option::from(x.invert()).ok_or_else(|| GpuError::Internal("zero has no inverse".into()))
}

impl Device {
    /// `out[i] = c·x^i` for i < count (`c = 1` when `c` is None), into the first `count` entries.
    fn powers_into(
        &self,
        out: &mut CudaViewMut<'_, u64>,
        count: usize,
        x: Scalar,
        c: Option<Scalar>,
    ) -> GpuResult<()> {
        let sq = self.upload_small(&host::square_table(x))?;
        let count32 = count as u32;
        let null = 0u64;
        let cdev = match c {
            Some(c) => Some(self.upload_small(&host::scalar_limbs(&c))?),
            None => None,
        };
        let l = launch::elementwise(
            "fr_powers",
            count,
            &[
                ("out", out.len(), count * FR_LIMBS),
                ("sq", sq.len(), 32 * FR_LIMBS),
                ("c", cdev.as_ref().map_or(FR_LIMBS, |c| c.len()), FR_LIMBS),
            ],
        );
        self.launch(&self.k.fr_powers, l, |b| {
            b.arg(out).arg(&count32).arg(&sq);
            match &cdev {
                Some(c) => b.arg(c),
                None => b.arg(&null),
            };
        })
    }

    /// `c·q^i` for i < `lo` into the first `lo` entries of `t`, then `q^(lo·j)` for j < `hi`
    /// after them: a table whose entry x is the product of one entry of each part (the scale
    /// tables, and the twiddles split in two).
    fn two_level_into(
        &self,
        t: &mut CudaSlice<u64>,
        (lo, hi): (usize, usize),
        q: Scalar,
        c: Option<Scalar>,
    ) -> GpuResult<()> {
        let (mut low, mut high) = t.split_at_mut(lo * FR_LIMBS);
        self.powers_into(&mut low, lo, q, c)?;
        self.powers_into(&mut high, hi, q.pow_vartime([lo as u64]), None)
    }

    /// The twiddle table for every NTT up to 2^log_tw, in two parts where this device splits
    /// it (`gpu.ntt_twiddles`, [`Device::twiddle_split`]).
    pub(crate) fn twiddles(&self, log_tw: u32) -> GpuResult<Twiddles> {
        let k = self.twiddle_split(log_tw);
        let count = plan::twiddle_entries(log_tw, k);
        // Written whole by the `fr_powers` launches below.
        let mut table = self.alloc_scratch::<u64>(count * FR_LIMBS, "twiddles")?;
        let w = host::root_of_unity(log_tw);
        match k {
            0 => self.powers_into(&mut table.slice_mut(..), count, w, None)?,
            // W^i for i < 2^k, then W^(j·2^k) for j < 2^(log_tw − k).
            k => self.two_level_into(&mut table, (1 << k, 1 << (log_tw - k)), w, None)?,
        }
        Ok(Twiddles {
            log_tw,
            split: k,
            table,
        })
    }

    /// A scale table multiplying position x by c·q^x (x < 2^28).
    fn scale_table(&self, c: Scalar, q: Scalar) -> GpuResult<CudaSlice<u64>> {
        // Both halves are written by the two `fr_powers` launches of `two_level_into`.
        let mut t = self.alloc_scratch::<u64>(2 * SCALE_HALF * FR_LIMBS, "scale table")?;
        self.two_level_into(&mut t, (SCALE_HALF, SCALE_HALF), q, Some(c))?;
        Ok(t)
    }

    /// The scale tables and 1/Z of `domain`'s H pipeline.
    pub(crate) fn h_tables(&self, domain: &Domain) -> GpuResult<HTables> {
        let n_inv = inv(Scalar::from(domain.size() as u64))?;
        let g = Domain::coset_shift();
        Ok(HTables {
            fwd: self.scale_table(n_inv, g)?,
            inv: self.scale_table(n_inv, inv(g)?)?,
            zinv: self.upload_small(&host::scalar_limbs(&inv(domain.z_on_coset())?))?,
        })
    }

    /// One transform of the first 2^log_n elements of `data`: the DIF pass list (DIT:
    /// reversed). `scale` carries a table and the SCALE_LOAD / SCALE_STORE / SCALE_BITREV flags,
    /// applied to the first / last pass. Queued on the stream of `lane`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn ntt_passes(
        &self,
        lane: Lane,
        data: &mut CudaSlice<u64>,
        tw: &Twiddles,
        log_n: u32,
        dit: bool,
        inverse: bool,
        scale: Option<(&CudaSlice<u64>, u32)>,
    ) -> GpuResult<()> {
        let block = self.ntt_block.load(std::sync::atomic::Ordering::Relaxed);
        let radix4 = self.ntt_radix.load(std::sync::atomic::Ordering::Relaxed) == 4;
        let cols = self.ntt_columns.load(std::sync::atomic::Ordering::Relaxed);
        let mut plan = ntt_plan_cols(log_n, block, cols);
        if dit {
            plan.reverse();
        }
        let last = plan.len() - 1;
        let null = 0u64;
        let log_tw = tw.log_tw;
        for (k, &pass) in plan.iter().enumerate() {
            let (s, t, c) = pass;
            let mut fl =
                if dit { flags::DIT } else { 0 } | if inverse { flags::INVERSE } else { 0 };
            if let Some((_, sf)) = scale {
                if sf & flags::SCALE_LOAD != 0 && k == 0 {
                    fl |= flags::SCALE_LOAD | (sf & flags::SCALE_BITREV);
                }
                if sf & flags::SCALE_STORE != 0 && k == last {
                    fl |= flags::SCALE_STORE | (sf & flags::SCALE_BITREV);
                }
            }
            let l = launch::ntt_pass(
                log_n,
                (log_tw, tw.split),
                pass,
                radix4,
                data.len(),
                tw.table.len(),
                scale.map(|(tab, _)| tab.len()),
            );
            let kernel = if radix4 {
                &self.k.ntt_pass_r4
            } else {
                &self.k.ntt_pass
            };
            self.launch_on(lane, kernel, l, |b| {
                b.arg(&mut *data).arg(&tw.table).arg(&log_n).arg(&log_tw);
                b.arg(&tw.split);
                b.arg(&s).arg(&t).arg(&c).arg(&fl);
                match scale {
                    Some((tab, _)) => b.arg(tab),
                    None => b.arg(&null),
                };
            })?;
        }
        Ok(())
    }

    /// `out[rev(i)] = input[i]` for the first 2^log_n elements, on the stream of `lane`.
    pub(crate) fn bitrev(
        &self,
        lane: Lane,
        out: &mut CudaSlice<u64>,
        input: &CudaSlice<u64>,
        log_n: u32,
    ) -> GpuResult<()> {
        let n = 1usize << log_n;
        let need = n * FR_LIMBS;
        let l = launch::elementwise(
            "fr_bitrev",
            n,
            &[("out", out.len(), need), ("in", input.len(), need)],
        );
        self.launch_on(lane, &self.k.fr_bitrev, l, |b| {
            b.arg(&mut *out).arg(input).arg(&log_n);
        })
    }

    /// H from a, b, c (natural-order evaluations, zero-padded to n) on the stream of `lane`:
    /// leaves h's natural-order coefficients in `b`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn h_pipeline(
        &self,
        lane: Lane,
        a: &mut CudaSlice<u64>,
        b: &mut CudaSlice<u64>,
        c: &mut CudaSlice<u64>,
        tw: &Twiddles,
        tabs: &HTables,
        log_n: u32,
    ) -> GpuResult<()> {
        for d in [&mut *a, &mut *b, &mut *c] {
            self.h_to_coset(lane, d, tw, tabs, log_n)?;
        }
        self.h_finish(lane, a, b, c, tw, tabs, log_n)
    }

    /// The first step of H for one of a, b, c: evaluations on the domain to evaluations on
    /// the coset (inverse NTT with (1/n)·g^i folded into its last pass, then a forward NTT),
    /// on the stream of `lane`.
    pub(crate) fn h_to_coset(
        &self,
        lane: Lane,
        d: &mut CudaSlice<u64>,
        tw: &Twiddles,
        tabs: &HTables,
        log_n: u32,
    ) -> GpuResult<()> {
        let store = flags::SCALE_STORE | flags::SCALE_BITREV;
        self.ntt_passes(lane, d, tw, log_n, false, true, Some((&tabs.fwd, store)))?;
        self.ntt_passes(lane, d, tw, log_n, true, false, None)
    }

    /// The rest of H once a, b, c are on the coset: (a·b − c)/Z, back to coefficients, into
    /// `b` in natural order, on the stream of `lane`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn h_finish(
        &self,
        lane: Lane,
        a: &mut CudaSlice<u64>,
        b: &mut CudaSlice<u64>,
        c: &CudaSlice<u64>,
        tw: &Twiddles,
        tabs: &HTables,
        log_n: u32,
    ) -> GpuResult<()> {
        let n = 1usize << log_n;
        let n32 = n as u32;
        let need = n * FR_LIMBS;
        let l = launch::elementwise(
            "ntt_coset_h",
            n,
            &[
                ("a", a.len(), need),
                ("b", b.len(), need),
                ("c", c.len(), need),
                ("zinv", tabs.zinv.len(), FR_LIMBS),
            ],
        );
        self.launch_on(lane, &self.k.ntt_coset_h, l, |bl| {
            bl.arg(&mut *a).arg(&*b).arg(c).arg(&tabs.zinv).arg(&n32);
        })?;
        self.h_back(lane, a, b, tw, tabs, log_n)
    }

    /// H's combine in two buffers, on the coset (`ntt_coset_h2`): step 0 leaves a·b in `x`
    /// (`y` holding b), step 1 leaves (x − y)/Z in `x` (`y` holding c).
    pub(crate) fn h_combine2(
        &self,
        lane: Lane,
        x: &mut CudaSlice<u64>,
        y: &CudaSlice<u64>,
        tabs: &HTables,
        log_n: u32,
        step: u32,
    ) -> GpuResult<()> {
        let n = 1usize << log_n;
        let n32 = n as u32;
        let need = n * FR_LIMBS;
        let l = launch::elementwise(
            "ntt_coset_h2",
            n,
            &[
                ("x", x.len(), need),
                ("y", y.len(), need),
                ("zinv", tabs.zinv.len(), FR_LIMBS),
            ],
        );
        self.launch_on(lane, &self.k.ntt_coset_h2, l, |bl| {
            bl.arg(&mut *x).arg(y).arg(&tabs.zinv).arg(&n32).arg(&step);
        })
    }

    /// The last steps of H, from (a·b − c)/Z on the coset in `x`: back to coefficients, into
    /// `out` in natural order, on the stream of `lane`.
    pub(crate) fn h_back(
        &self,
        lane: Lane,
        x: &mut CudaSlice<u64>,
        out: &mut CudaSlice<u64>,
        tw: &Twiddles,
        tabs: &HTables,
        log_n: u32,
    ) -> GpuResult<()> {
        let store = flags::SCALE_STORE | flags::SCALE_BITREV;
        self.ntt_passes(lane, x, tw, log_n, false, true, Some((&tabs.inv, store)))?;
        self.bitrev(lane, out, x, log_n)
    }

    /// Forward NTT, natural order in and out (DIF, then `fr_bitrev`).
    pub(crate) fn ntt_natural(&self, v: &mut [Scalar], tw: &Twiddles, log_n: u32) -> GpuResult<()> {
        let mut d = self.upload_small(host::scalars_as_u64(v))?;
        self.ntt_passes(Lane::Compute, &mut d, tw, log_n, false, false, None)?;
        // Written whole by `fr_bitrev`.
        let mut out = self.alloc_scratch::<u64>(v.len() * FR_LIMBS, "NTT output")?;
        self.bitrev(Lane::Compute, &mut out, &d, log_n)?;
        self.stream
            .memcpy_dtoh(&out, host::scalars_as_u64_mut(v))
            .map_err(drv("download NTT"))?;
        self.stream.synchronize().map_err(drv("synchronize"))
    }

    /// Event-timed forward DIF transforms of device data, in milliseconds.
    pub(crate) fn ntt_timing(&self, tw: &Twiddles, log_n: u32, reps: usize) -> GpuResult<Vec<f64>> {
        let n = 1usize << log_n;
        // Filled by `fr_powers` right below.
        let mut d = self.alloc_scratch::<u64>(n * FR_LIMBS, "NTT data")?;
        let x = Scalar::random(&mut rand::thread_rng());
        self.powers_into(&mut d.slice_mut(..), n, x, Some(x))?;
        self.ntt_passes(Lane::Compute, &mut d, tw, log_n, false, false, None)?;
        let mut out = Vec::with_capacity(reps);
        for _ in 0..reps {
            let flags = Some(CUevent_flags::CU_EVENT_DEFAULT);
            let start = self.stream.record_event(flags).map_err(drv("event"))?;
            self.ntt_passes(Lane::Compute, &mut d, tw, log_n, false, false, None)?;
            let end = self.stream.record_event(flags).map_err(drv("event"))?;
            end.synchronize().map_err(drv("event sync"))?;
            out.push(start.elapsed_ms(&end).map_err(drv("elapsed"))? as f64);
        }
        Ok(out)
    }
}
