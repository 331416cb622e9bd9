//! The CUDA backend: opens a device ([`device`]), keeps twiddles and proving-key bases resident
//! under one memory policy ([`memory`]), and runs H ([`ntt`]) and the G1 and G2 MSMs ([`msm`])
//! there, copying through pinned staging ([`staging`]). [`backend`] holds the backend itself and
//! its `Backend` impl; [`calls`] the per-call H and MSM paths with their CPU fallback, and
//! [`streamed`] the MSM whose bases stream from the host when the device cannot hold them.

mod alloc;
mod backend;
mod calls;
mod clock;
mod device;
mod memory;
mod msm;
mod msm_finish;
mod ntt;
mod pairs;
mod partition;
mod pieces;
mod pinned;
mod pool;
mod sparse;
mod staging;
mod streamed;
mod witness;

pub use backend::CudaBackend;
pub use partition::DeviceAbc;
pub use pinned::HostRegistration;

/// GPUs the CUDA driver sees (0 without a driver or when it cannot count them).
pub fn visible_devices() -> usize {
    // SAFETY: only probes whether libcuda can be opened; nothing else touches the driver before
    // it (CudaContext panics without the library).
    if !unsafe { cudarc::driver::sys::is_culib_present() } {
        return 0;
    }
    cudarc::driver::CudaContext::device_count().map_or(0, |n| n.max(0) as usize)
}
