//! Density filtering on the device: the values of the variables a density marks, compacted in
//! order (kernels/witness/density.cuh), so that the A and B MSMs read a witness uploaded once.

use cudarc::driver::{CudaSlice, CudaView, PushKernelArg};

use super::device::Device;
use crate::gpu::error::GpuResult;
use crate::gpu::host::FR_LIMBS;
use crate::gpu::launch;
use crate::groth16::cs::Density;

/// The little-endian 32-bit words of a density bitmap, as the kernels read it.
pub(crate) fn density_words(d: &Density) -> Vec<u32> {
    let mut out = Vec::with_capacity(d.len().div_ceil(32));
    for w in d.words() {
        out.push(*w as u32);
        out.push((*w >> 32) as u32);
    }
    out.truncate(d.len().div_ceil(32));
    out
}

impl Device {
    /// The `kept` values of `values` (n scalars as u64 limbs) whose bit is set in `words`, in
    /// order. `kept` must be the bitmap's popcount over the first n bits (the caller's
    /// `Density::count`); the launches check every length.
    pub(crate) fn filter(
        &self,
        values: &CudaView<'_, u64>,
        words: &CudaSlice<u32>,
        n: usize,
        kept: usize,
    ) -> GpuResult<CudaSlice<u64>> {
        let nw = n.div_ceil(32);
        let (nw32, n32) = (nw as u32, n as u32);
        // Written whole by `density_popc`, then scanned in place.
        let mut incl = self.alloc_scratch::<u32>(nw, "density counts")?;
        let l = launch::density_popc(nw, words.len(), incl.len());
        self.launch(&self.k.density_popc, l, |b| {
            b.arg(words).arg(&nw32).arg(&mut incl);
        })?;
        self.scan(&mut incl, nw)?;
        // Every one of the `kept` entries is written by exactly one thread of the gather: the
        // positions of the set bits are 0..kept in order.
        let mut out = self.alloc_scratch::<u64>(kept.max(1) * FR_LIMBS, "filtered scalars")?;
        let l = launch::density_gather(n, kept, out.len(), values.len(), words.len(), incl.len());
        self.launch(&self.k.density_gather, l, |b| {
            b.arg(&mut out).arg(values).arg(words).arg(&incl).arg(&n32);
        })?;
        Ok(out)
    }
}
