//! GPU backends. With the `cuda` feature, `cuda_backend` opens a device through cudarc;
//! without it, it says so and the engine falls back to the CPU.

use std::sync::Arc;

use crate::backend::Backend;
use crate::error::Result;

/// The CUDA backend (feature `cuda`).
#[cfg(feature = "cuda")]
pub mod cuda;
/// Host helpers of the CUDA backend: byte views, NTT plan, MSM windows, window combination.
pub mod host;
/// Kernel sources and their NVRTC compilation.
pub mod kernels;
/// Seeded sample inputs for GPU tests and benchmarks (feature `test-util`).
#[cfg(feature = "test-util")]
pub mod sample;

#[cfg(feature = "cuda")]
pub use cuda::CudaBackend;

/// The CUDA backend on `device`, as the concrete type (benchmarks and tests read its counters).
#[cfg(feature = "cuda")]
pub fn open_cuda(device: usize) -> Result<Arc<CudaBackend>> {
    CudaBackend::new(device).map(Arc::new)
}

/// The CUDA backend on `device`, or why there is none.
#[cfg(feature = "cuda")]
pub fn cuda_backend(device: usize) -> Result<Arc<dyn Backend>> {
    Ok(open_cuda(device)?)
}

/// The CUDA backend on `device`, or why there is none.
#[cfg(not(feature = "cuda"))]
pub fn cuda_backend(device: usize) -> Result<Arc<dyn Backend>> {
    let _ = device;
    Err(crate::error::Error::Backend {
        backend: "cuda",
        reason: "this build has no `cuda` feature".into(),
    })
}
