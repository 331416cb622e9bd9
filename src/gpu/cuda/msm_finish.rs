//! The end of a device MSM (see `msm.rs`): the sum of the bases whose scalar is one, and the
//! windows' reduction Σ_d d·B_d level by level as [`crate::gpu::plan`] plans it.

use cudarc::driver::{CudaSlice, CudaView, PushKernelArg};

use super::device::{Device, DeviceGroup};
use crate::gpu::error::GpuResult;
use crate::gpu::launch;
use crate::gpu::plan::MsmShape;

impl Device {
    /// The sum of the bases whose scalar is one into the last point of `out` (after the
    /// `nwin` window sums).
    pub(super) fn msm_ones<G: DeviceGroup>(
        &self,
        bases: &CudaView<'_, u64>,
        scalars: &CudaView<'_, u64>,
        n: usize,
        sh: &MsmShape,
        out: &mut CudaSlice<u64>,
    ) -> GpuResult<()> {
        let gk = G::kernels(&self.k);
        let (n32, xl, nb1) = (n as u32, G::XYZZ_LIMBS, sh.nb1);
        // Written whole by msm_ones before ec_sum reads it.
        let mut partials = self.alloc_scratch::<u64>(nb1 as usize * xl, "MSM ones partials")?;
        let l = launch::msm_ones(
            n,
            sh,
            G::AFFINE_LIMBS,
            bases.len(),
            scalars.len(),
            partials.len(),
        );
        self.launch(&gk.ones, l, |b| {
            b.arg(bases).arg(scalars).arg(&n32).arg(&mut partials);
        })?;
        let mut tail = out.slice_mut(sh.nwin as usize * xl..);
        let l = launch::ec_sum(nb1 as usize, xl, partials.len(), tail.len());
        self.launch(&gk.sum, l, |b| {
            b.arg(&partials).arg(&nb1).arg(&mut tail);
        })
    }

    /// The window sums Σ_d d·B_d of `buckets` into the first `nwin` points of `out`, level by
    /// level as the reduction plan says.
    pub(super) fn reduce<G: DeviceGroup>(
        &self,
        sh: &MsmShape,
        buckets: &CudaSlice<u64>,
        out: &mut CudaSlice<u64>,
    ) -> GpuResult<()> {
        let gk = G::kernels(&self.k);
        let nwin = sh.nwin;
        let null = 0u64;
        let plan = sh.reduce_levels(self.sms);
        let last = plan.len() - 1;
        let mut level: Option<(CudaSlice<u64>, CudaSlice<u64>)> = None;
        for (k, lv) in plan.iter().enumerate() {
            let (m, lg) = (lv.m, lv.lg);
            let t_in = level.as_ref().map(|(t, _)| t.len());
            let r_in = level.as_ref().map_or(buckets.len(), |(_, r)| r.len());
            if k == last {
                let l = launch::msm_reduce_level(sh, m, lg, t_in, r_in, out.len(), None);
                return self.launch(&gk.reduce_level, l, |b| {
                    match &level {
                        None => b.arg(&null).arg(buckets),
                        Some((t, r)) => b.arg(t).arg(r),
                    };
                    b.arg(&nwin).arg(&m).arg(&lg).arg(&mut *out).arg(&null);
                });
            }
            // Both written whole by this level.
            let count = (nwin * lv.groups()) as usize * G::XYZZ_LIMBS;
            let mut to = self.alloc_scratch::<u64>(count, "MSM reduce level")?;
            let mut ro = self.alloc_scratch::<u64>(count, "MSM reduce level")?;
            let l = launch::msm_reduce_level(sh, m, lg, t_in, r_in, to.len(), Some(ro.len()));
            self.launch(&gk.reduce_level, l, |b| {
                match &level {
                    None => b.arg(&null).arg(buckets),
                    Some((t, r)) => b.arg(t).arg(r),
                };
                b.arg(&nwin).arg(&m).arg(&lg).arg(&mut to).arg(&mut ro);
            })?;
            level = Some((to, ro));
        }
        Ok(())
    }
}
