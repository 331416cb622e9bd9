//! One launch's check: its shape and every buffer argument's length, the first failure kept;
//! a [`Launch`] comes only out of a check that passed.

use crate::gpu::error::{GpuError, GpuResult};

/// Threads per block of the element-wise kernels.
pub const ELEMENTWISE_BLOCK: u32 = 256;
/// Threads per block of `scan_block` and `scan_add`.
pub const SCAN_BLOCK: u32 = 1024;
/// Elements one `scan_block` block covers.
pub const SCAN_SPAN: usize = 4096;
/// Threads per block of `msm_accumulate`.
pub const ACCUMULATE_BLOCK: u32 = 128;
/// Threads per block of `msm_reduce_level`.
pub const REDUCE_BLOCK: u32 = 64;
/// Threads per block of `msm_ones` and `ec_sum` (the kernels assume it).
pub const SUM_BLOCK: u32 = 128;
/// Entries of an NTT scale table (two halves of 16384).
pub const SCALE_TABLE: usize = 32768;
/// Largest NTT pass block (`NTT_MAX_BLOCK_LOG`): 2^10 elements in shared memory.
pub const NTT_MAX_BLOCK_LOG: u32 = 10;

/// A checked launch: the kernel's name, a 1-D grid, the block and the dynamic shared memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Launch {
    kernel: &'static str,
    grid: u32,
    block: u32,
    smem: u32,
}

impl Launch {
    /// The kernel's name.
    pub fn kernel(&self) -> &'static str {
        self.kernel
    }

    /// (grid, block, dynamic shared memory bytes).
    pub fn dims(&self) -> (u32, u32, u32) {
        (self.grid, self.block, self.smem)
    }
}

/// Collects the checks of one launch; the first failure is kept.
pub(crate) struct Check {
    kernel: &'static str,
    grid: u64,
    block: u32,
    smem: u64,
    err: Option<GpuError>,
}

impl Check {
    pub(crate) fn new(kernel: &'static str, grid: u64, block: u32) -> Self {
        Check {
            kernel,
            grid,
            block,
            smem: 0,
            err: None,
        }
    }

    pub(crate) fn smem(mut self, bytes: u64) -> Self {
        self.smem = bytes;
        self
    }

    /// Buffer `arg` holds `have` elements and the launch touches `need`.
    pub(crate) fn buf(mut self, arg: &'static str, have: usize, need: usize) -> Self {
        if self.err.is_none() && have < need {
            self.err = Some(GpuError::BufferTooShort {
                kernel: self.kernel,
                arg,
                have,
                need,
            });
        }
        self
    }

    /// An optional buffer (`None` is passed as a null pointer).
    pub(crate) fn opt(self, arg: &'static str, have: Option<usize>, need: usize) -> Self {
        match have {
            Some(h) => self.buf(arg, h, need),
            None => self,
        }
    }

    pub(crate) fn rule(mut self, ok: bool, reason: impl FnOnce() -> String) -> Self {
        if self.err.is_none() && !ok {
            self.err = Some(GpuError::BadLaunch {
                kernel: self.kernel,
                reason: reason(),
            });
        }
        self
    }

    pub(crate) fn done(self) -> GpuResult<Launch> {
        let (kernel, grid, block, smem) = (self.kernel, self.grid, self.block, self.smem);
        let this = self
            .rule((1..1 << 31).contains(&grid), || {
                format!("grid of {grid} blocks")
            })
            .rule((1..=1024).contains(&block), || {
                format!("block of {block} threads")
            })
            .rule(smem <= 48 << 10, || {
                format!("{smem} bytes of shared memory")
            });
        match this.err {
            Some(e) => Err(e),
            None => Ok(Launch {
                kernel,
                grid: this.grid as u32,
                block: this.block,
                smem: this.smem as u32,
            }),
        }
    }
}

/// Blocks of `block` threads covering `n` elements.
pub(crate) fn blocks(n: usize, block: u32) -> u64 {
    (n as u64).div_ceil(block as u64)
}

/// Runs `launch` only when `checked` is a passed check: the device side's one entry to a launch.
pub fn launch_checked<T>(
    checked: GpuResult<Launch>,
    launch: impl FnOnce(&Launch) -> GpuResult<T>,
) -> GpuResult<T> {
    let l = checked?;
    launch(&l)
}
