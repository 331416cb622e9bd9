//! The CUDA backend: opens a device, loads the NVRTC-compiled kernels, keeps twiddles and proving
//! key bases resident, and runs H and the G1 and G2 MSMs there. A device memory ledger sends any
//! call that does not fit to the CPU (counted, never a crash). The engine sends B_G2 here only
//! when `bg2.device = "gpu"`; by default it stays on the CPU actor.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use cudarc::driver::sys::CUresult;
use cudarc::driver::{CudaContext, CudaFunction, CudaSlice, CudaStream, DriverError};
use group::Group;

use super::host::{self, MsmShape, FR_LIMBS, MIN_GPU_MSM};
use super::kernels;
use crate::backend::{Backend, Bases, Query};
use crate::cs::Density;
use crate::domain::Domain;
use crate::error::{Error, Result};

/// Launches kernel `$func` of `$dev` (a `&Device`) with a 1-D grid; every argument must be a
/// reference to a value that outlives the statement (a local, a buffer or a view).
macro_rules! launch {
    ($dev:expr, $func:ident, $grid:expr, $block:expr, $smem:expr; $($arg:expr),* $(,)?) => {{
        let dev: &$crate::gpu::cuda::Device = $dev;
        launch!(@fn dev, &dev.k.$func, stringify!($func), $grid, $block, $smem; $($arg),*)
    }};
    // A kernel given as a `&CudaFunction` and its name for errors.
    (@fn $dev:expr, $f:expr, $name:expr, $grid:expr, $block:expr, $smem:expr; $($arg:expr),* $(,)?) => {{
        use cudarc::driver::PushKernelArg as _;
        let dev: &$crate::gpu::cuda::Device = $dev;
        let cfg = cudarc::driver::LaunchConfig {
            grid_dim: (($grid) as u32, 1, 1),
            block_dim: (($block) as u32, 1, 1),
            shared_mem_bytes: ($smem) as u32,
        };
        let mut b = dev.stream.launch_builder($f);
        $( b.arg($arg); )*
        // SAFETY: the argument list follows the kernel's signature in kernels/*.cu
        // (kernels/NOTES.md), and the caller sized every buffer for this grid.
        unsafe { b.launch(cfg) }
            .map(|_| ())
            .map_err($crate::gpu::cuda::drv($name))
    }};
}

mod msm;
mod ntt;
mod staging;

use staging::Staging;

/// Largest NTT the kernels take (scale tables index positions below 2^28).
const MAX_GPU_LOG_N: u32 = 28;

/// Why a device call did not finish.
pub(crate) enum Fail {
    /// Not enough device memory: the call goes to the CPU.
    OutOfMemory(String),
    /// Any other failure.
    Error(Error),
}

/// Device result.
pub(crate) type DResult<T> = std::result::Result<T, Fail>;

fn backend_err(reason: String) -> Error {
    Error::Backend {
        backend: "cuda",
        reason,
    }
}

/// Maps a driver error of `what` to [`Fail`] (out of memory stays distinguishable).
pub(crate) fn drv(what: &'static str) -> impl Fn(DriverError) -> Fail {
    move |e| {
        if e.0 == CUresult::CUDA_ERROR_OUT_OF_MEMORY {
            Fail::OutOfMemory(format!("{what}: {e:?}"))
        } else {
            Fail::Error(backend_err(format!("{what}: {e:?}")))
        }
    }
}

/// The kernels the backend launches.
pub(crate) struct Kernels {
    pub ntt_pass: CudaFunction,
    pub ntt_coset_h: CudaFunction,
    pub fr_bitrev: CudaFunction,
    pub fr_powers: CudaFunction,
    pub msm_count: CudaFunction,
    pub msm_scatter: CudaFunction,
    pub scan_block: CudaFunction,
    pub scan_add: CudaFunction,
    pub g1: GroupKernels,
    pub g2: GroupKernels,
}

