//! GPU backends. With the `cuda` feature, [`cuda_backend`] opens a device through cudarc;
//! without it, it says so and the engine falls back to the CPU.

use std::sync::Arc;

use crate::backend::Backend;
use crate::error::{Error, Result};

/// The CUDA backend on `device`, or why there is none.
pub fn cuda_backend(device: usize) -> Result<Arc<dyn Backend>> {
    let _ = device;
    Err(Error::Backend {
        backend: "cuda",
        reason: "this build has no `cuda` feature".into(),
    })
}
