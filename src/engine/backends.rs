//! Backend picking: the backend each GPU actor runs (`gpu.backend` and the device), and the real
//! pipeline stages built on them: a whole partition per device call where the backend has one
//! (`gpu.partition = "device"`), B_G2 inside that call or on the devices' backends when
//! `bg2.device` resolves to the GPU.

use std::sync::Arc;

use super::status::{EngineError, StartError};
use crate::config::{BackendChoice, Config};
use crate::groth16::backend::{Backend, CpuBackend};
use crate::stages::partition::PartitionProver;
use crate::stages::pipeline::{
    BackendBg2, BackendStage, CompiledSynthesis, DeviceStage, GpuStage, RealSynthesis, Stages,
};

/// One device's backend for the engine, and its whole-partition path when it has one.
pub type PickedBackend = (Arc<dyn Backend>, Option<Arc<dyn PartitionProver>>);

/// Picks the backend for `choice` (the CUDA one with the `[gpu]` knobs `opts`), saying which
/// and why.
pub fn pick_backend(
    choice: BackendChoice,
    device: usize,
    opts: &crate::gpu::GpuOptions,
) -> Result<PickedBackend, EngineError> {
    let cpu = || -> PickedBackend { (Arc::new(CpuBackend), None) };
    match choice {
        BackendChoice::Cpu => Ok(cpu()),
        BackendChoice::Cuda => crate::gpu::cuda_backend(device, opts)
            .map(|d| (d.backend, Some(d.partition)))
            .map_err(|source| StartError::Device { device, source }.into()),
        BackendChoice::Auto => match crate::gpu::cuda_backend(device, opts) {
            Ok(d) => Ok((d.backend, Some(d.partition))),
            Err(e) => {
                tracing::info!(reason = %e, "using the CPU backend");
                Ok(cpu())
            }
        },
    }
}

/// The real stages, the backends' names joined by commas, and the backends themselves.
pub type RealStages = (Stages, String, Vec<Arc<dyn Backend>>);

/// The real stages for `cfg`: one backend per entry of `gpu.devices` (opened now), the
/// backends' names joined by commas, and the backends (the engine evicts keys through them).
pub fn real_stages(cfg: &Config) -> Result<RealStages, EngineError> {
    let picked: Vec<PickedBackend> = cfg
        .gpu_devices
        .iter()
        .map(|d| pick_backend(cfg.backend, *d, &cfg.gpu))
        .collect::<Result<_, _>>()?;
    let names: Vec<String> = picked.iter().map(|b| b.0.name()).collect();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let bg2_on_gpu = cfg.bg2_on_gpu(threads);
    let device_partition = cfg.gpu.device_partition;
    tracing::info!(bg2_on_gpu, threads, device_partition, "B_G2 placement");
    let list: Vec<Arc<dyn Backend>> = picked.iter().map(|b| b.0.clone()).collect();
    let backends = Arc::new(list.clone());
    let picked = Arc::new(picked);
    let mut stages = Stages::with_backend(Arc::new(|_| Arc::new(CpuBackend)));
    // Compiled partitions leave synthesis as a witness alone only when every device evaluates
    // a/b/c itself (a per-call stage needs them from the host).
    let abc_on_device = cfg.compiled && device_partition && picked.iter().all(|b| b.1.is_some());
    let recordings = abc_on_device.then(|| stages.recordings.clone());
    stages.gpu = Arc::new(move |device| -> Box<dyn GpuStage> {
        match picked.get(device) {
            Some((backend, Some(partition))) if device_partition => Box::new(DeviceStage {
                backend: backend.clone(),
                partition: partition.clone(),
                with_b_g2: bg2_on_gpu,
                recordings: recordings.clone(),
            }),
            Some((backend, _)) => Box::new(BackendStage(backend.clone())),
            None => Box::new(BackendStage(Arc::new(CpuBackend))),
        }
    });
    if !cfg.compiled {
        stages.synthesis = Arc::new(|_| Box::new(RealSynthesis));
    } else if abc_on_device {
        let pack_witness = cfg.pack_witness;
        let shared = stages.recordings.clone();
        stages.synthesis = Arc::new(move |_| {
            Box::new(CompiledSynthesis {
                recordings: shared.clone(),
                abc_on_device: true,
                pack_witness,
            })
        });
        stages.abc_on_device = true;
        stages.pack_witness = pack_witness;
    }
    tracing::info!(compiled = cfg.compiled, abc_on_device, "synthesis");
    if bg2_on_gpu {
        // The B_G2 workers' own G2 MSM, for partitions that took the per-call path.
        stages.bg2 = Arc::new(move |worker| {
            let backend = backends
                .get(worker % backends.len().max(1))
                .cloned()
                .unwrap_or_else(|| Arc::new(CpuBackend) as Arc<dyn Backend>);
            Box::new(BackendBg2(backend))
        });
    }
    Ok((stages, names.join(","), list))
}
