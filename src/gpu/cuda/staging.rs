//! Page-locked staging for host↔device copies. Copies from pageable memory ran at 5–7 GB/s on
//! the H200 host (most of compute_h's time at 2^26); these go through two pinned buffers so that
//! filling one on the host (rayon) overlaps the DMA out of the other. Without pinned memory (the
//! allocation failed) the copies stay pageable. Sources the caller page-locked in place
//! ([`super::backend::CudaBackend::register_host`]) skip the staging: one DMA from them.

use std::sync::Arc;
use std::time::{Duration, Instant};

use cudarc::driver::sys::CUdeviceptr;
use cudarc::driver::{
    CudaEvent, CudaSlice, CudaStream, CudaView, CudaViewMut, DevicePtrMut, DeviceRepr,
    PinnedHostSlice,
};
use rayon::prelude::*;

use super::clock::UploadClock;
use super::device::{drv, Device, Lane};
use super::pinned::registered;
use crate::gpu::error::{GpuError, GpuResult};

/// u64 per staging buffer (64 MiB).
const STAGE_U64: usize = 8 << 20;
/// Piece of a host copy one rayon task takes.
const COPY_PIECE: usize = 1 << 16;

/// Two write-combined buffers for uploads and two cached ones for downloads, with the event
/// that marks the end of the last DMA out of each upload buffer.
pub(crate) struct Staging {
    up: [PinnedHostSlice<u64>; 2],
    down: [PinnedHostSlice<u64>; 2],
    up_done: [Option<CudaEvent>; 2],
}

impl Drop for Staging {
    fn drop(&mut self) {
        // No DMA may still read a buffer when it is freed.
        for ev in self.up_done.iter_mut().filter_map(Option::take) {
            if let Err(e) = ev.synchronize() {
                tracing::warn!(error = ?e, "staging buffer wait failed at drop");
            }
        }
    }
}

/// Where a staged upload writes: a view (cudarc tracks it) or a raw address
/// ([`Device::upload_untracked`]).
enum UploadDst<'a, 'b> {
    View(&'a mut CudaViewMut<'b, u64>),
    Raw(CUdeviceptr, usize),
}

impl UploadDst<'_, '_> {
    fn len(&self) -> usize {
        match self {
            UploadDst::View(d) => d.len(),
            UploadDst::Raw(_, len) => *len,
        }
    }

    /// `self[off..off + src.len()] = src` on `on`, asynchronous when `src` is page-locked.
    fn copy(
        &mut self,
        on: &Arc<CudaStream>,
        src: &[u64],
        off: usize,
        what: &'static str,
    ) -> GpuResult<()> {
        match self {
            UploadDst::View(d) => {
                let mut d = d.slice_mut(off..off + src.len());
                on.memcpy_htod(src, &mut d).map_err(drv(what))
            }
            UploadDst::Raw(at, _) => {
                on.context().bind_to_thread().map_err(drv(what))?;
                let at = *at + (off * std::mem::size_of::<u64>()) as CUdeviceptr;
                // SAFETY: `upload_untracked`'s contract: `len` u64 of device memory at `at`,
                // and `off + src.len() <= len` (checked in `upload_to`, chunks within it).
                unsafe { cudarc::driver::result::memcpy_htod_async(at, src, on.cu_stream()) }
                    .map_err(drv(what))
            }
        }
    }
}

/// Unsigned integers whose bytes, 8 at a time, make u64 words: no padding, every byte
/// initialized, a size dividing 8.
pub(crate) trait PlainInt: DeviceRepr + Copy + Unpin {}
impl PlainInt for u8 {}
impl PlainInt for u16 {}
impl PlainInt for u32 {}

/// `src` as the u64 words of its bytes and the elements after the last whole word: `None` when
/// its start is not 8-byte aligned or it holds no whole word.
fn int_words<T: PlainInt>(src: &[T]) -> Option<(&[u64], &[T])> {
    // SAFETY: a `PlainInt`'s bytes are all initialized, so any 8 of them make a valid u64;
    // `align_to` keeps the middle aligned for u64 and the three parts cover `src` exactly.
    let (head, body, tail) = unsafe { src.align_to::<u64>() };
    (head.is_empty() && !body.is_empty()).then_some((body, tail))
}

