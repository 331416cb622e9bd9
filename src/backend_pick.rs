//! Backend picking: the backend each GPU actor runs (`gpu.backend` and the device), and the real
//! pipeline stages built on them (B_G2 on the devices' backends with `bg2.device = "gpu"`).

use std::sync::Arc;

use crate::backend::{Backend, CpuBackend};
use crate::config::{BackendChoice, Config};
use crate::pipeline::{BackendBg2, RealSynthesis, Stages};
use crate::status::EngineError;

/// Picks the backend for `choice` (the CUDA one with the `[gpu]` knobs `opts`), saying which
/// and why.
pub fn pick_backend(
    choice: BackendChoice,
    device: usize,
    opts: &crate::gpu::GpuOptions,
) -> Result<Arc<dyn Backend>, EngineError> {
    match choice {
        BackendChoice::Cpu => Ok(Arc::new(CpuBackend)),
        BackendChoice::Cuda => {
            crate::gpu::cuda_backend(device, opts).map_err(|e| EngineError::Start(e.to_string()))
        }
        BackendChoice::Auto => match crate::gpu::cuda_backend(device, opts) {
            Ok(b) => Ok(b),
            Err(e) => {
                tracing::info!(reason = %e, "using the CPU backend");
                Ok(Arc::new(CpuBackend))
            }
        },
    }
}

/// The real stages for `cfg`: one backend per entry of `gpu.devices` (opened now), and the
/// backends' names joined by commas.
pub fn real_stages(cfg: &Config) -> Result<(Stages, String), EngineError> {
    let backends: Vec<Arc<dyn Backend>> = cfg
        .gpu_devices
        .iter()
        .map(|d| pick_backend(cfg.backend, *d, &cfg.gpu))
        .collect::<Result<_, _>>()?;
    let names: Vec<String> = backends.iter().map(|b| b.name()).collect();
    let backends = Arc::new(backends);
    let by_device = backends.clone();
    let mut stages = Stages::with_backend(Arc::new(move |device| {
        by_device
            .get(device)
            .cloned()
            .unwrap_or_else(|| Arc::new(CpuBackend) as Arc<dyn Backend>)
    }));
    if !cfg.compiled {
        stages.synthesis = Arc::new(|_| Box::new(RealSynthesis));
    }
    if cfg.bg2_on_gpu {
        stages.bg2 = Arc::new(move |worker| {
            let backend = backends
                .get(worker % backends.len().max(1))
                .cloned()
                .unwrap_or_else(|| Arc::new(CpuBackend) as Arc<dyn Backend>);
            Box::new(BackendBg2(backend))
        });
    }
    Ok((stages, names.join(",")))
}
