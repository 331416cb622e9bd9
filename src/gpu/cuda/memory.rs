//! What the backend keeps on its device between calls (twiddles, H scale tables, proving-key
//! bases, pinned staging) and the device memory policy, in one place: a call first asks
//! [`State::make_room`] for the bytes it will allocate; least recently used bases of other keys
//! are evicted until they fit under the device's free memory (less a margin) and the optional
//! cap, or the call gets [`GpuError::OutOfMemory`] naming both sizes (the backend then runs it
//! on the CPU).

use std::collections::HashMap;

use std::time::Duration;

use cudarc::driver::CudaSlice;

use super::device::{drv, Device, Lane};
use super::ntt::{HTables, Twiddles};
use super::staging::Staging;
use crate::gpu::error::{GpuError, GpuResult};
use crate::gpu::launch::SCALE_TABLE;
use crate::groth16::backend::Query;

/// Which resident bases: key id, query, offset in the query, length.
pub(crate) type BasesKey = (u64, Query, usize, usize);

/// The resident base sets of a device.
pub(crate) type BaseSets = HashMap<BasesKey, Resident>;

/// One resident base set.
pub(crate) struct Resident {
    pub points: CudaSlice<u64>,
    pub last_use: u64,
}

/// Coefficient indices on the device, in the recording's width.
pub(crate) enum DeviceIdx {
    U8(CudaSlice<u8>),
    U16(CudaSlice<u16>),
    U32(CudaSlice<u32>),
}

/// One matrix on the device.
pub(crate) struct DeviceMatrix {
    pub row_ptr: CudaSlice<u32>,
    pub cols: CudaSlice<u32>,
    pub idx: DeviceIdx,
    pub terms: usize,
}