fn par_copy(dst: &mut [u64], src: &[u64]) {
    dst.par_chunks_mut(COPY_PIECE)
        .zip(src.par_chunks(COPY_PIECE))
        .for_each(|(d, s)| d.copy_from_slice(s));
}

impl Device {
    /// 256 MiB of pinned host memory, or an error (the caller then copies pageable).
    pub(crate) fn staging(&self) -> GpuResult<Staging> {
        // SAFETY: every element is written before it is read: uploads copy host data into a
        // buffer before its DMA, downloads DMA into a buffer before the host reads it.
        let up = |_| unsafe { self.ctx.alloc_pinned::<u64>(STAGE_U64) };
        // Downloads are read by the CPU: cached (flags 0), not write-combined.
        let down = |_| unsafe { self.ctx.alloc_pinned_with_flags::<u64>(STAGE_U64, 0) };
        let [u0, u1] = [0, 1].map(up);
        let [d0, d1] = [0, 1].map(down);
        Ok(Staging {
            up: [u0.map_err(drv("pinned"))?, u1.map_err(drv("pinned"))?],
            down: [d0.map_err(drv("pinned"))?, d1.map_err(drv("pinned"))?],
            up_done: [None, None],
        })
    }

    /// `dst[..src.len()] = src` on stream `on`, through `staging` when there is one. Returns
    /// the host time spent copying into pinned memory, with the last DMAs possibly in flight on
    /// `on` (later work that uses `dst` waits for them: cudarc records its write). The host
    /// memory of `src` is no longer read when this returns.
    pub(crate) fn upload_staged(
        &self,
        on: &Arc<CudaStream>,
        staging: Option<&mut Staging>,
        src: &[u64],
        dst: &mut CudaViewMut<'_, u64>,
        what: &'static str,
    ) -> GpuResult<Duration> {
        self.upload_to(on, staging, src, UploadDst::View(dst), what)
    }

    /// [`Device::upload_staged`] to `len` u64 at device address `at`, untracked: cudarc
    /// neither orders these copies after the earlier uses of that memory nor later uses after
    /// them.
    ///
    /// # Safety
    /// `at` is the address of `len` u64 of live device memory; no work still in flight uses
    /// those elements, and the caller orders every later use after the copies (an event
    /// recorded on `on` after this returns, waited on by the streams that use them).
    pub(crate) unsafe fn upload_untracked(
        &self,
        on: &Arc<CudaStream>,
        staging: Option<&mut Staging>,
        src: &[u64],
        at: CUdeviceptr,
        len: usize,
        what: &'static str,
    ) -> GpuResult<Duration> {
        self.upload_to(on, staging, src, UploadDst::Raw(at, len), what)
    }

    fn upload_to(
        &self,
        on: &Arc<CudaStream>,
        staging: Option<&mut Staging>,
        src: &[u64],
        mut dst: UploadDst<'_, '_>,
        what: &'static str,
    ) -> GpuResult<Duration> {
        if src.len() > dst.len() {
            return Err(GpuError::BufferTooShort {
                kernel: "upload",
                arg: what,
                have: dst.len(),
                need: src.len(),
            });
        }
        self.uploaded.fetch_add(
            std::mem::size_of_val(src) as u64,
            std::sync::atomic::Ordering::Relaxed,
        );
        if let Some(held) = registered(src) {
            let r = self.upload_direct(on, src, &mut dst, what);
            drop(held);
            return r;
        }
        let Some(st) = staging else {
            // From pageable memory the driver copies `src` out before the call returns; memory
            // page-locked some other way is read by a DMA still in flight, so wait for it.
            dst.copy(on, src, 0, what)?;
            on.synchronize().map_err(drv("synchronize"))?;
            return Ok(Duration::ZERO);
        };
        let r = self.upload_chunks(on, st, src, &mut dst, what);
        if r.is_err() {
            // A buffer may still be read by a DMA that has no event: wait for the stream.
            let _ = on.synchronize();
        }
        r
    }

