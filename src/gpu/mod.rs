//! GPU backends. With the `cuda` feature, `cuda_backend` opens a device through cudarc;
//! without it, it says so and the engine falls back to the CPU.

use std::sync::Arc;

use crate::groth16::backend::Backend;
use crate::stages::partition::PartitionProver;

/// The CUDA backend (feature `cuda`).
#[cfg(feature = "cuda")]
pub mod cuda;
/// The GPU layer's error type.
pub mod error;
/// Host helpers of the CUDA backend: byte views, groups, root tables, window combination.
pub mod host;
/// Kernel sources and their NVRTC compilation.
pub mod kernels;
/// Launch checks: grids and buffer lengths of every kernel, before anything is launched.
pub mod launch;
/// The `[gpu]` tuning knobs.
pub mod options;
/// Launch plans: NTT passes, MSM windows, shapes and reduction levels.
pub mod plan;
/// Seeded sample inputs for GPU tests and benchmarks (feature `test-util`).
#[cfg(feature = "test-util")]
pub mod sample;

#[cfg(feature = "cuda")]
pub use cuda::CudaBackend;
pub use error::{GpuError, GpuResult};
pub use options::GpuOptions;

/// The CUDA backend on `device` with default knobs, as the concrete type (benchmarks and tests
/// read its counters).
#[cfg(feature = "cuda")]
pub fn open_cuda(device: usize) -> GpuResult<Arc<CudaBackend>> {
    CudaBackend::with_options(device, &GpuOptions::default()).map(Arc::new)
}

/// One device's backend: its primitives and its whole-partition path (the same object).
#[derive(Clone)]
pub struct DeviceBackend {
    /// The per-call primitives.
    pub backend: Arc<dyn Backend>,
    /// The device-resident partition.
    pub partition: Arc<dyn PartitionProver>,
}

/// The CUDA backend on `device` with the knobs of `opts`, or why there is none.
#[cfg(feature = "cuda")]
pub fn cuda_backend(device: usize, opts: &GpuOptions) -> GpuResult<DeviceBackend> {
    let b = Arc::new(CudaBackend::with_options(device, opts)?);
    Ok(DeviceBackend {
        backend: b.clone(),
        partition: b,
    })
}

/// The CUDA backend on `device`, or why there is none.
#[cfg(not(feature = "cuda"))]
pub fn cuda_backend(device: usize, opts: &GpuOptions) -> GpuResult<DeviceBackend> {
    let _ = (device, opts);
    Err(GpuError::NoDevice {
        reason: "this build has no `cuda` feature".into(),
    })
}

/// GPUs the CUDA driver sees: what an empty `gpu.devices` (the default) resolves to.
#[cfg(feature = "cuda")]
pub fn visible_devices() -> usize {
    cuda::visible_devices()
}

/// GPUs the CUDA driver sees: none without the `cuda` feature.
#[cfg(not(feature = "cuda"))]
pub fn visible_devices() -> usize {
    0
}