/// The MSM kernels that depend on the group (kernels/msm.cu, one set per group).
pub(crate) struct GroupKernels {
    pub accumulate: CudaFunction,
    pub finalize: CudaFunction,
    pub reduce_level: CudaFunction,
    pub ones: CudaFunction,
    pub sum: CudaFunction,
}

/// A group with device kernels.
pub(crate) trait DeviceGroup: host::GpuGroup {
    /// Its kernel set.
    fn kernels(k: &Kernels) -> &GroupKernels;
}

impl DeviceGroup for host::G1 {
    fn kernels(k: &Kernels) -> &GroupKernels {
        &k.g1
    }
}

impl DeviceGroup for host::G2 {
    fn kernels(k: &Kernels) -> &GroupKernels {
        &k.g2
    }
}

/// An open device: context, the one stream all work goes on, and the loaded kernels.
pub(crate) struct Device {
    pub ctx: Arc<CudaContext>,
    pub stream: Arc<CudaStream>,
    pub k: Kernels,
    /// Threads of this device's own for its host work (density filtering, staging copies) when
    /// `BATON_GPU_HOST_THREADS` is set; otherwise rayon's global pool. Measured on the 2-GPU
    /// host (BENCHMARKS.md), 8 threads per device gave 19 % fewer proofs per hour with one GPU
    /// than the global pool, so the global pool is the default. Only work that takes no lock
    /// runs on it: a pool thread blocked on the state mutex could be the one whose stack holds
    /// it (rayon threads pick up queued jobs while they wait).
    pub host_pool: Option<rayon::ThreadPool>,
}

impl Device {
    /// Runs `f` on the host pool, if there is one. `f` must not take the state lock.
    pub(crate) fn on_host<R: Send>(&self, f: impl FnOnce() -> R + Send) -> R {
        match &self.host_pool {
            Some(p) => p.install(f),
            None => f(),
        }
    }
}

/// Twiddles `W^e`, e < 2^(log_tw − 1), serving every NTT up to 2^log_tw.
pub(crate) struct Twiddles {
    pub log_tw: u32,
    pub table: CudaSlice<u64>,
}

/// The H pipeline's per-size constants: scale tables (1/n)·g^i and (1/n)·g^−i, and 1/Z.
pub(crate) struct HTables {
    pub fwd: CudaSlice<u64>,
    pub inv: CudaSlice<u64>,
    pub zinv: CudaSlice<u64>,
}

type BasesKey = (u64, Query, usize, usize);

struct Resident {
    points: CudaSlice<u64>,
    last_use: u64,
}

/// Pinned staging buffers: not yet allocated, allocated, or refused by the driver.
#[derive(Default)]
enum StagingSlot {
    #[default]
    Untried,
    Ready(Box<Staging>),
    Unavailable,
}

#[derive(Default)]
struct State {
    staging: StagingSlot,
    twiddles: Option<Twiddles>,
    tables: HashMap<u32, HTables>,
    bases: HashMap<BasesKey, Resident>,
    tick: u64,
}

impl State {
    fn resident_bytes(&self) -> u64 {
        let tw = self.twiddles.as_ref().map_or(0, |t| t.table.num_bytes());
        let tabs: usize = self.tables.len() * (2 * 32768 + 1) * 32;
        let bases: usize = self.bases.values().map(|r| r.points.num_bytes()).sum();
        (tw + tabs + bases) as u64
    }
}

/// The CUDA backend on one device.
pub struct CudaBackend {
    device: usize,
    dev: Device,
    arch: String,
    state: Mutex<State>,
    fallbacks: AtomicU64,
    cap_bytes: AtomicU64,
}

/// `BATON_GPU_HOST_THREADS`, if set to a positive count.
fn host_threads() -> Option<usize> {
    std::env::var("BATON_GPU_HOST_THREADS")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .filter(|&n| n > 0)
}

/// Free device memory kept back from every call.
fn margin_bytes(total: u64) -> u64 {
    (total / 64).max(256 << 20)
}