/// A recorded R1CS on the device (see `sparse`).
pub(crate) struct ResidentRecording {
    pub matrices: [DeviceMatrix; 3],
    pub table: CudaSlice<u64>,
    pub bytes: u64,
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

/// The staging buffers of `slot`, allocated on first use; `None` (pageable copies) if that
/// failed. A free function so that callers can hold the other fields of [`State`] meanwhile.
pub(crate) fn staging_of<'s>(slot: &'s mut StagingSlot, dev: &Device) -> Option<&'s mut Staging> {
    if matches!(slot, StagingSlot::Untried) {
        *slot = match dev.staging() {
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
    match slot {
        StagingSlot::Ready(s) => Some(s),
        _ => None,
    }
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
    pub bases: BaseSets,
    /// Recorded R1CS matrices by recording id, evicted with the bases (least recently used).
    pub recordings: HashMap<u64, ResidentRecording>,
    /// The recording a call is evaluating now: never evicted under it.
    pub in_use_recording: Option<u64>,
    pub tick: u64,
}

impl State {
    /// Bytes held on the device between calls.
    pub fn resident_bytes(&self) -> u64 {
        let tw = self.twiddles.as_ref().map_or(0, |t| t.table.num_bytes()) as u64;
        let bases: usize = self.bases.values().map(|r| r.points.num_bytes()).sum();
        let recordings: u64 = self.recordings.values().map(|r| r.bytes).sum();
        tw + self.tables.len() as u64 * H_TABLE_BYTES + bases as u64 + recordings
    }

    /// Whether `need` more bytes fit now without evicting anything: under the device's free
    /// memory (the driver's and the pool's idle bytes) less [`margin_bytes`], and under `cap`
    /// counting every buffer in use (the pool's used bytes, at least what is resident).
    /// `Err(usable)`: they do not; the bytes that could be had.
    pub fn fits(&self, dev: &Device, cap: u64, need: u64) -> GpuResult<Result<(), u64>> {
        // The pool's rule is this backend's again (another backend of the device may have
        // set its own).
        dev.pool.apply().map_err(drv("cuMemPoolSetAttribute"))?;
        // Freed buffers return to the pool (and, unless it keeps them, to the driver) once
        // the streams have passed their frees.
        let t = std::time::Instant::now();
        dev.copy.synchronize().map_err(drv("synchronize"))?;
        dev.stream.synchronize().map_err(drv("synchronize"))?;
        let waited = t.elapsed();
        if waited > std::time::Duration::from_millis(1) {
            // Work still queued when a call asks for room. Not what device a/b/c's time was:
            // the 32 GiB C2 logged 4 such waits, the longest 0.037 s (kernels/NOTES.md,
            // "Sparse a/b/c").
            tracing::debug!(
                need,
                seconds = waited.as_secs_f64(),
                "room: waited for the streams"
            );
        }
        let (free, total) = dev.memory()?;
        // Under the cap counts every buffer in use, not only what is resident: a partition's
        // a, b, c evaluated on the device before its call are (its call asks no room for
        // them), and counting the resident bytes alone let that call's peak pass a 32 GiB
        // limit by 0.9 GB (docs/bench-log/2026-12-06.md, "Closing session").
        let in_use = dev
            .pool
            .used_bytes()
            .unwrap_or(0)
            .max(self.resident_bytes());
        let under_cap = cap.saturating_sub(in_use);
        // The pool's idle bytes count as free ([`Device::memory`]), kept in the pool: the
        // call's buffers reuse its blocks (a partition of the last one's shape reuses them
        // exactly) and the pool grows from the driver's free bytes for the rest. Handing them
        // back to the driver first, only for the call to map them again, cost ~0.1-0.2 s of
        // every 2^27 partition (BENCHMARKS.md, "H100 — 32 and 64 GiB PoRep C2 through the
        // engine"). An allocation that neither serves hands the idle blocks back then and is
        // tried again (`Device::allocate`).
        let usable = free.saturating_sub(margin_bytes(total));
        if need <= usable && need <= under_cap {
            return Ok(Ok(()));
        }
        Ok(Err(usable.min(under_cap)))
    }

    /// Whether `need` more bytes fit now or would after evicting every set and idle recording
    /// not in `keep` ([`State::evictable_bytes`]): what [`State::make_room`] could serve. A
    /// count only; nothing is evicted.
    pub fn could_fit(
        &self,
        dev: &Device,
        cap: u64,
        need: u64,
        keep: &[BasesKey],
    ) -> GpuResult<bool> {
        Ok(match self.fits(dev, cap, need)? {
            Ok(()) => true,
            Err(usable) => usable.saturating_add(self.evictable_bytes(keep)) >= need,
        })
    }

    /// Evicts least recently used bases (never those in `keep`) until `need` more bytes fit
    /// ([`State::fits`]). Evicts nothing when even every evictable set would not make room:
    /// a set given up for a request that fails anyway is uploaded again by the next call
    /// (the 32 GiB C2 lost its recording to every partition's streamed set that way,
    /// kernels/NOTES.md, "Sparse a/b/c").
    pub fn make_room(
        &mut self,
        dev: &Device,
        cap: u64,
        need: u64,
        keep: &[BasesKey],
        what: &'static str,
    ) -> GpuResult<()> {
        loop {
            let usable = match self.fits(dev, cap, need)? {
                Ok(()) => return Ok(()),
                Err(usable) => usable,
            };
            let evictable = self.evictable_bytes(keep);
            if usable.saturating_add(evictable) < need {
                tracing::debug!(
                    what,
                    need,
                    usable,
                    evictable,
                    "room: short even with every evictable set given up; nothing evicted"
                );
                return Err(GpuError::OutOfMemory {
                    what,
                    need_bytes: need,
                    free_bytes: usable,
                });
            }
            let base = self
                .bases
                .iter()
                .filter(|(k, _)| !keep.contains(k))
                .min_by_key(|(_, r)| r.last_use)
                .map(|(k, r)| (r.last_use, *k));
            let recording = self
                .recordings
                .iter()
                .filter(|(id, _)| self.in_use_recording != Some(**id))
                .min_by_key(|(_, r)| r.last_use)
                .map(|(id, r)| (r.last_use, *id));
            let evicted = match (base, recording) {
                (Some((b, k)), Some((r, _))) if b <= r => ("bases", self.evict_bases(&k)),
                (_, Some((_, id))) => (
                    "recording",
                    self.recordings.remove(&id).map_or(0, |r| r.bytes),
                ),
                (Some((_, k)), None) => ("bases", self.evict_bases(&k)),
                (None, None) => {
                    return Err(GpuError::OutOfMemory {
                        what,
                        need_bytes: need,
                        free_bytes: usable,
                    })
                }
            };
            tracing::debug!(
                what,
                need,
                usable,
                evicted = evicted.0,
                evicted_bytes = evicted.1,
                "room: evicted the least recently used resident set"
            );
        }
    }

    /// Drops resident base set `k`; the bytes it held.
    fn evict_bases(&mut self, k: &BasesKey) -> u64 {
        self.bases
            .remove(k)
            .map_or(0, |r| r.points.num_bytes() as u64)
    }

    /// Bytes [`State::make_room`] could give back without touching `keep`: other bases, and
    /// recordings no call is evaluating.
    pub fn evictable_bytes(&self, keep: &[BasesKey]) -> u64 {
        let bases: u64 = self
            .bases
            .iter()
            .filter(|(k, _)| !keep.contains(k))
            .map(|(_, r)| r.points.num_bytes() as u64)
            .sum();
        let recordings: u64 = self
            .recordings
            .iter()
            .filter(|(id, _)| self.in_use_recording != Some(**id))
            .map(|(_, r)| r.bytes)
            .sum();
        bases + recordings
    }

    /// The staging buffers, allocated on first use; `None` (pageable copies) if that failed.
    pub fn staging(&mut self, dev: &Device) -> Option<&mut Staging> {
        staging_of(&mut self.staging, dev)
    }

    /// Makes `limbs` (the affine points of a key's query) resident under `key`: uploaded when
    /// missing, after room for them and `scratch` more bytes is made without evicting `keep`;
    /// with room for `scratch` when already there. Marks them used now (LRU).
    pub fn make_resident(
        &mut self,
        dev: &Device,
        cap: u64,
        key: BasesKey,
        limbs: &[u64],
        scratch: u64,
        keep: &[BasesKey],
    ) -> GpuResult<()> {
        self.tick += 1;
        let tick = self.tick;
        if self.bases.contains_key(&key) {
            if scratch > 0 {
                let mut kept = keep.to_vec();
                kept.push(key);
                self.make_room(dev, cap, scratch, &kept, "MSM scratch")?;
            }
        } else {
            let bytes = 8 * limbs.len() as u64;
            self.make_room(dev, cap, bytes + scratch, keep, "MSM bases")?;
            let (points, _) = self.upload_new(dev, Lane::Compute, limbs, "upload bases")?;
            self.bases.insert(
                key,
                Resident {
                    points,
                    last_use: tick,
                },
            );
        }
        if let Some(r) = self.bases.get_mut(&key) {
            r.last_use = tick;
        }
        Ok(())
    }

    /// A new device buffer on `lane` holding `src`, through the staging buffers; with the host
    /// time spent copying.
    pub fn upload_new(
        &mut self,
        dev: &Device,
        lane: Lane,
        src: &[u64],
        what: &'static str,
    ) -> GpuResult<(CudaSlice<u64>, Duration)> {
        let staging = self.staging(dev);
        dev.upload_new(lane, staging, src, what)
    }

    /// Whether the twiddles held (if any) are too short for a domain of 2^log_n.
    pub fn needs_twiddles(&self, log_n: u32) -> bool {
        self.twiddles.as_ref().is_none_or(|t| t.log_tw < log_n)
    }

    /// Twiddles serving 2^log_n, made when missing (with room for `extra` more bytes).
    pub fn ensure_twiddles(
        &mut self,
        dev: &Device,
        cap: u64,
        log_n: u32,
        extra: u64,
    ) -> GpuResult<&Twiddles> {
        if self.needs_twiddles(log_n) {
            self.twiddles = None;
            self.make_room(dev, cap, dev.twiddle_bytes(log_n) + extra, &[], "twiddles")?;
            self.twiddles = Some(dev.twiddles(log_n)?);
        }
        self.twiddles
            .as_ref()
            .ok_or_else(|| GpuError::Internal("twiddles missing after they were made".into()))
    }
}
