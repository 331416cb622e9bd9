//! Caller memory page-locked in place
//! ([`CudaBackend::register_host`](super::CudaBackend::register_host)). An upload whose source lies
//! inside such a range skips the staging copy: the device reads the caller's buffer directly (the
//! host copies into the pinned staging were most of a partition's host work: about 8.7 GiB at 2^26:
//! docs/bench-log/2026-12-02.md, "Call T4"). An upload holds the list's read lock until its DMA is
//! done, and unregistering takes the write lock, so no range is unlocked under a DMA that reads it.
//! Registering holds the write lock too (uploads wait meanwhile: 661 ms for 8 GiB on the H200
//! host), which keeps two overlapping registrations apart.

use std::sync::{Arc, RwLock, RwLockReadGuard};

use cudarc::driver::sys::{self, CU_MEMHOSTREGISTER_PORTABLE};
use cudarc::driver::CudaContext;

use super::device::drv;
use crate::gpu::error::{GpuError, GpuResult};

/// The page-locked ranges [start, end) of the process. Registration is the driver's, for every
/// context (portable), so one list serves every backend.
static REGISTERED: RwLock<Vec<(usize, usize)>> = RwLock::new(Vec::new());

/// The page size the ranges are rounded to. Where the host's pages are larger (64 KiB on some
/// aarch64 hosts) two registrations may share a page this list does not see; the driver then
/// refuses the second, an error, not a hazard.
const PAGE: usize = 4096;

/// The read lock of the registered ranges when all of `src` lies inside one of them: hold it
/// until every DMA from `src` is done (no range is unregistered meanwhile). `None`: `src` is
/// not registered (or spans two ranges), and is copied through the staging.
pub(crate) fn registered<T>(src: &[T]) -> Option<RwLockReadGuard<'static, Vec<(usize, usize)>>> {
    let lo = src.as_ptr() as usize;
    let hi = lo + std::mem::size_of_val(src);
    let r = REGISTERED.read().ok()?;
    r.iter().any(|&(a, b)| a <= lo && hi <= b).then_some(r)
}

/// A page-locked range of caller memory; dropping it unlocks the range. It does not borrow the
/// memory (the caller keeps using it, even mutably, while registered), so
/// [`CudaBackend::register_host`](super::CudaBackend::register_host) is `unsafe`: the memory
/// must stay allocated until this drops.
#[must_use = "the memory is unlocked when this is dropped"]
pub struct HostRegistration {
    base: usize,
    end: usize,
    /// Made current before unregistering (the thread that drops this may have none).
    ctx: Arc<CudaContext>,
}

impl std::fmt::Debug for HostRegistration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "HostRegistration({:#x}..{:#x})", self.base, self.end)
    }
}

impl HostRegistration {
    /// Bytes page-locked (whole pages around the registered slice).
    pub fn bytes(&self) -> usize {
        self.end - self.base
    }
}

impl Drop for HostRegistration {
    fn drop(&mut self) {
        // Held until the range is unlocked: an upload reading it holds the read lock.
        let mut r = match REGISTERED.write() {
            Ok(r) => r,
            Err(p) => p.into_inner(),
        };
        r.retain(|&range| range != (self.base, self.end));
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
/// [`CudaBackend::register_host`](super::CudaBackend::register_host), whose contract
/// applies.
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
        .write()
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

/// A key's queries page-locked in place (attached to the key, dropped before its points).
pub(crate) struct KeyPins(pub Vec<HostRegistration>);

/// The least bytes a query must hold to be page-locked for streaming: smaller ones may share
/// pages with other allocations, and their staged copies are short anyway.
pub(crate) const KEY_PIN_MIN: usize = 64 << 20;

/// Page-locks each of `queries` holding at least [`KEY_PIN_MIN`] bytes; a query the driver
/// refuses stays pageable (its uploads go through the staging), said once in the log.
pub(crate) fn pin_queries(
    ctx: &Arc<CudaContext>,
    queries: &[(&'static str, usize, usize)],
) -> KeyPins {
    let mut pins = Vec::new();
    for &(what, lo, bytes) in queries {
        if bytes < KEY_PIN_MIN {
            continue;
        }
        // SAFETY: the ranges are a live key's query vectors, which never grow and outlive the
        // registrations (held in the key's attachment, which drops before its points); they
        // are large enough to have pages of their own.
        match unsafe { register(ctx, lo, bytes) } {
            Ok(r) => pins.push(r),
            Err(e) => tracing::warn!(query = what, bytes, error = %e, "key query not page-locked"),
        }
    }
    KeyPins(pins)
}
