//! The CUDA backend: opens a device ([`device`]), keeps twiddles and proving-key bases resident
//! under one memory policy ([`memory`]), and runs H ([`ntt`]) and the G1 and G2 MSMs ([`msm`])
//! there, copying through pinned staging ([`staging`]). [`backend`] holds the backend itself and
//! its `Backend` impl; [`calls`] the per-call H and MSM paths with their CPU fallback.

mod backend;
mod calls;
mod clock;
mod device;
mod memory;
mod msm;
mod ntt;
mod partition;
mod pieces;
mod pinned;
mod pool;
mod sparse;
mod staging;
mod witness;

pub use backend::CudaBackend;
pub use partition::DeviceAbc;
pub use pinned::HostRegistration;