    /// `src` page-locked by the caller ([`CudaBackend::register_host`]; the caller holds the
    /// registered ranges' read lock): one DMA straight from it, no host copy, waited for (the
    /// caller may reuse `src` once this returns).
    fn upload_direct(
        &self,
        on: &Arc<CudaStream>,
        src: &[u64],
        dst: &mut UploadDst<'_, '_>,
        what: &'static str,
    ) -> GpuResult<Duration> {
        let mut clock = UploadClock::start(on, what, self.upload_trace);
        let before = clock.as_ref().and_then(UploadClock::before);
        let r = dst.copy(on, src, 0, what);
        if let Some(c) = clock.as_mut() {
            c.after(before);
        }
        // Also after a failed copy: no DMA may still read `src` when this returns.
        let done = on.synchronize().map_err(drv("synchronize"));
        r?;
        done?;
        if let Some(c) = clock {
            c.report(std::mem::size_of_val(src));
        }
        Ok(Duration::ZERO)
    }

    fn upload_chunks(
        &self,
        on: &Arc<CudaStream>,
        st: &mut Staging,
        src: &[u64],
        dst: &mut UploadDst<'_, '_>,
        what: &'static str,
    ) -> GpuResult<Duration> {
        let mut host_time = Duration::ZERO;
        let mut clock = UploadClock::start(on, what, self.upload_trace);
        for (i, chunk) in src.chunks(STAGE_U64).enumerate() {
            let k = i % 2;
            if let Some(ev) = st.up_done[k].take() {
                let t = Instant::now();
                ev.synchronize().map_err(drv("staging wait"))?;
                if let Some(c) = clock.as_mut() {
                    c.host_wait += t.elapsed();
                }
            }
            let host = st.up[k].as_mut_slice().map_err(drv("staging"))?;
            let host = &mut host[..chunk.len()];
            let t = Instant::now();
            self.on_host(|| par_copy(host, chunk));
            host_time += t.elapsed();
            let before = clock.as_ref().and_then(UploadClock::before);
            // `host` is page-locked and passed as a plain slice (cudarc adds no stream sync for
            // those), so this DMA is asynchronous; the event below guards the buffer until it is
            // done. Passing the `PinnedHostSlice` itself would make cudarc track it instead.
            dst.copy(on, host, i * STAGE_U64, what)?;
            if let Some(c) = clock.as_mut() {
                c.after(before);
            }
            st.up_done[k] = Some(on.record_event(None).map_err(drv("event"))?);
        }
        if let Some(mut c) = clock {
            c.host_copy = host_time;
            c.report(std::mem::size_of_val(src));
        }
        Ok(host_time)
    }

    /// A new buffer on `lane` holding `src`, uploaded through `staging` when there is one; with
    /// the host time spent copying.
    pub(crate) fn upload_new(
        &self,
        lane: Lane,
        staging: Option<&mut Staging>,
        src: &[u64],
        what: &'static str,
    ) -> GpuResult<(CudaSlice<u64>, Duration)> {
        // Written whole by the upload.
        let mut d = self.alloc_scratch_on::<u64>(lane, src.len(), what)?;
        let host = self.upload_staged(self.lane(lane), staging, src, &mut d.slice_mut(..), what)?;
        Ok((d, host))
    }

    /// A new buffer on the compute stream holding `src`, a slice of plain integers (u8, u16,
    /// u32): its 8-byte-aligned body through `staging` (as u64 words, the same bytes), the few
    /// elements after it by a small copy. A recording's matrices go up this way each time
    /// they are made resident again (~5.9 GB at 2^27 on an H100: 0.12 s, against 0.56-0.61 s
    /// as a pageable copy; kernels/NOTES.md, "Sparse a/b/c"). An unaligned or short slice goes
    /// up pageable, whole.
    pub(crate) fn upload_ints<T: PlainInt>(
        &self,
        staging: Option<&mut Staging>,
        src: &[T],
        what: &'static str,
    ) -> GpuResult<CudaSlice<T>> {
        let Some((body, tail)) = int_words(src) else {
            return self.upload_small(src);
        };
        // Written whole below: the body by the staged copies, the tail by its own copy.
        let mut d = self.alloc_scratch::<T>(src.len(), what)?;
        let at = {
            let (at, _write) = d.device_ptr_mut(&self.stream);
            at
        };
        // SAFETY: `at` addresses the `src.len()` elements of `d`, whose first `body.len()` u64
        // are the body's bytes; nothing else uses the new buffer, and the copies queue on the
        // compute stream, where every later use of `d` (the a/b/c launches, its free) is
        // ordered after them.
        unsafe { self.upload_untracked(&self.stream, staging, body, at, body.len(), what)? };
        if !tail.is_empty() {
            let done = body.len() * 8 / std::mem::size_of::<T>();
            let mut rest = d.slice_mut(done..);
            self.stream
                .memcpy_htod(tail, &mut rest)
                .map_err(drv(what))?;
        }
        Ok(d)
    }

