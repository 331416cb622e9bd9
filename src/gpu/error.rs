//! The GPU layer's error type: what went wrong on a device, typed, so that callers can tell a
//! passing condition (out of memory, a driver error) from a bug or a missing device.

/// Why a GPU call failed.
#[derive(Debug, thiserror::Error)]
pub enum GpuError {
    /// No usable device: no driver library, no device, a bad ordinal, or a build without the
    /// `cuda` feature.
    #[error("no CUDA device: {reason}")]
    NoDevice {
        /// What was missing.
        reason: String,
    },
    /// A driver call failed.
    #[error("CUDA driver call `{call}` failed: {detail}")]
    Driver {
        /// The call (or the step that made it).
        call: &'static str,
        /// The driver's error code and text.
        detail: String,
    },
    /// The device memory does not hold what a call needs.
    #[error("out of device memory: {what} needs {need_bytes} bytes, {free_bytes} free")]
    OutOfMemory {
        /// What was being allocated.
        what: &'static str,
        /// Bytes it needs.
        need_bytes: u64,
        /// Bytes free for it (device free memory, or what the memory cap leaves).
        free_bytes: u64,
    },
    /// NVRTC did not compile the kernels (or is not installed).
    #[error("kernel compilation failed: {log}")]
    Compile {
        /// The compiler's log, or why there is no compiler.
        log: String,
    },
    /// A launch was refused before it reached the device: a buffer shorter than the launch
    /// reads or writes (a bug in the caller; nothing was launched).
    #[error("kernel `{kernel}`: argument `{arg}` holds {have} elements, the launch needs {need}")]
    BufferTooShort {
        /// The kernel.
        kernel: &'static str,
        /// The argument.
        arg: &'static str,
        /// Elements the buffer holds.
        have: usize,
        /// Elements the launch touches.
        need: usize,
    },
    /// A launch shape or parameter the kernel does not take (a bug; nothing was launched).
    #[error("kernel `{kernel}`: {reason}")]
    BadLaunch {
        /// The kernel.
        kernel: &'static str,
        /// What is wrong with the launch.
        reason: String,
    },
    /// `gpu.memory_limit` is below the least a partition needs on the device (H in two
    /// buffers with its twiddles, the smallest streamed pieces of its largest MSM).
    #[error(
        "gpu.memory_limit of {limit_bytes} bytes on device {device} is below the {minimum_bytes} \
         bytes a partition of 2^{log_n} constraints needs at least there ({why}); raise the \
         limit or prove it on a larger device"
    )]
    BelowMinimum {
        /// The device's ordinal.
        device: usize,
        /// The configured limit.
        limit_bytes: u64,
        /// The partition's minimum.
        minimum_bytes: u64,
        /// log2 of the partition's domain.
        log_n: u32,
        /// What the minimum is made of.
        why: &'static str,
    },
    /// The backend's own state is inconsistent (a bug).
    #[error("CUDA backend: {0}")]
    Internal(String),
}

impl GpuError {
    /// Whether another attempt may pass: out of memory (the device may have room later) and
    /// driver errors; not a missing device, a compile error or a refused launch (bugs repeat).
    pub fn retryable(&self) -> bool {
        matches!(self, GpuError::OutOfMemory { .. } | GpuError::Driver { .. })
    }

    /// Whether the call may run on the CPU instead (the device lacked memory for it).
    pub fn is_out_of_memory(&self) -> bool {
        matches!(self, GpuError::OutOfMemory { .. })
    }
}

impl From<GpuError> for crate::Error {
    fn from(e: GpuError) -> Self {
        let (retryable, out_of_memory) = (e.retryable(), e.is_out_of_memory());
        crate::Error::Device(crate::groth16::error::DeviceError::new(
            e,
            retryable,
            out_of_memory,
        ))
    }
}

/// Result with [`GpuError`].
pub type GpuResult<T> = std::result::Result<T, GpuError>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_the_numbers_and_retry_rule_splits_bugs_from_conditions() {
        let oom = GpuError::OutOfMemory {
            what: "MSM scratch",
            need_bytes: 1 << 30,
            free_bytes: 1 << 20,
        };
        let text = oom.to_string();
        assert!(
            text.contains("1073741824") && text.contains("1048576"),
            "{text}"
        );
        assert!(oom.retryable() && oom.is_out_of_memory());
        let drv = GpuError::Driver {
            call: "memcpy",
            detail: "CUDA_ERROR_LAUNCH_FAILED".into(),
        };
        assert!(drv.retryable() && !drv.is_out_of_memory());
        let short = GpuError::BufferTooShort {
            kernel: "ntt_pass",
            arg: "data",
            have: 3,
            need: 4,
        };
        assert!(!short.retryable());
        assert!(short.to_string().contains("ntt_pass") && short.to_string().contains("data"));
        assert!(!GpuError::Compile { log: "x".into() }.retryable());
        assert!(!GpuError::NoDevice {
            reason: "none".into()
        }
        .retryable());
    }
}
