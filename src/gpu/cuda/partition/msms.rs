//! The MSMs of a partition over its resident bases: from device scalars, or on the CPU below
//! the GPU threshold. The witness's (L, A, B_G1, B_G2) need no H: they run while a, b, c
//! upload.

use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use cudarc::driver::{CudaSlice, CudaView};

use super::shape::{QueryBases, Shape};

use crate::cs::Density;
use crate::error::Result;
use crate::gpu::cuda::backend::CudaBackend;
use crate::gpu::cuda::calls::{no_fallback, CpuMsm};
use crate::gpu::cuda::device::DeviceGroup;
use crate::gpu::cuda::memory::{BaseSets, BasesKey};
use crate::gpu::error::{GpuError, GpuResult};
use crate::gpu::host::{self, G1, G2};
use crate::gpu::plan::{self, MsmShape, MIN_GPU_MSM};
use crate::prover::Witness;

impl CudaBackend {
    /// The MSM of the first `k` scalars of `scalars` over resident bases `key`.
    pub(super) fn device_msm<G: DeviceGroup>(
        &self,
        bases: &BaseSets,
        key: &BasesKey,
        scalars: &CudaView<'_, u64>,
        k: usize,
    ) -> GpuResult<G::Proj> {
        let points = &bases
            .get(key)
            .ok_or_else(|| GpuError::Internal("resident bases vanished".into()))?
            .points;
        // The window from k is the largest a count-chosen one can be.
        if k > MsmShape::max_points(plan::window_for(self.dev.msm_window, k, k)) {
            return Err(GpuError::BadLaunch {
                kernel: "msm",
                reason: format!("{k} points exceed one launch sequence"),
            });
        }
        let bases = points.slice(..k * G::AFFINE_LIMBS);
        // Cut as an MSM of host scalars would be (`gpu.msm_pieces`): each piece's scratch and
        // window are a share's, and the pieces share their buckets.
        let pieces = plan::msm_pieces(k, self.dev.msm_pieces, k);
        if pieces > 1 {
            return self
                .dev
                .msm_resident_pieces::<G>(&bases, scalars, k, pieces);
        }
        let (out, c) = self.dev.msm::<G>(&bases, scalars, k)?;
        Ok(host::combine_windows::<G>(&out, c))
    }

    /// Σ over the aux variables present in `density` with resident bases `key`: filtered on
    /// the device, or on the CPU below the GPU threshold.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn aux_msm<G: DeviceGroup>(
        &self,
        bases: &BaseSets,
        key: &BasesKey,
        density: &Density,
        filtered: Option<&CudaSlice<u64>>,
        host_points: &[G::Affine],
        host_aux: &[Scalar],
        cpu: CpuMsm<G>,
    ) -> Result<G::Proj> {
        let kept = density.count();
        if kept < MIN_GPU_MSM {
            return cpu(host_points, host_aux, Some(density));
        }
        let f = filtered.ok_or_else(|| GpuError::Internal("filtered scalars missing".into()))?;
        Ok(self
            .device_msm::<G>(bases, key, &f.slice(..), kept)
            .map_err(no_fallback)?)
    }

    /// The MSMs of the witness `aux` (on the device): L over all of it, A and B_G1 (and B_G2
    /// when `g2q` is there) over the variables their densities keep, filtered on the device
    /// (`words`: the A and B density bitmaps). `keys` are the partition's base sets in the
    /// order of `g1q` then `g2q` ([`super::shape::queries`]).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn witness_msms(
        &self,
        bases: &BaseSets,
        keys: &[BasesKey],
        sh: &Shape,
        w: &Witness,
        aux: &CudaSlice<u64>,
        words: &[Vec<u32>; 2],
        g1q: &[QueryBases<'_, G1Affine>; 4],
        g2q: Option<&QueryBases<'_, G2Affine>>,
    ) -> Result<WitnessSums> {
        let key = |i: usize| {
            keys.get(i)
                .ok_or_else(|| GpuError::Internal(format!("base set {i} missing")))
        };
        let filter = |d: &Density, w: &[u32]| -> Result<Option<CudaSlice<u64>>> {
            if d.count() < MIN_GPU_MSM {
                return Ok(None);
            }
            let words = self.dev.upload_small(w).map_err(no_fallback)?;
            let f = self.dev.filter(&aux.slice(..), &words, sh.m_aux, d.count());
            Ok(Some(f.map_err(no_fallback)?))
        };
        let l = if sh.m_aux < MIN_GPU_MSM {
            crate::msm::msm_g1(g1q[1].points, &w.aux, None)?
        } else {
            self.device_msm::<G1>(bases, key(1)?, &aux.slice(..), sh.m_aux)
                .map_err(no_fallback)?
        };
        let fa = filter(&w.a_aux_density, &words[0])?;
        let a = self.aux_msm::<G1>(
            bases,
            key(2)?,
            &w.a_aux_density,
            fa.as_ref(),
            g1q[2].points,
            &w.aux,
            crate::msm::msm_g1,
        )?;
        drop(fa);
        let fb = filter(&w.b_aux_density, &words[1])?;
        let b = self.aux_msm::<G1>(
            bases,
            key(3)?,
            &w.b_aux_density,
            fb.as_ref(),
            g1q[3].points,
            &w.aux,
            crate::msm::msm_g1,
        )?;
        let b2 = match g2q {
            Some(q) => Some(self.aux_msm::<G2>(
                bases,
                key(4)?,
                &w.b_aux_density,
                fb.as_ref(),
                q.points,
                &w.aux,
                crate::msm::msm_g2,
            )?),
            None => None,
        };
        Ok(WitnessSums { l, a, b, b2 })
    }
}

/// The aux parts of the witness's MSMs.
pub(super) struct WitnessSums {
    pub l: G1Projective,
    pub a: G1Projective,
    pub b: G1Projective,
    pub b2: Option<G2Projective>,
}