    /// `dst = src` (equal lengths), through `staging` when there is one; synchronous.
    pub(crate) fn download_staged(
        &self,
        staging: Option<&mut Staging>,
        src: &CudaView<'_, u64>,
        dst: &mut [u64],
        what: &'static str,
    ) -> GpuResult<()> {
        let Some(st) = staging else {
            self.stream.memcpy_dtoh(src, dst).map_err(drv(what))?;
            return self.stream.synchronize().map_err(drv(what));
        };
        let r = self.download_chunks(st, src, dst, what);
        if r.is_err() {
            // A DMA into a download buffer may still be in flight.
            let _ = self.stream.synchronize();
        }
        r
    }

    fn download_chunks(
        &self,
        st: &mut Staging,
        src: &CudaView<'_, u64>,
        dst: &mut [u64],
        what: &'static str,
    ) -> GpuResult<()> {
        let n = dst.len();
        let chunks = n.div_ceil(STAGE_U64);
        let issue = |st: &mut Staging, i: usize| -> GpuResult<CudaEvent> {
            let (lo, hi) = (i * STAGE_U64, ((i + 1) * STAGE_U64).min(n));
            let host = st.down[i % 2].as_mut_slice().map_err(drv("staging"))?;
            self.stream
                .memcpy_dtoh(&src.slice(lo..hi), &mut host[..hi - lo])
                .map_err(drv(what))?;
            self.stream.record_event(None).map_err(drv("event"))
        };
        let mut next = if chunks > 0 {
            Some(issue(st, 0)?)
        } else {
            None
        };
        for i in 0..chunks {
            let ev = next.take();
            // The buffer of chunk i + 1 was last read on the host in the previous iteration.
            if i + 1 < chunks {
                next = Some(issue(st, i + 1)?);
            }
            if let Some(ev) = ev {
                ev.synchronize().map_err(drv(what))?;
            }
            let (lo, hi) = (i * STAGE_U64, ((i + 1) * STAGE_U64).min(n));
            let host = st.down[i % 2].as_mut_slice().map_err(drv("staging"))?;
            self.on_host(|| par_copy(&mut dst[lo..hi], &host[..hi - lo]));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::int_words;

    #[test]
    fn integers_split_into_their_bytes_words_and_a_tail() {
        for n in [2usize, 3, 7, 1001] {
            let v: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(0x9e37_79b9)).collect();
            let Some((words, tail)) = int_words(&v) else {
                assert!(
                    !(v.as_ptr() as usize).is_multiple_of(8),
                    "an aligned vector of {n} has words"
                );
                continue;
            };
            assert_eq!(words.len(), n / 2);
            assert_eq!(tail, &v[n / 2 * 2..]);
            for (k, w) in words.iter().enumerate() {
                assert_eq!(
                    *w,
                    v[2 * k] as u64 | (v[2 * k + 1] as u64) << 32,
                    "{n}: word {k}"
                );
            }
        }
        let bytes: Vec<u8> = (0..13).collect();
        if let Some((words, tail)) = int_words(&bytes) {
            assert_eq!(words, &[u64::from_le_bytes([0, 1, 2, 3, 4, 5, 6, 7])]);
            assert_eq!(tail, &[8, 9, 10, 11, 12]);
        }
        assert!(int_words(&[7u16, 8]).is_none(), "no whole word");
    }
}
