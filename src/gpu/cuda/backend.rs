//! The CUDA backend on one device: its state behind one lock, the fallback counter and memory
//! cap, the public accessors, and the `Backend` impl (a call the device memory does not fit
//! runs on the CPU, counted, never a crash). The engine sends B_G2 here only when
//! `bg2.device = "gpu"`; by default it stays on the CPU actor.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};

use super::device::Device;
use super::memory::State;
use super::pinned::HostRegistration;
use crate::gpu::error::{GpuError, GpuResult};
use crate::gpu::host;
use crate::gpu::options::{CappedHBeside, GpuOptions};
use crate::groth16::backend::{Backend, Bases};
use crate::groth16::cs::Density;
use crate::groth16::domain::Domain;
use crate::groth16::error::{Error, Result};

/// Largest NTT the kernels take (scale tables index positions below 2^28).
pub(super) const MAX_GPU_LOG_N: u32 = 28;

/// The CUDA backend on one device.
pub struct CudaBackend {
    pub(super) dev: Device,
    /// `dev` on streams of its own, for H's MSM beside the witness's under
    /// `gpu.experimental.capped_h_beside` (none with the knob off).
    pub(super) twin: Option<Device>,
    /// Partition calls whose H's MSM ran on `twin` beside the witness's.
    pub(super) h_beside: AtomicU64,
    arch: String,
    state: Mutex<State>,
    fallbacks: AtomicU64,
    cap_bytes: AtomicU64,
    /// `gpu.memory_limit` (u64::MAX: none).
    limit_bytes: u64,
}

impl CudaBackend {
    /// Opens `device` with default knobs ([`CudaBackend::with_options`]).
    pub fn new(device: usize) -> GpuResult<Self> {
        Self::with_options(device, &GpuOptions::default())
    }

    /// Opens `device`, compiles (or loads from the cache) the kernels for its architecture with
    /// the knobs of `opts` and loads them. Fails cleanly without a driver, without devices or
    /// on a bad ordinal.
    pub fn with_options(device: usize, opts: &GpuOptions) -> GpuResult<Self> {
        let (dev, arch) = Device::open(device, opts)?;
        tracing::info!(device, arch = %arch, sms = dev.sms, "CUDA backend ready");
        let twin = match opts.capped_h_beside {
            CappedHBeside::Off => None,
            CappedHBeside::On | CappedHBeside::WitnessFirst => Some(dev.twin()?),
        };
        Ok(CudaBackend {
            dev,
            twin,
            h_beside: AtomicU64::new(0),
            arch,
            state: Mutex::new(State::default()),
            fallbacks: AtomicU64::new(0),
            cap_bytes: AtomicU64::new(u64::MAX),
            limit_bytes: opts.memory_limit.unwrap_or(u64::MAX),
        })
    }

    /// The device's name as the driver reports it.
    pub fn device_name(&self) -> String {
        self.dev.ctx.name().unwrap_or_else(|_| "unknown".into())
    }

    /// The virtual architecture the kernels were compiled for (`compute_90`).
    pub fn arch(&self) -> &str {
        &self.arch
    }

    /// Sets the NTT block size (log2 of the elements per `ntt_pass` block, as `gpu.ntt_block`)
    /// for the transforms that start after it; the GPU bench and the conformance test compare
    /// sizes on one backend with it.
    pub fn set_ntt_block(&self, block: u32) -> Result<()> {
        let o = crate::gpu::options::GpuOptions {
            ntt_block: block,
            ..Default::default()
        };
        set_knob(o, &self.dev.ntt_block, block)
    }

    /// Sets the radix of the NTT butterflies (as `gpu.ntt_radix`) for the transforms that
    /// start after it, as [`CudaBackend::set_ntt_block`] the block.
    pub fn set_ntt_radix(&self, radix: u32) -> Result<()> {
        let o = crate::gpu::options::GpuOptions {
            ntt_radix: radix,
            ..Default::default()
        };
        set_knob(o, &self.dev.ntt_radix, radix)
    }

