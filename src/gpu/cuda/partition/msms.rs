//! The MSMs of a partition from device scalars over its resident bases, or over bases streamed
//! from the host where their set is not resident; on the CPU below the GPU threshold. The witness's (L, A, B_G1, B_G2) need no H: they run while a, b, c
//! upload.

use std::time::Duration;

use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use cudarc::driver::sys::CUdeviceptr;
use cudarc::driver::{CudaSlice, CudaView, DevicePtrMut};

use super::shape::{QueryBases, Shape};
use super::upload::HostAux;

use crate::gpu::cuda::backend::CudaBackend;
use crate::gpu::cuda::calls::{no_fallback, CpuMsm};
use crate::gpu::cuda::device::{drv, Device, DeviceGroup, Lane};
use crate::gpu::cuda::memory::{BaseSets, BasesKey};
use crate::gpu::cuda::pieces::Pieces;
use crate::gpu::cuda::staging::Staging;
use crate::gpu::error::{GpuError, GpuResult};
use crate::gpu::host::{self, FR_LIMBS, G1, G2};
use crate::gpu::options::MsmFirstPiece;
use crate::gpu::plan::{self, Cut, MsmShape, Streams, MIN_GPU_MSM};
use crate::groth16::cs::Density;
use crate::groth16::error::Result;
use crate::groth16::prover::Witness;

/// The base sets a partition call reads: the resident ones, and the device bytes kept free for
/// streaming the others' bases from the host.
pub(super) struct Sets<'a> {
    pub bases: &'a BaseSets,
    pub stream_room: u64,
    /// How the MSMs over resident bases are cut.
    pub cut: Cut,
}

