//! Batch-affine halving rounds of a G1 MSM's sorted entries (`gpu.experimental.
//! msm_affine_rounds`, kernels/msm/pairs.cuh): after the scatter, each round adds every
//! bucket's entries in pairs in affine coordinates, one field inversion per block of the
//! kernel, and the accumulation then walks half as many entries per round. An experiment of
//! issue 39, off by default: correct on an H100 but slower (BENCHMARKS.md, "H200 — GPU knob
//! defaults"). `gpu.experimental.msm_affine_split` runs a round as three kernels instead.

use cudarc::driver::{CudaSlice, CudaView, PushKernelArg};

use super::device::Device;
use crate::gpu::error::{GpuError, GpuResult};
use crate::gpu::launch;
use crate::gpu::plan::MsmShape;

/// The entries after the rounds: their points (affine, `points.len() / 12` of them), values
/// (indices into the points), bucket starts, the keys of every entry where the accumulation
/// reads them, and the shape whose entries bound them.
pub(crate) struct Paired {
    pub points: CudaSlice<u64>,
    pub vals: CudaSlice<u32>,
    pub counts: CudaSlice<u32>,
    pub keys: Option<CudaSlice<u32>>,
    pub shape: MsmShape,
}

impl Device {
    /// `self.affine_rounds` rounds over the sorted entries of `sh` (their values `vals` into
    /// `bases`, bucket starts `counts`), or `None` where there are none to run or their
    /// buffers do not fit: the accumulation then takes the entries as they are.
    pub(crate) fn msm_pairs(
        &self,
        bases: &CudaView<'_, u64>,
        vals: &CudaSlice<u32>,
        counts: &CudaSlice<u32>,
        sh: &MsmShape,
    ) -> GpuResult<Option<Paired>> {
        let mut done: Option<Paired> = None;
        for round in 0..self.affine_rounds {
            let next = match &done {
                None => self.msm_pairs_round(bases, vals, counts, sh),
                Some(p) => self.msm_pairs_round(&p.points.as_view(), &p.vals, &p.counts, &p.shape),
            };
            match next {
                Ok(p) => done = Some(p),
                // Room for the first rounds only: the accumulation takes what they left.
                Err(GpuError::OutOfMemory {
                    what, need_bytes, ..
                }) => {
                    tracing::debug!(
                        target: "baton::gpu::cuda::pairs",
                        round,
                        what,
                        need_bytes,
                        "batch-affine round skipped: no room"
                    );
                    break;
                }
                Err(e) => return Err(e),
            }
        }
        Ok(done)
    }

    /// One round: the new bucket starts (`msm_pairs_count`, then the scan), then the pairs'
    /// sums (`msm_pairs_round`, or with `affine_split` its three kernels).
    fn msm_pairs_round(
        &self,
        src: &CudaView<'_, u64>,
        vals: &CudaSlice<u32>,
        counts: &CudaSlice<u32>,
        sh: &MsmShape,
    ) -> GpuResult<Paired> {
        let out = sh.paired();
        let nbk = sh.nbk;
        let m = nbk as usize + 1;
        // Not zeroed: msm_pairs_count writes every one of the nbk + 1 counts.
        let mut p = Paired {
            counts: self.alloc_scratch::<u32>(m, "MSM paired counts")?,
            points: self.alloc_scratch::<u64>(
                out.entries * launch::PAIRS_POINT_LIMBS,
                "MSM paired points",
            )?,
            vals: self.alloc_scratch::<u32>(out.entries, "MSM paired values")?,
            keys: match self.keyless {
                true => None,
                false => Some(self.alloc_scratch::<u32>(out.entries, "MSM paired keys")?),
            },
            shape: out,
        };
        let l = launch::msm_pairs_count(sh, counts.len(), p.counts.len());
        self.launch(&self.k.msm_pairs_count, l, |b| {
            b.arg(counts).arg(&nbk).arg(&mut p.counts);
        })?;
        self.scan(&mut p.counts, m)?;
        // Past SPLIT_MAX_ENTRIES the round runs fused (the split kernels flag a pair in bit 31).
        let split = self.affine_split && sh.entries < launch::SPLIT_MAX_ENTRIES;
        let round = match split {
            true => Self::msm_pairs_split,
            false => Self::msm_pairs_fused,
        };
        round(self, src, vals, counts, sh, &mut p)?;
        Ok(p)
    }

    /// The round in three kernels (`msm_pairs_den`, `msm_batch_inverse`, `msm_pairs_finish`)
    /// into `p` (its new starts counted already): the denominators in a buffer of their own,
    /// the inversion's running products in `p.points` until the last kernel writes the sums
    /// there.
    fn msm_pairs_split(
        &self,
        src: &CudaView<'_, u64>,
        vals: &CudaSlice<u32>,
        counts: &CudaSlice<u32>,
        sh: &MsmShape,
        p: &mut Paired,
    ) -> GpuResult<()> {
        let nbk = sh.nbk;
        let Paired {
            points,
            vals: nvals,
            counts: ncounts,
            keys: nkeys,
            shape,
        } = p;
        let ncounts = &*ncounts;
        let den_len = shape.entries * launch::PAIRS_DEN_LIMBS;
        let mut den = self.alloc_scratch::<u64>(den_len, "MSM paired denominators")?;
        let [den_l, inv_l, fin_l] = launch::msm_pairs_split(
            sh,
            self.sms,
            src.len(),
            vals.len(),
            counts.len(),
            ncounts.len(),
            den.len(),
            points.len(),
            nkeys.as_ref().map(|k| k.len()),
            nvals.len(),
        )?;
        let null = 0u64;
        self.launch(&self.k.msm_pairs_den, Ok(den_l), |b| {
            b.arg(src).arg(vals).arg(counts).arg(ncounts).arg(&nbk);
            b.arg(&mut den);
            match nkeys.as_mut() {
                Some(k) => b.arg(k),
                None => b.arg(&null),
            };
            b.arg(&mut *nvals);
        })?;
        self.launch(&self.k.msm_batch_inverse, Ok(inv_l), |b| {
            b.arg(&mut den).arg(&mut *points).arg(ncounts).arg(&nbk);
        })?;
        self.launch(&self.k.msm_pairs_finish, Ok(fin_l), |b| {
            b.arg(src).arg(vals).arg(ncounts).arg(&nbk);
            b.arg(&den).arg(points).arg(nvals);
        })
    }

    /// The round in one kernel (`msm_pairs_round`) into `p` (its new starts counted already).
    fn msm_pairs_fused(
        &self,
        src: &CudaView<'_, u64>,
        vals: &CudaSlice<u32>,
        counts: &CudaSlice<u32>,
        sh: &MsmShape,
        p: &mut Paired,
    ) -> GpuResult<()> {
        let nbk = sh.nbk;
        let Paired {
            points,
            vals: nvals,
            counts: ncounts,
            keys: nkeys,
            ..
        } = p;
        let ncounts = &*ncounts;
        let l = launch::msm_pairs_round(
            sh,
            self.affine_per as usize,
            src.len(),
            vals.len(),
            counts.len(),
            ncounts.len(),
            points.len(),
            nkeys.as_ref().map(|k| k.len()),
            nvals.len(),
        );
        let null = 0u64;
        self.launch(&self.k.msm_pairs_round, l, |b| {
            b.arg(src).arg(vals).arg(counts).arg(ncounts).arg(&nbk);
            b.arg(points);
            match nkeys.as_mut() {
                Some(k) => b.arg(k),
                None => b.arg(&null),
            };
            b.arg(nvals);
        })
    }
}
