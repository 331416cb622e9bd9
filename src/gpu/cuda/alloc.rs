//! Device memory: what is free (the driver's and the memory pool's idle bytes), what is in use,
//! and every allocation of the backend, from the device's stream-ordered pool, with an
//! out-of-memory error that names what asked and a second try after the pool hands its idle
//! blocks back.

use cudarc::driver::sys::CUresult;
use cudarc::driver::{CudaSlice, DeviceRepr, DriverError, ValidAsZeroBits};

use super::device::{drv, Device, Lane};
use crate::gpu::error::{GpuError, GpuResult};

impl Device {
    /// Free device bytes: the driver's, and what the memory pool keeps idle; with the total.
    pub(crate) fn memory(&self) -> GpuResult<(u64, u64)> {
        let (free, total) = self.ctx.mem_get_info().map_err(drv("cuMemGetInfo"))?;
        Ok((free as u64 + self.pool.idle_bytes(), total as u64))
    }

    /// Free device bytes ([`Device::memory`]; 0 if the driver does not say).
    pub(crate) fn free_bytes(&self) -> u64 {
        self.memory().map_or(0, |(free, _)| free)
    }

    /// Waits until each of the device's streams has done its work (its frees too).
    pub(crate) fn synchronize(&self) -> GpuResult<()> {
        for s in [&self.copy, &self.h, &self.stream] {
            s.synchronize().map_err(drv("synchronize"))?;
        }
        Ok(())
    }

    /// Notes the device bytes in use now in [`Device::peak_used`] and returns them.
    /// Bytes the memory pool keeps idle are not in use.
    pub(crate) fn note_usage(&self) -> u64 {
        let used = self
            .memory()
            .map_or(0, |(free, total)| total.saturating_sub(free));
        self.peak_used
            .fetch_max(used, std::sync::atomic::Ordering::Relaxed);
        used
    }

    /// `len` zeroed elements on the compute stream.
    pub(crate) fn alloc_zeros<T: DeviceRepr + ValidAsZeroBits>(
        &self,
        len: usize,
        what: &'static str,
    ) -> GpuResult<CudaSlice<T>> {
        self.alloc_zeros_on(Lane::Compute, len, what)
    }

    /// `len` zeroed elements on the stream of `lane` (zeroed in that stream's order).
    pub(crate) fn alloc_zeros_on<T: DeviceRepr + ValidAsZeroBits>(
        &self,
        lane: Lane,
        len: usize,
        what: &'static str,
    ) -> GpuResult<CudaSlice<T>> {
        let bytes = len * std::mem::size_of::<T>();
        self.allocate(what, bytes, || self.lane(lane).alloc_zeros::<T>(len))
    }

    /// `alloc()` of `bytes` for `what`, and once more after the memory pool handed its idle
    /// blocks back to the driver when the first try ran out of memory: the memory policy
    /// counts the pool's idle bytes as free without handing them back
    /// ([`super::memory::State::fits`]), and blocks of another size than the one asked for
    /// serve only once the driver maps them anew. Out of memory still is
    /// [`GpuError::OutOfMemory`] naming `what`.
    fn allocate<R>(
        &self,
        what: &'static str,
        bytes: usize,
        alloc: impl Fn() -> Result<R, DriverError>,
    ) -> GpuResult<R> {
        let short = |e: &DriverError| e.0 == CUresult::CUDA_ERROR_OUT_OF_MEMORY;
        let result = match alloc() {
            Err(e) if short(&e) && self.pool.idle_bytes() > 0 => {
                // Every stream past its frees first, so that their blocks are idle too.
                self.synchronize()?;
                tracing::debug!(
                    device = self.ordinal,
                    what,
                    idle_bytes = self.pool.idle_bytes(),
                    "allocation short of memory: the pool's idle blocks go back to the driver"
                );
                self.pool.release().map_err(drv("cuMemPoolTrimTo"))?;
                alloc()
            }
            other => other,
        };
        result.map_err(|e| match short(&e) {
            true => GpuError::OutOfMemory {
                what,
                need_bytes: bytes as u64,
                free_bytes: self.free_bytes(),
            },
            false => drv(what)(e),
        })
    }

    /// `len` elements on the compute stream whose contents are undefined until a copy or a
    /// kernel writes them; every caller writes each element it later reads (the call sites say
    /// how).
    pub(crate) fn alloc_scratch<T: DeviceRepr>(
        &self,
        len: usize,
        what: &'static str,
    ) -> GpuResult<CudaSlice<T>> {
        self.alloc_scratch_on(Lane::Compute, len, what)
    }

    /// As [`Device::alloc_scratch`], allocated in the order of `lane`'s stream.
    pub(crate) fn alloc_scratch_on<T: DeviceRepr>(
        &self,
        lane: Lane,
        len: usize,
        what: &'static str,
    ) -> GpuResult<CudaSlice<T>> {
        let bytes = len * std::mem::size_of::<T>();
        // SAFETY: device memory of plain integers; reading it before a write gives arbitrary
        // values, never host undefined behaviour, and every caller writes before reading.
        self.allocate(what, bytes, || unsafe { self.lane(lane).alloc::<T>(len) })
    }

    /// A new device buffer holding `src` (synchronous copy from pageable memory; small data).
    pub(crate) fn upload_small<T: DeviceRepr>(&self, src: &[T]) -> GpuResult<CudaSlice<T>> {
        let bytes = std::mem::size_of_val(src);
        self.allocate("small upload", bytes, || self.stream.clone_htod(src))
    }
}
