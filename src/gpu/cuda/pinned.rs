//! Caller memory page-locked in place ([`CudaBackend::register_host`](super::CudaBackend::register_host)). An upload whose source
//! lies inside such a range skips the staging copy: the device reads the caller's buffer
//! directly (the host copies into the pinned staging were most of a partition's host work:
//! about 8.7 GiB at 2^26, BENCHMARKS.md tenth session).

use std::sync::{Arc, Mutex};

use cudarc::driver::sys::{self, CU_MEMHOSTREGISTER_PORTABLE};
use cudarc::driver::CudaContext;

use super::device::drv;
use crate::gpu::error::{GpuError, GpuResult};

/// The page-locked ranges [start, end) of the process. Registration is the driver's, for every
/// context (portable), so one list serves every backend.
static REGISTERED: Mutex<Vec<(usize, usize)>> = Mutex::new(Vec::new());

const PAGE: usize = 4096;

/// Whether all of `src` lies inside one registered range.
pub(crate) fn is_registered<T>(src: &[T]) -> bool {
    let lo = src.as_ptr() as usize;
    let hi = lo + std::mem::size_of_val(src);
    REGISTERED
        .lock()
        .map(|r| r.iter().any(|&(a, b)| a <= lo && hi <= b))
        .unwrap_or(false)
}

/// A page-locked range of caller memory; dropping it unlocks the range. It does not borrow the
/// memory (the caller keeps using it, even mutably, while registered), so
/// [`CudaBackend::register_host`](super::CudaBackend::register_host) is `unsafe`: the memory must stay allocated until this drops.
#[must_use = "the memory is unlocked when this is dropped"]
pub struct HostRegistration {
    base: usize,
    end: usize,
    /// Made current before unregistering (the thread that drops this may have none).
    ctx: Arc<CudaContext>,
}

impl HostRegistration {
    /// Bytes page-locked (whole pages around the registered slice).
    pub fn bytes(&self) -> usize {
        self.end - self.base
    }
}

impl Drop for HostRegistration {
    fn drop(&mut self) {
        if let Ok(mut r) = REGISTERED.lock() {
            r.retain(|&range| range != (self.base, self.end));
        }
        if let Err(e) = self.ctx.bind_to_thread() {
            tracing::warn!(error = ?e, "no context to unregister host memory in");
        }
        // SAFETY: `base` is the address this registration passed to cuMemHostRegister.
        let r = unsafe { sys::cuMemHostUnregister(self.base as *mut std::ffi::c_void) }.result();
        if let Err(e) = r {
            tracing::warn!(error = ?e, "cuMemHostUnregister failed");
        }
    }
}

/// Page-locks [lo, lo + bytes) in `ctx` (the whole pages around it): the body of
/// [`CudaBackend::register_host`](super::CudaBackend::register_host)(super::CudaBackend::register_host), whose contract applies.
///
/// # Safety
/// As `register_host`'s.
pub(crate) unsafe fn register(
    ctx: &Arc<CudaContext>,
    lo: usize,
    bytes: usize,
) -> GpuResult<HostRegistration> {
    let hi = lo + bytes;
    if bytes == 0 {
        return Err(GpuError::Internal("registering an empty slice".into()));
    }
    let (base, end) = (lo & !(PAGE - 1), hi.next_multiple_of(PAGE));
    let mut reg = REGISTERED
        .lock()
        .map_err(|_| GpuError::Internal("host registration list poisoned".into()))?;
    if reg.iter().any(|&(a, b)| a < end && base < b) {
        return Err(GpuError::Internal(format!(
            "host range {base:#x}..{end:#x} overlaps a registered one"
        )));
    }
    ctx.bind_to_thread().map_err(drv("bind"))?;
    // SAFETY: [base, end) is mapped memory of the caller's (the contract), whole pages; the
    // driver locks it until cuMemHostUnregister.
    unsafe {
        sys::cuMemHostRegister_v2(
            base as *mut std::ffi::c_void,
            end - base,
            CU_MEMHOSTREGISTER_PORTABLE,
        )
    }
    .result()
    .map_err(drv("cuMemHostRegister"))?;
    reg.push((base, end));
    Ok(HostRegistration {
        base,
        end,
        ctx: ctx.clone(),
    })
}