impl CudaBackend {
    /// Opens `device`, compiles (or loads from the cache) the kernels for its architecture and
    /// loads them. Fails cleanly without a driver, without devices or on a bad ordinal.
    pub fn new(device: usize) -> Result<Self> {
        // SAFETY: only probes whether libcuda can be opened; nothing else touches the driver
        // before it (CudaContext::new panics without the library).
        if !unsafe { cudarc::driver::sys::is_culib_present() } {
            return Err(backend_err("no CUDA driver (libcuda) found".into()));
        }
        let count = CudaContext::device_count()
            .map_err(|e| backend_err(format!("cannot count devices: {e:?}")))?;
        if device >= count.max(0) as usize {
            return Err(backend_err(format!(
                "device {device} requested, {count} present"
            )));
        }
        let ctx = CudaContext::new(device)
            .map_err(|e| backend_err(format!("cannot open device {device}: {e:?}")))?;
        let (major, minor) = ctx
            .compute_capability()
            .map_err(|e| backend_err(format!("compute capability: {e:?}")))?;
        let arch = format!("compute_{major}{minor}");
        let ptx = kernels::compile_ptx(&arch)?;
        let module = ctx
            .load_module(ptx)
            .map_err(|e| backend_err(format!("loading the kernels for {arch}: {e:?}")))?;
        let f = |name: &str| {
            module
                .load_function(name)
                .map_err(|e| backend_err(format!("kernel {name}: {e:?}")))
        };
        // The kernels of one group: G1's have no suffix, G2's end in `_g2`.
        let group = |sfx: &str| -> Result<GroupKernels> {
            Ok(GroupKernels {
                accumulate: f(&format!("msm_accumulate{sfx}"))?,
                finalize: f(&format!("msm_finalize{sfx}"))?,
                reduce_level: f(&format!("msm_reduce_level{sfx}"))?,
                ones: f(&format!("msm_ones{sfx}"))?,
                sum: f(&format!("ec_sum{sfx}"))?,
            })
        };
        let k = Kernels {
            ntt_pass: f("ntt_pass")?,
            ntt_coset_h: f("ntt_coset_h")?,
            fr_bitrev: f("fr_bitrev")?,
            fr_powers: f("fr_powers")?,
            msm_count: f("msm_count")?,
            msm_scatter: f("msm_scatter")?,
            scan_block: f("scan_block")?,
            scan_add: f("scan_add")?,
            g1: group("")?,
            g2: group("_g2")?,
        };
        let stream = ctx.default_stream();
        let host_pool = match host_threads() {
            Some(n) => Some(
                rayon::ThreadPoolBuilder::new()
                    .num_threads(n)
                    .thread_name(move |i| format!("baton-cuda{device}-host{i}"))
                    .build()
                    .map_err(|e| backend_err(format!("host thread pool: {e}")))?,
            ),
            None => None,
        };
        tracing::info!(device, arch = %arch, "CUDA backend ready");
        Ok(CudaBackend {
            device,
            dev: Device {
                ctx,
                stream,
                k,
                host_pool,
            },
            arch,
            state: Mutex::new(State::default()),
            fallbacks: AtomicU64::new(0),
            cap_bytes: AtomicU64::new(u64::MAX),
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

    /// Drops every resident buffer.
    pub fn clear_resident(&self) -> Result<()> {
        let mut st = self.state().map_err(fail_to_err)?;
        *st = State::default();
        Ok(())
    }

    /// Caps the device bytes this backend holds (resident plus a call's scratch); `None` lifts
    /// the cap. For tests of the CPU fallback and for sharing a device.
    pub fn set_memory_cap_bytes(&self, cap: Option<u64>) {
        self.cap_bytes
            .store(cap.unwrap_or(u64::MAX), Ordering::Relaxed);
    }

    fn state(&self) -> DResult<MutexGuard<'_, State>> {
        self.state
            .lock()
            .map_err(|_| Fail::Error(backend_err("device state lock poisoned".into())))
    }

    /// Evicts least recently used bases (never `keep`) until `need` more bytes fit.
    fn make_room(&self, st: &mut State, need: u64, keep: Option<&BasesKey>) -> DResult<()> {
        loop {
            self.dev.stream.synchronize().map_err(drv("synchronize"))?;
            let (free, total) = self.dev.ctx.mem_get_info().map_err(drv("mem_get_info"))?;
            let cap = self.cap_bytes.load(Ordering::Relaxed);
            let under_cap = st.resident_bytes().saturating_add(need) <= cap;
            if under_cap && need.saturating_add(margin_bytes(total as u64)) <= free as u64 {
                return Ok(());
            }
            let victim = st
                .bases
                .iter()
                .filter(|(k, _)| Some(*k) != keep)
                .min_by_key(|(_, r)| r.last_use)
                .map(|(k, _)| *k);
            match victim {
                Some(k) => {
                    st.bases.remove(&k);
                }
                None => {
                    return Err(Fail::OutOfMemory(format!(
                        "needs {need} bytes, {free} free of {total}, cap {cap}"
                    )))
                }
            }
        }
    }

    fn fall_back(&self, what: &'static str, why: &str) {
        self.fallbacks.fetch_add(1, Ordering::Relaxed);
        tracing::warn!(
            device = self.device,
            call = what,
            reason = why,
            "running on the CPU"
        );
    }

    fn try_compute_h(
        &self,
        domain: &Domain,
        a: &mut Vec<Scalar>,
        b: &[Scalar],
        c: &[Scalar],
    ) -> DResult<()> {
        let log_n = domain.log_size();
        let n = domain.size();
        let mut guard = self.state()?;
        let st: &mut State = &mut guard;
        let tw_need = match &st.twiddles {
            Some(t) if t.log_tw >= log_n => 0,
            _ => 16u64 << log_n,
        };
        let tab_need = if st.tables.contains_key(&log_n) {
            0
        } else {
            3 << 20
        };
        if tw_need > 0 {
            st.twiddles = None;
        }
        self.make_room(st, 3 * 32 * n as u64 + tw_need + tab_need, None)?;
        if tw_need > 0 {
            st.twiddles = Some(self.dev.twiddles(log_n)?);
        }
        if tab_need > 0 {
            let t = self.dev.h_tables(domain)?;
            st.tables.insert(log_n, t);
        }
        let mut bufs = Vec::with_capacity(3);
        for v in [&a[..], b, c] {
            let mut d = self
                .dev
                .stream
                .alloc_zeros::<u64>(n * FR_LIMBS)
                .map_err(drv("alloc abc"))?;
            if !v.is_empty() {
                let staging = self.staging(&mut st.staging);
                self.dev.upload_staged(
                    staging,
                    host::scalars_as_u64(v),
                    &mut d.slice_mut(..),
                    "upload abc",
                )?;
            }
            bufs.push(d);
        }
        let (Some(tw), Some(tabs)) = (st.twiddles.as_ref(), st.tables.get(&log_n)) else {
            return Err(Fail::Error(backend_err("twiddles missing".into())));
        };
        let [da, db, dc] = &mut bufs[..] else {
            return Err(Fail::Error(backend_err("buffer count".into())));
        };
        self.dev.h_pipeline(da, db, dc, tw, tabs, log_n)?;
        // From here `a` changes, so no failure may fall back to the CPU (which would read it).
        let hard = |e: DriverError| Fail::Error(backend_err(format!("download h: {e:?}")));
        self.dev.stream.synchronize().map_err(hard)?;
        a.resize(n - 1, Scalar::from(0u64));
        let out = db.slice(0..(n - 1) * FR_LIMBS);
        let staging = self.staging(&mut st.staging);
        self.dev
            .download_staged(staging, &out, host::scalars_as_u64_mut(a), "download h")
            .map_err(|f| Fail::Error(fail_to_err(f)))
    }

    /// A new device buffer holding `src`.
    fn upload_new(
        &self,
        slot: &mut StagingSlot,
        src: &[u64],
        what: &'static str,
    ) -> DResult<CudaSlice<u64>> {
        // SAFETY: `upload` writes all `src.len()` elements before any kernel reads them.
        let mut d = unsafe { self.dev.stream.alloc::<u64>(src.len()) }.map_err(drv(what))?;
        let staging = self.staging(slot);
        self.dev
            .upload_staged(staging, src, &mut d.slice_mut(..), what)?;
        Ok(d)
    }

    /// The staging buffers, allocated on first use; `None` (pageable copies) if that failed.
    fn staging<'s>(&self, slot: &'s mut StagingSlot) -> Option<&'s mut Staging> {
        if matches!(slot, StagingSlot::Untried) {
            *slot = match self.dev.staging() {
                Ok(s) => StagingSlot::Ready(Box::new(s)),
                Err(f) => {
                    tracing::warn!(
                        device = self.device,
                        reason = %fail_to_err(f),
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

    fn try_msm<G: DeviceGroup>(
        &self,
        bases: &Bases<'_, G::Affine>,
        used: &[Scalar],
    ) -> DResult<G::Proj> {
        let n = used.len();
        let c = host::msm_window(n);
        let chunk = MsmShape::max_points(c).min(n);
        let scratch = MsmShape::for_group::<G>(chunk, c).scratch_bytes(chunk) + 32 * n as u64;
        let limbs = G::AFFINE_LIMBS;
        let points = &bases.points[..n];
        let base_bytes = (points.len() * limbs * 8) as u64;
        let mut guard = self.state()?;
        let st: &mut State = &mut guard;
        st.tick += 1;
        let tick = st.tick;
        let cacheable = bases.key_id != 0 && bases.query != Query::Other;
        let key: BasesKey = (bases.key_id, bases.query, bases.offset, bases.points.len());
        let temp;
        let resident = if cacheable {
            if st.bases.contains_key(&key) {
                self.make_room(st, scratch, Some(&key))?;
            } else {
                let all = bases.points;
                let bytes = (all.len() * limbs * 8) as u64;
                self.make_room(st, bytes + scratch, None)?;
                let d = self.upload_new(&mut st.staging, G::affine_limbs(all), "upload bases")?;
                st.bases.insert(
                    key,
                    Resident {
                        points: d,
                        last_use: tick,
                    },
                );
            }
            let Some(r) = st.bases.get_mut(&key) else {
                return Err(Fail::Error(backend_err("resident bases vanished".into())));
            };
            r.last_use = tick;
            &r.points
        } else {
            self.make_room(st, base_bytes + scratch, None)?;
            temp = self.upload_new(&mut st.staging, G::affine_limbs(points), "upload bases")?;
            &temp
        };
        let scalars = self.upload_new(
            &mut st.staging,
            host::scalars_as_u64(used),
            "upload scalars",
        )?;
        let mut acc = G::Proj::identity();
        let mut start = 0;
        while start < n {
            let len = chunk.min(n - start);
            let b = resident.slice(start * limbs..(start + len) * limbs);
            let s = scalars.slice(start * FR_LIMBS..(start + len) * FR_LIMBS);
            let out = self.dev.msm::<G>(&b, &s, len, c)?;
            acc += host::combine_windows::<G>(&out, c);
            start += len;
        }
        Ok(acc)
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
        let mut st = self.state().map_err(fail_to_err)?;
        let tw = self.ensure_twiddles(&mut st, log_n).map_err(fail_to_err)?;
        self.dev.ntt_natural(v, tw, log_n).map_err(fail_to_err)
    }

    /// Milliseconds (CUDA events) of `reps` forward 2^log_n NTTs on device-resident data
    /// (powers of a random element), after one warm-up.
    pub fn ntt_timing(&self, log_n: u32, reps: usize) -> Result<Vec<f64>> {
        if log_n == 0 || log_n > MAX_GPU_LOG_N {
            return Err(backend_err(format!("NTT size 2^{log_n} out of range")));
        }
        let mut st = self.state().map_err(fail_to_err)?;
        let tw = self.ensure_twiddles(&mut st, log_n).map_err(fail_to_err)?;
        self.dev.ntt_timing(tw, log_n, reps).map_err(fail_to_err)
    }

    /// Twiddles serving 2^log_n, made (with room for one 2^log_n buffer) when missing.
    fn ensure_twiddles<'s>(&self, st: &'s mut State, log_n: u32) -> DResult<&'s Twiddles> {
        if !st.twiddles.as_ref().is_some_and(|t| t.log_tw >= log_n) {
            st.twiddles = None;
            self.make_room(st, (16u64 << log_n) + (32u64 << log_n), None)?;
            st.twiddles = Some(self.dev.twiddles(log_n)?);
        }
        st.twiddles
            .as_ref()
            .ok_or_else(|| Fail::Error(backend_err("no twiddles".into())))
    }
}

fn fail_to_err(f: Fail) -> Error {
    match f {
        Fail::OutOfMemory(why) => backend_err(format!("out of device memory: {why}")),
        Fail::Error(e) => e,
    }
}

/// The scalars of the variables present in `density`, with the CPU backend's length checks.
fn used_scalars<'a>(
    points: usize,
    scalars: &'a [Scalar],
    density: Option<&Density>,
) -> Result<std::borrow::Cow<'a, [Scalar]>> {
    let used = match density {
        None => std::borrow::Cow::Borrowed(scalars),
        Some(d) => {
            if d.len() != scalars.len() {
                return Err(Error::LengthMismatch {
                    what: "density vs scalars",
                    left: d.len(),
                    right: scalars.len(),
                });
            }
            std::borrow::Cow::Owned(d.filter(scalars))
        }
    };
    if points < used.len() {
        return Err(Error::LengthMismatch {
            what: "MSM bases vs used scalars",
            left: points,
            right: used.len(),
        });
    }
    Ok(used)
}

impl Backend for CudaBackend {
    fn name(&self) -> String {
        format!("cuda:{}", self.device)
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
            Err(Fail::OutOfMemory(why)) => {
                self.fall_back("compute_h", &why);
                domain.compute_h(a, b, c)
            }
            Err(Fail::Error(e)) => Err(e),
        }
    }

