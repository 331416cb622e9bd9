//! The MSMs of a partition over its resident bases: from device scalars, or on the CPU below
//! the GPU threshold.

use blstrs::Scalar;
use cudarc::driver::{CudaSlice, CudaView};

use crate::cs::Density;
use crate::error::Result;
use crate::gpu::cuda::backend::CudaBackend;
use crate::gpu::cuda::calls::CpuMsm;
use crate::gpu::cuda::device::DeviceGroup;
use crate::gpu::cuda::memory::{BasesKey, State};
use crate::gpu::error::{GpuError, GpuResult};
use crate::gpu::host;
use crate::gpu::plan::{self, MsmShape, MIN_GPU_MSM};

impl CudaBackend {
    /// The MSM of the first `k` scalars of `scalars` over resident bases `key`.
    pub(super) fn device_msm<G: DeviceGroup>(
        &self,
        st: &State,
        key: &BasesKey,
        scalars: &CudaView<'_, u64>,
        k: usize,
    ) -> GpuResult<G::Proj> {
        let points = &st
            .bases
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
        let (out, c) = self.dev.msm::<G>(&bases, scalars, k)?;
        Ok(host::combine_windows::<G>(&out, c))
    }

    /// Σ over the aux variables present in `density` with resident bases `key`: filtered on
    /// the device, or on the CPU below the GPU threshold.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn aux_msm<G: DeviceGroup>(
        &self,
        st: &State,
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
        Ok(self.device_msm::<G>(st, key, &f.slice(..), kept)?)
    }
}
