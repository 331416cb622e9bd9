//! The device's stream-ordered memory pool. Every device buffer comes from it (cudarc allocates
//! with `cuMemAllocAsync`). Left alone, the pool hands freed memory back to the driver at every
//! synchronize, and the next call's first kernels wait while it grows again: 5-7 ms of a 2^24 MSM's
//! count step, 20 ms of a whole 2^26 one (H200; BENCHMARKS.md, "H200 — GPU knob defaults"). Under
//! `gpu.memory_pool = "keep"` it holds what it has; the memory policy counts those idle bytes as
//! free ([`Pool::idle_bytes`]) and hands them back ([`Pool::release`]) only when a call needs more
//! than the driver has.

use cudarc::driver::sys::{self, CUmemPool_attribute, CUmemoryPool};
use cudarc::driver::{CudaContext, DriverError};

use crate::gpu::options::MemoryPool;

/// The pool the device's allocations come from (none without stream-ordered allocation), and
/// what this backend asks of it. Backends of one device in one process share its pool, so
/// each sets the pool's rule again at the start of every call ([`Pool::apply`]).
#[derive(Clone)]
pub(crate) struct Pool {
    raw: Option<CUmemoryPool>,
    rule: MemoryPool,
}

// SAFETY: a pool handle belongs to the device, not to a thread; the driver calls on it are
// thread-safe.
unsafe impl Send for Pool {}
unsafe impl Sync for Pool {}

impl Pool {
    /// The device's current pool, under `rule`.
    pub fn open(ctx: &CudaContext, rule: MemoryPool) -> Result<Self, DriverError> {
        if !ctx.has_async_alloc() {
            return Ok(Pool { raw: None, rule });
        }
        ctx.bind_to_thread()?;
        let mut pool: CUmemoryPool = std::ptr::null_mut();
        // SAFETY: `pool` is a valid out pointer; the device ordinal comes from the context.
        unsafe { sys::cuDeviceGetMemPool(&mut pool, ctx.cu_device()) }.result()?;
        let p = Pool {
            raw: Some(pool),
            rule,
        };
        p.apply()?;
        Ok(p)
    }

    /// Sets the pool's release threshold to this backend's rule: all of it kept, or none.
    pub fn apply(&self) -> Result<(), DriverError> {
        let Some(pool) = self.raw else { return Ok(()) };
        let mut threshold = match self.rule {
            MemoryPool::Keep => u64::MAX,
            MemoryPool::Release => 0,
        };
        // SAFETY: the release threshold is a u64 attribute; `threshold` outlives the call.
        unsafe {
            sys::cuMemPoolSetAttribute(
                pool,
                CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
                (&mut threshold as *mut u64).cast(),
            )
        }
        .result()
    }

    fn attribute(pool: CUmemoryPool, attr: CUmemPool_attribute) -> u64 {
        let mut v = 0u64;
        // SAFETY: the memory attributes read here are u64; `v` outlives the call.
        match unsafe { sys::cuMemPoolGetAttribute(pool, attr, (&mut v as *mut u64).cast()) }
            .result()
        {
            Ok(()) => v,
            Err(_) => 0,
        }
    }

    /// Attribute `attr` of the pool (`None` without a pool).
    fn read(&self, attr: CUmemPool_attribute) -> Option<u64> {
        self.raw.map(|pool| Self::attribute(pool, attr))
    }

    /// Bytes the pool holds that no buffer uses.
    pub fn idle_bytes(&self) -> u64 {
        let reserved = self.read(CUmemPool_attribute::CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT);
        reserved.map_or(0, |r| r.saturating_sub(self.used_bytes().unwrap_or(0)))
    }

    /// Bytes of the pool's buffers in use now (`None` without a pool).
    pub fn used_bytes(&self) -> Option<u64> {
        self.read(CUmemPool_attribute::CU_MEMPOOL_ATTR_USED_MEM_CURRENT)
    }

    /// The most bytes of the pool's buffers in use at once since [`Pool::reset_peak`] (or
    /// since the pool was made); `None` without a pool.
    pub fn peak_used_bytes(&self) -> Option<u64> {
        self.read(CUmemPool_attribute::CU_MEMPOOL_ATTR_USED_MEM_HIGH)
    }

    /// Starts [`Pool::peak_used_bytes`] again from the bytes in use now.
    pub fn reset_peak(&self) -> Result<(), DriverError> {
        let Some(pool) = self.raw else { return Ok(()) };
        let mut zero = 0u64;
        // SAFETY: the high-water attribute is a u64 that may only be set to 0; `zero`
        // outlives the call.
        unsafe {
            sys::cuMemPoolSetAttribute(
                pool,
                CUmemPool_attribute::CU_MEMPOOL_ATTR_USED_MEM_HIGH,
                (&mut zero as *mut u64).cast(),
            )
        }
        .result()
    }

    /// Hands every idle byte back to the driver (after the streams have passed their frees:
    /// the caller synchronizes first).
    pub fn release(&self) -> Result<(), DriverError> {
        let Some(pool) = self.raw else { return Ok(()) };
        // SAFETY: a valid pool handle; trimming frees only memory no allocation holds.
        unsafe { sys::cuMemPoolTrimTo(pool, 0) }.result()
    }
}
