//! Device NTTs: the twiddle and scale tables, the `ntt_pass` sequence of a transform, and the
//! Groth16 H pipeline exactly as kernels/NOTES.md lays it out.

use blstrs::Scalar;
use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::CudaSlice;
use ff::Field;

use super::{drv, DResult, Device, Fail, HTables, Twiddles};
use crate::domain::Domain;
use crate::gpu::host::{self, flags, FR_LIMBS};

/// Entries of one half of a scale table.
const SCALE_HALF: usize = 16384;

fn inv(x: Scalar) -> DResult<Scalar> {
    Option::from(x.invert()).ok_or_else(|| {
        Fail::Error(crate::error::Error::Backend {
            backend: "cuda",
            reason: "zero has no inverse".into(),
        })
    })
}

impl Device {
    fn upload(&self, limbs: &[u64]) -> DResult<CudaSlice<u64>> {
        self.stream.clone_htod(limbs).map_err(drv("upload"))
    }

    /// `out[i] = c·x^i` for i < count (`c = 1` when `c` is None), into the first `count` entries.
    fn powers_into(
        &self,
        out: &mut cudarc::driver::CudaViewMut<'_, u64>,
        count: usize,
        x: Scalar,
        c: Option<Scalar>,
    ) -> DResult<()> {
        let sq = self.upload(&host::square_table(x))?;
        let count32 = count as u32;
        let grid = count.div_ceil(256);
        match c {
            Some(c) => {
                let cdev = self.upload(&host::scalar_limbs(&c))?;
                launch!(self, fr_powers, grid, 256, 0; out, &count32, &sq, &cdev)
            }
            None => {
                let null = 0u64;
                launch!(self, fr_powers, grid, 256, 0; out, &count32, &sq, &null)
            }
        }
    }

    /// The twiddle table for every NTT up to 2^log_tw.
    pub(crate) fn twiddles(&self, log_tw: u32) -> DResult<Twiddles> {
        let count = 1usize << (log_tw.max(1) - 1);
        // SAFETY: `fr_powers` writes every entry before any read.
        let mut table =
            unsafe { self.stream.alloc::<u64>(count * FR_LIMBS) }.map_err(drv("alloc twiddles"))?;
        let w = host::root_of_unity(log_tw);
        self.powers_into(&mut table.slice_mut(..), count, w, None)?;
        Ok(Twiddles { log_tw, table })
    }

    /// A scale table multiplying position x by c·q^x (x < 2^28).
    fn scale_table(&self, c: Scalar, q: Scalar) -> DResult<CudaSlice<u64>> {
        // SAFETY: the two `fr_powers` launches below write both halves.
        let mut t = unsafe { self.stream.alloc::<u64>(2 * SCALE_HALF * FR_LIMBS) }
            .map_err(drv("alloc scale table"))?;
        {
            let (mut lo, mut hi) = t.split_at_mut(SCALE_HALF * FR_LIMBS);
            self.powers_into(&mut lo, SCALE_HALF, q, Some(c))?;
            self.powers_into(
                &mut hi,
                SCALE_HALF,
                q.pow_vartime([SCALE_HALF as u64]),
                None,
            )?;
        }
        Ok(t)
    }

    /// The scale tables and 1/Z of `domain`'s H pipeline.
    pub(crate) fn h_tables(&self, domain: &Domain) -> DResult<HTables> {
        let n_inv = inv(Scalar::from(domain.size() as u64))?;
        let g = Domain::coset_shift();
        Ok(HTables {
            fwd: self.scale_table(n_inv, g)?,
            inv: self.scale_table(n_inv, inv(g)?)?,
            zinv: self.upload(&host::scalar_limbs(&inv(domain.z_on_coset())?))?,
        })
    }