    /// Sets the columns of an NTT block (as `gpu.ntt_columns`) for the transforms that start
    /// after it, as [`CudaBackend::set_ntt_block`] the block.
    pub fn set_ntt_columns(&self, cols: u32) -> Result<()> {
        let o = crate::gpu::options::GpuOptions {
            ntt_columns: cols,
            ..Default::default()
        };
        set_knob(o, &self.dev.ntt_columns, cols)
    }

    /// Partition calls whose H's MSM ran beside the witness's MSMs
    /// (`gpu.experimental.capped_h_beside`).
    pub fn h_beside_calls(&self) -> u64 {
        self.h_beside.load(Ordering::Relaxed)
    }

    /// Calls that ran on the CPU because the device memory did not fit them.
    pub fn fallbacks(&self) -> u64 {
        self.fallbacks.load(Ordering::Relaxed)
    }

    /// Bytes held on the device between calls (bases, twiddles, scale tables).
    pub fn resident_bytes(&self) -> u64 {
        self.state().map_or(0, |s| s.resident_bytes())
    }

    /// Number of resident base sets.
    pub fn resident_base_sets(&self) -> usize {
        self.state().map_or(0, |s| s.bases.len())
    }

    /// Number of resident recordings (device a/b/c's matrices).
    pub fn resident_recordings(&self) -> usize {
        self.state().map_or(0, |s| s.recordings.len())
    }

    /// Drops every resident buffer.
    pub fn clear_resident(&self) -> Result<()> {
        let mut st = self.state()?;
        *st = State::default();
        Ok(())
    }

    /// Caps the device bytes this backend holds (resident plus a call's scratch) below
    /// `gpu.memory_limit`; `None` lifts this cap (not the limit). For tests of the CPU
    /// fallback and for sharing a device.
    pub fn set_memory_cap_bytes(&self, cap: Option<u64>) {
        self.cap_bytes
            .store(cap.unwrap_or(u64::MAX), Ordering::Relaxed);
    }

    /// Device bytes a partition call of `pk` takes beyond its resident bases, twiddles and H
    /// tables with its MSMs in lean pieces, before any room for streamed bases: what a memory
    /// limit must leave for the one-call path. For the witness `w`, or without one for the
    /// key's largest partition (every private variable in A and B); `None` when they do not
    /// match. `resident`: which of the MSMs over H, L, A, B_G1 and B_G2 read resident bases
    /// (a streamed one's scratch is in the streaming room, not the call's); B_G2's false
    /// where the device does not compute it, `[true; 5]` for the whole call.
    pub fn partition_call_bytes(
        &self,
        pk: &crate::ProvingKey,
        w: Option<&crate::groth16::prover::Witness>,
        resident: [bool; 5],
    ) -> Option<u64> {
        let sh = match w {
            Some(w) => super::partition::Shape::of(pk, w, resident[4]).ok()?,
            None => super::partition::Shape::largest(pk)?,
        };
        Some(sh.need_bytes(resident, self.dev.msm_window, crate::gpu::plan::Cut::Lean))
    }

    /// Device bytes of the twiddle table serving NTTs up to 2^log_n on this device, in the
    /// layout `gpu.ntt_twiddles` picked for it (split or whole).
    pub fn twiddle_bytes(&self, log_n: u32) -> u64 {
        self.dev.twiddle_bytes(log_n)
    }

    /// The most device bytes this backend takes (`gpu.memory_limit`), if configured.
    pub fn memory_limit_bytes(&self) -> Option<u64> {
        Some(self.limit_bytes).filter(|&c| c != u64::MAX)
    }

    /// Device bytes in buffers of the device's memory pool now (every backend of the device
    /// in this process; all of baton's device buffers come from it), or, without a pool, the
    /// bytes this backend keeps between calls.
    pub fn device_bytes(&self) -> u64 {
        self.dev
            .pool
            .used_bytes()
            .unwrap_or_else(|| self.resident_bytes())
    }

    /// Bytes copied from the host to the device so far through the staged (or page-locked)
    /// uploads: a/b/c, witnesses, scalars and bases; a difference of two readings is what the
    /// calls between them moved.
    pub fn uploaded_bytes(&self) -> u64 {
        self.dev.uploaded.load(Ordering::Relaxed)
    }

    /// The most device bytes in buffers at once since [`CudaBackend::reset_peak_device_bytes`]
    /// (the memory pool's high-water mark; `None` without a pool).
    pub fn peak_device_bytes(&self) -> Option<u64> {
        self.dev.pool.peak_used_bytes()
    }

