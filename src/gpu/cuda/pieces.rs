//! An MSM cut into pieces. Every piece's window is the one an equal share of the MSM gets, so
//! that consecutive pieces whose counts chose the same window add to one set of buckets
//! ([`BucketRun`]), reduced once after the last of them. MSMs of host scalars cut themselves
//! so that each piece's upload hides behind the previous piece's kernels
//! ([`super::calls`]); MSMs of scalars already on the device (the partition's) so that their
//! scratch is a share's and their window a share's.

use cudarc::driver::{CudaSlice, CudaView, PushKernelArg};
use group::Group;

use super::clock::PhaseClock;
use super::device::{Device, DeviceGroup, Lane};
use super::msm::BucketRun;
use crate::gpu::error::GpuResult;
use crate::gpu::host::{self, FR_LIMBS};
use crate::gpu::launch;
use crate::gpu::options::MsmFirstPiece;
use crate::gpu::plan::{self, MsmShape};

/// The pieces of one MSM queued so far: the bucket run they add to and each piece's window
/// sums (with its window and its phase clock).
pub(crate) struct Pieces<'a> {
    run: Option<BucketRun>,
    sums: Vec<(CudaSlice<u64>, u32, Option<PhaseClock<'a>>)>,
}

impl Device {
    /// An MSM's pieces, none queued yet.
    pub(crate) fn pieces(&self) -> Pieces<'_> {
        Pieces {
            run: None,
            sums: Vec::new(),
        }
    }

    /// Queues the kernels of one piece of shape `sh` (its window an equal share's) on the
    /// compute stream: it joins the bucket run of the pieces before it, or ends that run (of
    /// another window) and starts its own.
    pub(crate) fn piece<'a, G: DeviceGroup>(
        &'a self,
        p: &mut Pieces<'a>,
        bases: &CudaView<'_, u64>,
        scalars: &CudaView<'_, u64>,
        n: usize,
        sh: &MsmShape,
    ) -> GpuResult<()> {
        if let (Some(r), Some(last)) = (
            p.run.take_if(|r| !self.piece_joins(r, sh)),
            p.sums.last_mut(),
        ) {
            self.reduce_run::<G>(r, &mut last.0, &mut last.2)?;
        }
        let (out, clock) = self.msm_launch_piece::<G>(bases, scalars, n, sh, &mut p.run)?;
        p.sums.push((out, sh.c, clock));
        Ok(())
    }

    /// The MSM's result: the last run reduced, every piece's window sums downloaded and
    /// combined. The pieces' scalars must stay alive until this returns.
    pub(crate) fn pieces_sum<G: DeviceGroup>(&self, mut p: Pieces<'_>) -> GpuResult<G::Proj> {
        if let (Some(r), Some(last)) = (p.run.take(), p.sums.last_mut()) {
            self.reduce_run::<G>(r, &mut last.0, &mut last.2)?;
        }
        let mut acc = G::Proj::identity();
        for (out, c, _) in &p.sums {
            acc += host::combine_windows::<G>(&self.download_sums(out)?, *c);
        }
        // After the downloads, so the phase clocks (BATON_MSM_PHASES) add no wait between pieces.
        for (_, _, clock) in p.sums {
            if let Some(clock) = clock {
                clock.report();
            }
        }
        Ok(acc)
    }

    /// The shapes of the pieces `bounds` of device scalars, each window chosen as for `share`
    /// scalars: the pieces' counts queued on the compute stream and downloaded together, so
    /// the host waits once.
    pub(crate) fn piece_shapes<G: DeviceGroup>(
        &self,
        scalars: &CudaView<'_, u64>,
        bounds: &[(usize, usize)],
        share: usize,
    ) -> GpuResult<Vec<MsmShape>> {
        let shape = |&(lo, hi): &(usize, usize), k| self.shape_counted::<G>(hi - lo, share, k);
        if !self.msm_window.counts(share) {
            return Ok(bounds.iter().map(|b| shape(b, None)).collect());
        }
        let mut counts = self.alloc_zeros::<u32>(bounds.len(), "MSM scalar counts")?;
        for (i, &(lo, hi)) in bounds.iter().enumerate() {
            let piece = scalars.slice(lo * FR_LIMBS..hi * FR_LIMBS);
            let mut count = counts.slice_mut(i..i + 1);
            let n32 = (hi - lo) as u32;
            let l = launch::msm_nontrivial(hi - lo, piece.len(), count.len());
            self.launch(&self.k.msm_nontrivial, l, |b| {
                b.arg(&piece).arg(&n32).arg(&mut count);
            })?;
        }
        let host = self.download_now(Lane::Compute, &counts, "download scalar counts")?;
        Ok(bounds
            .iter()
            .zip(host)
            .map(|(b, k)| shape(b, Some(k as usize)))
            .collect())
    }

    /// The MSM of the first n of `scalars` (on the device) over `bases`, in `pieces` equal
    /// pieces: their windows counted together (one wait), then their kernels queued back to
    /// back.
    pub(crate) fn msm_resident_pieces<G: DeviceGroup>(
        &self,
        bases: &CudaView<'_, u64>,
        scalars: &CudaView<'_, u64>,
        n: usize,
        pieces: usize,
    ) -> GpuResult<G::Proj> {
        let bounds = plan::piece_bounds(n, pieces, MsmFirstPiece::Equal, n);
        let share = n.div_ceil(pieces.max(1));
        let shapes = self.piece_shapes::<G>(scalars, &bounds, share)?;
        let mut p = self.pieces();
        let limbs = G::AFFINE_LIMBS;
        for (&(lo, hi), sh) in bounds.iter().zip(&shapes) {
            let b = bases.slice(lo * limbs..hi * limbs);
            let s = scalars.slice(lo * FR_LIMBS..hi * FR_LIMBS);
            self.piece::<G>(&mut p, &b, &s, hi - lo, sh)?;
        }
        self.pieces_sum::<G>(p)
    }
}
