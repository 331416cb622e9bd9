//! The GPU tuning knobs of the `[gpu]` config section, as the CUDA backend takes them. Plain
//! data, no device: `config.rs` parses and validates them, `CudaBackend::with_options` reads
//! them at start (the kernels are compiled with the MSM knobs).

/// Register cap of `msm_accumulate` (blocks per multiprocessor) unless configured.
pub const DEFAULT_MSM_ACC_MINB: u32 = 4;
/// Largest register cap `gpu.msm_acc_minb` takes (8 blocks of 128 threads: 64 registers each).
pub const MAX_MSM_ACC_MINB: u32 = 8;

/// The CUDA backend's knobs. The defaults are the measured best (BENCHMARKS.md).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GpuOptions {
    /// Threads of a pool of each device's own for its host work (staging copies, density
    /// filtering on the host path); `None`: rayon's global pool (`gpu.host_threads = "auto"`).
    pub host_threads: Option<usize>,
    /// Blocks of `msm_accumulate` one multiprocessor must fit (a register cap), 1 to 8.
    pub msm_acc_minb: u32,
    /// Whether `msm_accumulate` loads the next base one addition ahead.
    pub msm_prefetch: bool,
    /// Whether a partition runs as one device call (`gpu.partition = "device"`: a, b, c and
    /// the witness uploaded once, densities applied and H kept on the device); `false`
    /// (`"calls"`): one backend call per H and per MSM, as before.
    pub device_partition: bool,
}

impl Default for GpuOptions {
    fn default() -> Self {
        GpuOptions {
            host_threads: None,
            msm_acc_minb: DEFAULT_MSM_ACC_MINB,
            msm_prefetch: false,
            device_partition: true,
        }
    }
}

impl GpuOptions {
    /// Why these knobs cannot be used, naming the key, if they cannot.
    pub fn problem(&self) -> Option<(&'static str, String)> {
        if self.host_threads == Some(0) {
            return Some(("gpu.host_threads", "must be \"auto\" or at least 1".into()));
        }
        if !(1..=MAX_MSM_ACC_MINB).contains(&self.msm_acc_minb) {
            return Some((
                "gpu.msm_acc_minb",
                format!(
                    "expected 1 to {MAX_MSM_ACC_MINB} blocks per multiprocessor, got {}",
                    self.msm_acc_minb
                ),
            ));
        }
        None
    }
}