    /// Starts [`CudaBackend::peak_device_bytes`] again from the bytes in use now (after the
    /// streams' frees have passed).
    pub fn reset_peak_device_bytes(&self) -> Result<()> {
        self.dev.synchronize()?;
        self.dev
            .pool
            .reset_peak()
            .map_err(super::device::drv("cuMemPoolSetAttribute"))?;
        Ok(())
    }

    pub(super) fn cap(&self) -> u64 {
        self.cap_bytes.load(Ordering::Relaxed).min(self.limit_bytes)
    }

    pub(super) fn state(&self) -> GpuResult<MutexGuard<'_, State>> {
        self.state
            .lock()
            .map_err(|_| GpuError::Internal("device state lock poisoned".into()))
    }

    pub(super) fn fall_back(&self, what: &'static str, why: &GpuError) {
        self.fallbacks.fetch_add(1, Ordering::Relaxed);
        tracing::warn!(
            device = self.dev.ordinal,
            call = what,
            reason = %why,
            "running on the CPU"
        );
    }

    /// Page-locks the memory of `v` in place (the whole pages around it), so that uploads from it
    /// DMA straight from `v` instead of through the staging copy (the copies were most of a
    /// partition's host work). Worth it for buffers that are reused: registering 8 GiB took 661 ms
    /// on the H200 host, unregistering 206 ms, against 153 ms of copies per 2^26 partition
    /// (BENCHMARKS.md, "H200 — GPU knob defaults"). A range that overlaps a registered one is an
    /// error.
    ///
    /// # Safety
    /// The memory of `v` must stay allocated, at the same address, until the returned
    /// registration drops: no `Vec` holding it may grow past its capacity or be freed first.
    /// The pages around `v` are locked too, so they must belong to the same allocation or to
    /// memory that outlives the registration (true for large `Vec`s, which get their own pages).
    /// Staged uploads from `v` hold the registry's read lock until their DMA is done, but other
    /// copies (a per-call NTT's, a download into `v`) do not: drop the registration only when
    /// no backend call on another thread is using `v`.
    pub unsafe fn register_host<T>(&self, v: &[T]) -> GpuResult<HostRegistration> {
        // SAFETY: the caller's contract is `register`'s.
        unsafe { super::pinned::register(&self.dev.ctx, v.as_ptr() as usize, size_of_val(v)) }
    }

    /// Page-locks `pk`'s large queries in place, once per key (kept with the key, unlocked
    /// before its points are freed), so that MSMs whose bases stream from the host (a key the
    /// device cannot hold, `gpu.memory_limit`) copy them by DMA without the staging. Returns
    /// the bytes page-locked for it (0 when already done or nothing was large enough).
    pub fn pin_key_host(&self, pk: &crate::ProvingKey) -> u64 {
        fn range<T>(what: &'static str, v: &[T]) -> (&'static str, usize, usize) {
            (what, v.as_ptr() as usize, size_of_val(v))
        }
        let mut made = 0u64;
        let list = [
            range("h", &pk.h),
            range("l", &pk.l),
            range("a", &pk.a),
            range("b_g1", &pk.b_g1),
            range("b_g2", &pk.b_g2),
        ];
        pk.attachment(|| {
            let t = std::time::Instant::now();
            let pins = super::pinned::pin_queries(&self.dev.ctx, &list);
            made = pins.0.iter().map(|r| r.bytes() as u64).sum();
            tracing::info!(
                key = pk.id(),
                bytes = made,
                seconds = t.elapsed().as_secs_f64(),
                "key page-locked for streamed MSMs"
            );
            Box::new(pins)
        });
        made
    }

    /// Forward NTT of `v` (length a power of two up to 2^28) in natural order on both sides, as
    /// [`Domain::ntt`].
    pub fn ntt(&self, v: &mut [Scalar]) -> Result<()> {
        let log_n = v.len().trailing_zeros();
        if !v.len().is_power_of_two() || log_n > MAX_GPU_LOG_N {
            return Err(Error::LengthMismatch {
                what: "GPU NTT length (a power of two up to 2^28)",
                left: v.len(),
                right: 1 << log_n.min(MAX_GPU_LOG_N),
            });
        }
        let mut st = self.state()?;
        let tw = st.ensure_twiddles(&self.dev, self.cap(), log_n, 32u64 << log_n)?;
        Ok(self.dev.ntt_natural(v, tw, log_n)?)
    }

    /// Milliseconds (CUDA events) of `reps` forward 2^log_n NTTs on device-resident data
    /// (powers of a random element), after one warm-up.
    pub fn ntt_timing(&self, log_n: u32, reps: usize) -> Result<Vec<f64>> {
        if log_n == 0 || log_n > MAX_GPU_LOG_N {
            return Err(Error::LengthMismatch {
                what: "GPU NTT timing size (log2 in 1..=28)",
                left: log_n as usize,
                right: MAX_GPU_LOG_N as usize,
            });
        }
        let mut st = self.state()?;
        let tw = st.ensure_twiddles(&self.dev, self.cap(), log_n, 32u64 << log_n)?;
        Ok(self.dev.ntt_timing(tw, log_n, reps)?)
    }
}

