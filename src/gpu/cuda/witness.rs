//! Density filtering on the device: the values of the variables a density marks, compacted in
//! order (kernels/witness/density.cuh), so that the A and B MSMs read a witness uploaded once;
//! and its inverse, a witness packed as bits expanded to plain scalars on the device, so that
//! only its bits and its few dense values cross the bus.

use std::time::Duration;

use cudarc::driver::{CudaSlice, CudaView, PushKernelArg};

use super::device::{Device, Lane};
use super::staging::Staging;
use crate::gpu::error::GpuResult;
use crate::gpu::host::{self, FR_LIMBS};
use crate::gpu::launch;
use crate::groth16::cs::Density;
use crate::groth16::packed::PackedScalars;

// The kernels read the host's 64-bit bitmap words as pairs of 32-bit words, low half first.
const _: () = assert!(cfg!(target_endian = "little"));

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

/// Device bytes [`Device::expand_packed`] takes for `p` beside the plain values it writes: the
/// two bitmaps, the dense values and the dense bitmap's counts, freed once it is expanded.
pub(crate) fn expand_room(p: &PackedScalars) -> u64 {
    p.bytes() + p.len().div_ceil(32) as u64 * 4
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

    /// The plain scalars (u64 limbs) of the witness `p` packed as bits, on the compute lane:
    /// its two bitmaps and its dense values go up (through `staging` when there is one; for a
    /// PoRep witness a 24th to a 48th of its plain bytes), `packed_expand` writes every value.
    /// An empty witness gives one zero scalar (a device buffer cannot be empty). Returns the
    /// buffer and the host time spent copying into pinned memory.
    pub(crate) fn expand_packed(
        &self,
        mut staging: Option<&mut Staging>,
        p: &PackedScalars,
    ) -> GpuResult<(CudaSlice<u64>, Duration)> {
        let n = p.len();
        if n == 0 {
            let zero = self.alloc_zeros::<u64>(FR_LIMBS, "witness for a/b/c")?;
            return Ok((zero, Duration::ZERO));
        }
        let (ones, dense_bits, dense) = p.parts();
        let lane = Lane::Compute;
        let mut host_time = Duration::ZERO;
        let mut up = |src: &[u64], what| -> GpuResult<CudaSlice<u64>> {
            let (d, t) = self.upload_new(lane, staging.as_deref_mut(), src, what)?;
            host_time += t;
            Ok(d)
        };
        let d_ones = up(ones, "witness bits (ones)")?;
        let d_words = up(dense_bits, "witness bits (dense)")?;
        // One zero limb set stands in for no dense values (never read then).
        let limbs = host::scalars_as_u64(dense);
        let d_dense = match limbs.is_empty() {
            true => self.alloc_zeros::<u64>(FR_LIMBS, "witness dense values")?,
            false => up(limbs, "witness dense values")?,
        };
        let nw = n.div_ceil(32);
        let (nw32, n32) = (nw as u32, n as u32);
        // Written whole by `density_popc`, then scanned in place.
        let mut incl = self.alloc_scratch::<u32>(nw, "witness dense counts")?;
        let l = launch::density_popc(nw, 2 * d_words.len(), incl.len());
        self.launch(&self.k.density_popc, l, |b| {
            b.arg(&d_words).arg(&nw32).arg(&mut incl);
        })?;
        self.scan(&mut incl, nw)?;
        // Written whole by `packed_expand` (every i < n).
        let mut out = self.alloc_scratch_on::<u64>(lane, n * FR_LIMBS, "witness for a/b/c")?;
        let l = launch::packed_expand(
            n,
            dense.len(),
            out.len(),
            d_dense.len(),
            2 * d_ones.len(),
            2 * d_words.len(),
            incl.len(),
        );
        self.launch(&self.k.packed_expand, l, |b| {
            b.arg(&mut out)
                .arg(&d_dense)
                .arg(&d_ones)
                .arg(&d_words)
                .arg(&incl)
                .arg(&n32);
        })?;
        Ok((out, host_time))
    }
}