    /// One transform: the DIF pass list (DIT: reversed). `scale` carries a table and the
    /// SCALE_LOAD / SCALE_STORE / SCALE_BITREV flags, applied to the first / last pass.
    pub(crate) fn ntt_passes(
        &self,
        data: &mut CudaSlice<u64>,
        tw: &Twiddles,
        log_n: u32,
        dit: bool,
        inverse: bool,
        scale: Option<(&CudaSlice<u64>, u32)>,
    ) -> DResult<()> {
        let mut plan = host::ntt_plan(log_n);
        if dit {
            plan.reverse();
        }
        let last = plan.len() - 1;
        let null = 0u64;
        let log_tw = tw.log_tw;
        for (k, &(s, t, c)) in plan.iter().enumerate() {
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
            let e = 1u64 << (t + c);
            let grid = (1u64 << log_n) >> (t + c);
            match scale {
                Some((tab, _)) => launch!(self, ntt_pass, grid, e / 2, 32 * e;
                        &mut *data, &tw.table, &log_n, &log_tw, &s, &t, &c, &fl, tab)?,
                None => launch!(self, ntt_pass, grid, e / 2, 32 * e;
                        &mut *data, &tw.table, &log_n, &log_tw, &s, &t, &c, &fl, &null)?,
            }
        }
        Ok(())
    }

    /// H from a, b, c (natural-order evaluations, zero-padded to n): leaves h's natural-order
    /// coefficients in `b`.
    pub(crate) fn h_pipeline(
        &self,
        a: &mut CudaSlice<u64>,
        b: &mut CudaSlice<u64>,
        c: &mut CudaSlice<u64>,
        tw: &Twiddles,
        tabs: &HTables,
        log_n: u32,
    ) -> DResult<()> {
        let store = flags::SCALE_STORE | flags::SCALE_BITREV;
        for d in [&mut *a, &mut *b, &mut *c] {
            self.ntt_passes(d, tw, log_n, false, true, Some((&tabs.fwd, store)))?;
            self.ntt_passes(d, tw, log_n, true, false, None)?;
        }
        let n = 1u32 << log_n;
        let grid = n.div_ceil(256);
        launch!(self, ntt_coset_h, grid, 256, 0; &mut *a, &*b, &*c, &tabs.zinv, &n)?;
        self.ntt_passes(a, tw, log_n, false, true, Some((&tabs.inv, store)))?;
        launch!(self, fr_bitrev, grid, 256, 0; &mut *b, &*a, &log_n)
    }

    /// Forward NTT, natural order in and out (DIF, then `fr_bitrev`).
    pub(crate) fn ntt_natural(&self, v: &mut [Scalar], tw: &Twiddles, log_n: u32) -> DResult<()> {
        let mut d = self.upload(host::scalars_as_u64(v))?;
        self.ntt_passes(&mut d, tw, log_n, false, false, None)?;
        // SAFETY: `fr_bitrev` writes every entry.
        let mut out =
            unsafe { self.stream.alloc::<u64>(v.len() * FR_LIMBS) }.map_err(drv("alloc"))?;
        let grid = v.len().div_ceil(256);
        launch!(self, fr_bitrev, grid, 256, 0; &mut out, &d, &log_n)?;
        self.stream
            .memcpy_dtoh(&out, host::scalars_as_u64_mut(v))
            .map_err(drv("download"))?;
        self.stream.synchronize().map_err(drv("synchronize"))
    }

    /// Event-timed forward DIF transforms of device data, in milliseconds.
    pub(crate) fn ntt_timing(&self, tw: &Twiddles, log_n: u32, reps: usize) -> DResult<Vec<f64>> {
        let n = 1usize << log_n;
        // SAFETY: filled by `fr_powers` right below.
        let mut d = unsafe { self.stream.alloc::<u64>(n * FR_LIMBS) }.map_err(drv("alloc"))?;
        let x = Scalar::random(&mut rand::thread_rng());
        self.powers_into(&mut d.slice_mut(..), n, x, Some(x))?;
        self.ntt_passes(&mut d, tw, log_n, false, false, None)?;
        let mut out = Vec::with_capacity(reps);
        for _ in 0..reps {
            let flags = Some(CUevent_flags::CU_EVENT_DEFAULT);
            let start = self.stream.record_event(flags).map_err(drv("event"))?;
            self.ntt_passes(&mut d, tw, log_n, false, false, None)?;
            let end = self.stream.record_event(flags).map_err(drv("event"))?;
            end.synchronize().map_err(drv("event sync"))?;
            out.push(start.elapsed_ms(&end).map_err(drv("elapsed"))? as f64);
        }
        Ok(out)
    }
}
