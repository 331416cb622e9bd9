//! What the backend keeps on its device between calls (twiddles, H scale tables, proving-key
//! bases, pinned staging) and the device memory policy, in one place: a call first asks
//! [`State::make_room`] for the bytes it will allocate; least recently used bases of other keys
//! are evicted until they fit under the device's free memory (less a margin) and the optional
//! cap, or the call gets [`GpuError::OutOfMemory`] naming both sizes (the backend then runs it
//! on the CPU).

use std::collections::HashMap;

use cudarc::driver::CudaSlice;

use super::device::{drv, Device};
use super::ntt::{HTables, Twiddles};
use super::staging::Staging;
use crate::backend::Query;
use crate::gpu::error::{GpuError, GpuResult};
use crate::gpu::launch::SCALE_TABLE;

/// Which resident bases: key id, query, offset in the query, length.
pub(crate) type BasesKey = (u64, Query, usize, usize);

/// One resident base set.
pub(crate) struct Resident {
    pub points: CudaSlice<u64>,
    pub last_use: u64,
}

/// Pinned staging buffers: not yet allocated, allocated, or refused by the driver.
#[derive(Default)]
pub(crate) enum StagingSlot {
    #[default]
    Untried,
    Ready(Box<Staging>),
    Unavailable,
}

/// Free device memory kept back from every call.
pub(crate) fn margin_bytes(total: u64) -> u64 {
    (total / 64).max(256 << 20)
}

/// Bytes of one H table set (two scale tables and 1/Z).
const H_TABLE_BYTES: u64 = (2 * SCALE_TABLE as u64 + 1) * 32;

/// The device-resident state of one backend.
#[derive(Default)]
pub(crate) struct State {
    pub staging: StagingSlot,
    pub twiddles: Option<Twiddles>,
    pub tables: HashMap<u32, HTables>,
    pub bases: HashMap<BasesKey, Resident>,
    pub tick: u64,
}

impl State {
    /// Bytes held on the device between calls.
    pub fn resident_bytes(&self) -> u64 {
        let tw = self.twiddles.as_ref().map_or(0, |t| t.table.num_bytes()) as u64;
        let bases: usize = self.bases.values().map(|r| r.points.num_bytes()).sum();
        tw + self.tables.len() as u64 * H_TABLE_BYTES + bases as u64
    }

    /// Evicts least recently used bases (never `keep`) until `need` more bytes fit: under the
    /// device's free memory less [`margin_bytes`], and under `cap` counting what is resident.
    pub fn make_room(
        &mut self,
        dev: &Device,
        cap: u64,
        need: u64,
        keep: Option<&BasesKey>,
        what: &'static str,
    ) -> GpuResult<()> {
        loop {
            // Freed buffers return to the driver once the stream has passed their frees.
            dev.stream.synchronize().map_err(drv("synchronize"))?;
            let (free, total) = dev.ctx.mem_get_info().map_err(drv("cuMemGetInfo"))?;
            let usable = (free as u64).saturating_sub(margin_bytes(total as u64));
            let under_cap = cap.saturating_sub(self.resident_bytes());
            if need <= usable && need <= under_cap {
                return Ok(());
            }
            let victim = self
                .bases
                .iter()
                .filter(|(k, _)| Some(*k) != keep)
                .min_by_key(|(_, r)| r.last_use)
                .map(|(k, _)| *k);
            match victim {
                Some(k) => {
                    self.bases.remove(&k);
                }
                None => {
                    return Err(GpuError::OutOfMemory {
                        what,
                        need_bytes: need,
                        free_bytes: usable.min(under_cap),
                    })
                }
            }
        }
    }

    /// The staging buffers, allocated on first use; `None` (pageable copies) if that failed.
    pub fn staging(&mut self, dev: &Device) -> Option<&mut Staging> {
        if matches!(self.staging, StagingSlot::Untried) {
            self.staging = match dev.staging() {
                Ok(s) => StagingSlot::Ready(Box::new(s)),
                Err(e) => {
                    tracing::warn!(
                        device = dev.ordinal,
                        reason = %e,
                        "no pinned staging memory: host copies stay pageable"
                    );
                    StagingSlot::Unavailable
                }
            };
        }
        match &mut self.staging {
            StagingSlot::Ready(s) => Some(s),
            _ => None,
        }
    }

    /// Twiddles serving 2^log_n, made when missing (with room for `extra` more bytes).
    pub fn ensure_twiddles(
        &mut self,
        dev: &Device,
        cap: u64,
        log_n: u32,
        extra: u64,
    ) -> GpuResult<&Twiddles> {
        if !self.twiddles.as_ref().is_some_and(|t| t.log_tw >= log_n) {
            self.twiddles = None;
            self.make_room(dev, cap, (16u64 << log_n) + extra, None, "twiddles")?;
            self.twiddles = Some(dev.twiddles(log_n)?);
        }
        self.twiddles
            .as_ref()
            .ok_or_else(|| GpuError::Internal("twiddles missing after they were made".into()))
    }
}