    fn msm_g1(
        &self,
        bases: Bases<'_, G1Affine>,
        scalars: &[Scalar],
        density: Option<&Density>,
    ) -> Result<G1Projective> {
        self.msm::<host::G1>(bases, scalars, density, "msm_g1", crate::msm::msm_g1)
    }

    fn msm_g2(
        &self,
        bases: Bases<'_, G2Affine>,
        scalars: &[Scalar],
        density: Option<&Density>,
    ) -> Result<G2Projective> {
        self.msm::<host::G2>(bases, scalars, density, "msm_g2", crate::msm::msm_g2)
    }
}

/// The CPU MSM a device MSM falls back to.
type CpuMsm<G> = fn(
    &[<G as host::GpuGroup>::Affine],
    &[Scalar],
    Option<&Density>,
) -> Result<<G as host::GpuGroup>::Proj>;

impl CudaBackend {
    /// An MSM of group `G` on the device, on `cpu` below [`MIN_GPU_MSM`] used scalars or when
    /// the device memory does not fit it.
    fn msm<G: DeviceGroup>(
        &self,
        bases: Bases<'_, G::Affine>,
        scalars: &[Scalar],
        density: Option<&Density>,
        what: &'static str,
        cpu: CpuMsm<G>,
    ) -> Result<G::Proj>
    where
        G::Proj: Send,
    {
        let used = self
            .dev
            .on_host(|| used_scalars(bases.points.len(), scalars, density))?;
        if used.len() < MIN_GPU_MSM {
            return cpu(bases.points, scalars, density);
        }
        match self.try_msm::<G>(&bases, &used) {
            Ok(p) => Ok(p),
            Err(Fail::OutOfMemory(why)) => {
                self.fall_back(what, &why);
                cpu(bases.points, scalars, density)
            }
            Err(Fail::Error(e)) => Err(e),
        }
    }
}