impl CudaBackend {
    /// The least room H's MSM may stream in beside the witness's MSMs (its smallest pieces):
    /// under `gpu.experimental.capped_h_beside`, the lean cut (H first) and H's set streamed
    /// (not among `keys`); else `None`, and H's MSM follows the witness's.
    pub(super) fn h_beside(
        &self,
        g1: &[QueryBases<'_, G1Affine>],
        keys: &[BasesKey],
        cut: Cut,
    ) -> Option<u64> {
        let h = g1.first().filter(|h| !keys.contains(&h.key()))?;
        let on = self.twin.is_some() && cut.h_first();
        let rule = self.dev.msm_window;
        on.then(|| plan::streamed_minimum::<G1>(h.points().len(), rule, Streams::Points))
    }

    /// Counts a call whose H's MSM ran beside the witness's on `twin`, whose upload and peak
    /// counters go to the device's; returns that MSM's `sum`.
    pub(super) fn h_beside_done(&self, twin: &Device, sum: G1Projective) -> G1Projective {
        use std::sync::atomic::Ordering::Relaxed;
        self.h_beside.fetch_add(1, Relaxed);
        let dev = &self.dev;
        dev.uploaded
            .fetch_add(twin.uploaded.swap(0, Relaxed), Relaxed);
        dev.peak_used
            .fetch_max(twin.peak_used.swap(0, Relaxed), Relaxed);
        sum
    }

    /// The MSM of the first `k` scalars of `scalars` over the bases of `q` (from its `skip`-th
    /// point on): resident, or streamed from the host when its set is not.
    pub(super) fn device_msm<G: DeviceGroup>(
        &self,
        sets: &Sets<'_>,
        q: &QueryBases<'_, G::Affine>,
        scalars: &CudaView<'_, u64>,
        k: usize,
    ) -> GpuResult<G::Proj> {
        let Some(points) = sets.bases.get(&q.key()).map(|r| &r.points) else {
            return self.msm_streamed_device::<G>(
                &self.dev,
                sets.stream_room,
                q.points(),
                scalars,
                k,
            );
        };
        let skip = q.skip;
        // The window from k is the largest a count-chosen one can be.
        if k > MsmShape::max_points(plan::window_for(self.dev.msm_window, k, k)) {
            return Err(GpuError::BadLaunch {
                kernel: "msm",
                reason: format!("{k} points exceed one launch sequence"),
            });
        }
        let (from, to) = (skip * G::AFFINE_LIMBS, (skip + k) * G::AFFINE_LIMBS);
        if to > points.len() {
            return Err(GpuError::Internal(format!(
                "MSM of {k} points from {skip} past its {}-point base set",
                points.len() / G::AFFINE_LIMBS
            )));
        }
        let bases = points.slice(from..to);
        // Cut as the call's plan says: each piece's scratch and window are a share's, and the
        // pieces share their buckets.
        let pieces = sets.cut.pieces(k);
        if pieces > 1 {
            return self
                .dev
                .msm_resident_pieces::<G>(&bases, scalars, k, pieces);
        }
        let (out, c) = self.dev.msm::<G>(&bases, scalars, k)?;
        Ok(host::combine_windows::<G>(&out, c))
    }

    /// Σ over the aux variables present in `density` with the bases of `q`:
    /// filtered on the device, or on the CPU below the GPU threshold.
    pub(super) fn aux_msm<G: DeviceGroup>(
        &self,
        sets: &Sets<'_>,
        q: &QueryBases<'_, G::Affine>,
        density: &Density,
        filtered: Option<&CudaSlice<u64>>,
        host_aux: &HostAux<'_>,
        cpu: CpuMsm<G>,
    ) -> Result<G::Proj> {
        let kept = density.count();
        if kept < MIN_GPU_MSM {
            return cpu(q.points(), host_aux.get(), Some(density));
        }
        let f = filtered.ok_or_else(|| GpuError::Internal("filtered scalars missing".into()))?;
        Ok(self
            .device_msm::<G>(sets, q, &f.slice(..), kept)
            .map_err(no_fallback)?)
    }

    /// The private witness uploaded in the pieces of L's MSM, each piece's kernels queued as
    /// soon as its scalars are up, so that the upload of piece k + 1 overlaps piece k's
    /// kernels (the whole upload used to come first: 2 GiB at 2^26). The buffer holds all of
    /// `aux` once this returns (the later users on the compute stream are ordered after every
    /// piece's copy); L's window sums come from [`Device::pieces_sum`]. `pieces` (> 1) as
    /// [`plan::msm_pieces`] cuts L; returns the buffer, L's queued pieces and the host time
    /// spent copying.
    pub(super) fn witness_with_l<'d>(
        &'d self,
        mut staging: Option<&mut Staging>,
        bases: &BaseSets,
        key: &BasesKey,
        aux: &[Scalar],
        pieces: usize,
    ) -> GpuResult<(CudaSlice<u64>, Pieces<'d>, Duration)> {
        let dev = &self.dev;
        let n = aux.len();
        let src = host::scalars_as_u64(aux);
        let points = resident(bases, key)?;
        let mut buf = dev.alloc_scratch_on::<u64>(Lane::Copy, src.len().max(1), "witness")?;
        // The pieces are copied to the buffer untracked: each piece's kernels wait for an event
        // after that piece's copy, where cudarc's per-buffer events would make the copy of
        // piece k + 1 wait for piece k's kernels (they read the same buffer). The address is
        // taken before any copy or kernel, so nothing in flight uses the buffer.
        let at = {
            let (at, _write) = buf.device_ptr_mut(&dev.copy);
            at
        };
        let bounds = plan::piece_bounds(n, pieces, MsmFirstPiece::Equal, n);
        let share = n.div_ceil(pieces.max(1));
        let mut p = dev.pieces();
        let mut host_time = Duration::ZERO;
        let mut queue = || -> GpuResult<()> {
            for &(lo, hi) in &bounds {
                let off = lo * FR_LIMBS;
                let part = &src[off..hi * FR_LIMBS];
                // SAFETY: `at` addresses `buf` (alive here and until the caller drops it, after
                // its MSMs), piece [lo, hi) lies inside it, nothing has used those elements yet,
                // and every use after the copy waits for `up` (the count runs on the copy
                // stream itself; the compute stream waits for it below).
                host_time += unsafe {
                    dev.upload_untracked(
                        &dev.copy,
                        staging.as_deref_mut(),
                        part,
                        at + (off * std::mem::size_of::<u64>()) as CUdeviceptr,
                        part.len(),
                        "upload witness",
                    )?
                };
                let up = dev.copy.record_event(None).map_err(drv("event"))?;
                dev.stream.wait(&up).map_err(drv("stream wait"))?;
                let scalars = buf.slice(off..hi * FR_LIMBS);
                let sh = dev.shape::<G1>(Lane::Copy, &scalars, hi - lo, share)?;
                let b = points.slice(lo * host::AFFINE_LIMBS..hi * host::AFFINE_LIMBS);
                dev.piece::<G1>(&mut p, &b, &scalars, hi - lo, &sh)?;
            }
            Ok(())
        };
        if let Err(e) = queue() {
            // cudarc keeps one read event per buffer: a piece's count (copy stream) replaced
            // the record of the previous piece's kernels (compute stream), so freeing `buf`
            // now would wait for the count only. Drain the compute stream first.
            let _ = dev.stream.synchronize();
            return Err(e);
        }
        Ok((buf, p, host_time))
    }