impl Backend for CudaBackend {
    fn name(&self) -> String {
        format!("cuda:{}", self.dev.ordinal)
    }

    fn compute_h(
        &self,
        domain: &Domain,
        a: &mut Vec<Scalar>,
        b: &mut Vec<Scalar>,
        c: &mut Vec<Scalar>,
    ) -> Result<()> {
        let n = domain.size();
        for v in [&*a, &*b, &*c] {
            if v.len() > n {
                return Err(Error::LengthMismatch {
                    what: "constraint evaluations vs domain",
                    left: v.len(),
                    right: n,
                });
            }
        }
        if domain.log_size() > MAX_GPU_LOG_N {
            return domain.compute_h(a, b, c);
        }
        match self.try_compute_h(domain, a, b, c) {
            Ok(()) => Ok(()),
            Err(e) if e.is_out_of_memory() => {
                self.fall_back("compute_h", &e);
                domain.compute_h(a, b, c)
            }
            Err(e) => Err(e.into()),
        }
    }

    fn msm_g1(
        &self,
        bases: Bases<'_, G1Affine>,
        scalars: &[Scalar],
        density: Option<&Density>,
    ) -> Result<G1Projective> {
        self.msm::<host::G1>(
            bases,
            scalars,
            density,
            "msm_g1",
            crate::groth16::msm::msm_g1,
        )
    }

    fn msm_g2(
        &self,
        bases: Bases<'_, G2Affine>,
        scalars: &[Scalar],
        density: Option<&Density>,
    ) -> Result<G2Projective> {
        self.msm::<host::G2>(
            bases,
            scalars,
            density,
            "msm_g2",
            crate::groth16::msm::msm_g2,
        )
    }

    fn device_bytes(&self) -> Option<u64> {
        Some(CudaBackend::device_bytes(self))
    }

    fn resident_key_bytes(&self, key_id: u64) -> u64 {
        self.state().map_or(0, |st| {
            st.bases
                .iter()
                .filter(|(k, _)| k.0 == key_id)
                .map(|(_, r)| r.points.num_bytes() as u64)
                .sum()
        })
    }

    fn device_memory(&self) -> Option<(u64, u64)> {
        self.dev.memory().ok()
    }

    fn evict_key(&self, key_id: u64) -> u64 {
        let Ok(mut st) = self.state() else {
            return 0;
        };
        let mut freed = 0;
        st.bases.retain(|k, r| {
            let keep = k.0 != key_id;
            if !keep {
                freed += r.points.num_bytes() as u64;
            }
            keep
        });
        freed
    }
}

/// Stores `value` in a host-side NTT knob's slot if `o` (the defaults with that knob set) passes
/// the checks the config applies.
fn set_knob(
    o: crate::gpu::options::GpuOptions,
    slot: &std::sync::atomic::AtomicU32,
    value: u32,
) -> Result<()> {
    if let Some((key, why)) = o.problem() {
        return Err(Error::Backend {
            backend: "cuda",
            reason: format!("{key}: {why}"),
        });
    }
    slot.store(value, Ordering::Relaxed);
    Ok(())
}