    /// The MSMs of the witness `aux` (on the device): L over all of it, A and B_G1 (and B_G2
    /// when `g2q` is there) over the variables their densities keep, filtered on the device
    /// (`words`: the A and B density bitmaps), each over the resident bases of its query in
    /// `g1q` and `g2q` ([`super::shape::queries`]). `l_pieces`: L already queued with the
    /// witness's upload ([`CudaBackend::witness_with_l`]).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn witness_msms(
        &self,
        sets: &Sets<'_>,
        sh: &Shape,
        w: &Witness,
        host_aux: &HostAux<'_>,
        aux: &CudaSlice<u64>,
        l_pieces: Option<Pieces<'_>>,
        words: &[Vec<u32>; 2],
        g1q: &[QueryBases<'_, G1Affine>; 4],
        g2q: Option<&QueryBases<'_, G2Affine>>,
    ) -> Result<WitnessSums> {
        let filter = |d: &Density, w: &[u32]| -> Result<Option<CudaSlice<u64>>> {
            if d.count() < MIN_GPU_MSM {
                return Ok(None);
            }
            let words = self.dev.upload_small(w).map_err(no_fallback)?;
            let f = self.dev.filter(&aux.slice(..), &words, sh.m_aux, d.count());
            Ok(Some(f.map_err(no_fallback)?))
        };
        let l = match l_pieces {
            Some(p) => self.dev.pieces_sum::<G1>(p).map_err(no_fallback)?,
            None if sh.m_aux < MIN_GPU_MSM => {
                crate::groth16::msm::msm_g1(g1q[1].points(), host_aux.get(), None)?
            }
            None => self
                .device_msm::<G1>(sets, &g1q[1], &aux.slice(..), sh.m_aux)
                .map_err(no_fallback)?,
        };
        let fa = filter(&w.a_aux_density, &words[0])?;
        let a = self.aux_msm::<G1>(
            sets,
            &g1q[2],
            &w.a_aux_density,
            fa.as_ref(),
            host_aux,
            crate::groth16::msm::msm_g1,
        )?;
        drop(fa);
        let fb = filter(&w.b_aux_density, &words[1])?;
        let b = self.aux_msm::<G1>(
            sets,
            &g1q[3],
            &w.b_aux_density,
            fb.as_ref(),
            host_aux,
            crate::groth16::msm::msm_g1,
        )?;
        let b2 = match g2q {
            Some(q) => Some(self.aux_msm::<G2>(
                sets,
                q,
                &w.b_aux_density,
                fb.as_ref(),
                host_aux,
                crate::groth16::msm::msm_g2,
            )?),
            None => None,
        };
        Ok(WitnessSums { l, a, b, b2 })
    }
}

/// The points of resident base set `key`.
fn resident<'b>(bases: &'b BaseSets, key: &BasesKey) -> GpuResult<&'b CudaSlice<u64>> {
    bases
        .get(key)
        .map(|r| &r.points)
        .ok_or_else(|| GpuError::Internal("resident bases vanished".into()))
}

/// The aux parts of the witness's MSMs.
pub(super) struct WitnessSums {
    pub l: G1Projective,
    pub a: G1Projective,
    pub b: G1Projective,
    pub b2: Option<G2Projective>,
}
