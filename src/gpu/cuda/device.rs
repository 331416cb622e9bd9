//! One open device: its context, the stream all kernels go on, the loaded kernels, and the
//! only way to reach them: checked launches ([`Device::launch`]) and allocations that name
//! their size when the device is out of memory.

use std::sync::Arc;

use cudarc::driver::{
    CudaContext, CudaFunction, CudaStream, DriverError, LaunchArgs, LaunchConfig,
};

use super::pool::Pool;
use crate::gpu::error::{GpuError, GpuResult};
use crate::gpu::host::{self, GpuGroup};
use crate::gpu::kernels;
use crate::gpu::launch::{launch_checked, Launch};
use crate::gpu::options::{
    CappedHBeside, GpuOptions, HStream, MsmFirstPiece, MsmPieceBuckets, MsmScatter,
    MsmScatterDigits, MsmScatterOrder, WindowRule,
};

/// Maps a driver error of `call` to [`GpuError::Driver`].
pub(crate) fn drv(call: &'static str) -> impl Fn(DriverError) -> GpuError {
    move |e| GpuError::Driver {
        call,
        detail: format!("{e:?}"),
    }
}

/// The kernels the backend launches.
#[derive(Clone)]
pub(crate) struct Kernels {
    pub ntt_pass: CudaFunction,
    pub ntt_pass_r4: CudaFunction,
    pub ntt_coset_h: CudaFunction,
    /// H's combine in two buffers (`ntt_coset_h2`: a·b, then (ab − c)/Z).
    pub ntt_coset_h2: CudaFunction,
    pub fr_bitrev: CudaFunction,
    pub fr_powers: CudaFunction,
    pub msm_count: CudaFunction,
    pub msm_scatter: CudaFunction,
    pub msm_scatter_window: CudaFunction,
    pub msm_count_store: CudaFunction,
    pub msm_scatter_stored: CudaFunction,
    pub msm_nontrivial: CudaFunction,
    pub msm_seg_keys: CudaFunction,
    /// Batch-affine rounds of G1's sorted entries (`gpu.experimental.msm_affine_rounds`).
    pub msm_pairs_count: CudaFunction,
    pub msm_pairs_round: CudaFunction,
    pub msm_pairs_den: CudaFunction,
    pub msm_batch_inverse: CudaFunction,
    pub msm_pairs_finish: CudaFunction,
    pub scan_block: CudaFunction,
    pub scan_add: CudaFunction,
    pub density_popc: CudaFunction,
    pub density_gather: CudaFunction,
    /// A witness packed as bits expanded to plain scalars (`Device::expand_packed`).
    pub packed_expand: CudaFunction,
    /// Sparse a/b/c by coefficient-index width (u8, u16, u32), and the a·b = c check.
    pub spmv: [CudaFunction; 3],
    pub abc_check: CudaFunction,
    pub g1: GroupKernels,
    pub g2: GroupKernels,
}

/// The MSM kernels that depend on the group (kernels/msm.cu, one set per group).
#[derive(Clone)]
pub(crate) struct GroupKernels {
    pub accumulate: CudaFunction,
    /// The long buckets' segments summed a level at a time before `finalize` (`msm_chains`).
    pub chains: CudaFunction,
    pub finalize: CudaFunction,
    /// The two above for a piece that adds to buckets earlier pieces left (`_seeded`).
    pub accumulate_seeded: CudaFunction,
    pub finalize_seeded: CudaFunction,
    pub reduce_level: CudaFunction,
    pub ones: CudaFunction,
    pub sum: CudaFunction,
}

/// A group with device kernels.
pub(crate) trait DeviceGroup: GpuGroup {
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

/// Which of the device's streams.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Lane {
    /// Kernels, downloads, and uploads nothing waits on.
    Compute,
    /// Uploads of partition data, so they overlap the kernels (cudarc orders the kernels that
    /// read a buffer after its upload through the buffer's events).
    Copy,
    /// A device partition's H transforms with `gpu.h_stream = "own"`: the device's highest
    /// priority, beside the witness's MSMs on the compute stream.
    H,
}

/// An open device: context, its streams, and the loaded kernels.
pub(crate) struct Device {
    pub ordinal: usize,
    pub ctx: Arc<CudaContext>,
    /// The pool every buffer comes from (`gpu.memory_pool`).
    pub pool: Pool,
    /// The stream every kernel runs on.
    pub stream: Arc<CudaStream>,
    /// The upload stream of partition data.
    pub copy: Arc<CudaStream>,
    /// The stream of a device partition's H transforms (`gpu.h_stream`): the compute stream's
    /// own `Arc` with `"compute"`, a stream of the highest priority with `"own"`.
    pub h: Arc<CudaStream>,
    /// Whether `h` is a stream of its own (`gpu.h_stream = "own"`): a partition then queues
    /// all of H as soon as a, b, c are up, beside the witness's MSMs.
    pub h_own: bool,
    /// Whether jobs' keys are made resident ahead of their partitions (`gpu.warm_keys`).
    pub warm_keys: bool,
    /// The most device bytes seen in use (sampled at each call's peak).
    pub peak_used: std::sync::atomic::AtomicU64,
    /// Bytes copied host to device through `upload_staged` (staged or page-locked), for the
    /// copy bandwidth a partition needs (`CudaBackend::uploaded_bytes`).
    pub uploaded: std::sync::atomic::AtomicU64,
    pub k: Kernels,
    /// Multiprocessors (the reduction plan sizes its levels by them).
    pub sms: u32,
    /// How the MSM window is chosen (`gpu.msm_window`, `gpu.msm_window_large`).
    pub msm_window: WindowRule,
    /// Pieces an MSM of host scalars is cut into (`gpu.msm_pieces`).
    pub msm_pieces: u32,
    /// How a partition whose key's sets do not all fit resident beside it cuts its MSMs
    /// (`gpu.capped_cut`).
    pub capped_cut: crate::gpu::options::CappedCut,
    /// Whether a partition from device a/b/c spares its recording (`gpu.capped_recording`).
    pub capped_recording: crate::gpu::options::CappedRecording,
    /// Whether every MSM prints its steps' times (`BATON_MSM_PHASES` set when it opened).
    pub msm_phases: bool,
    /// `BATON_UPLOAD_TRACE`: every staged upload prints its DMA and host times (clock.rs).
    pub upload_trace: bool,
    /// Whether the kernels were compiled for the keyless scatter (`gpu.msm_scatter`).
    pub keyless: bool,
    /// Batch-affine rounds before a G1 accumulation (`gpu.experimental.msm_affine_rounds`;
    /// none under `gpu.memory_limit`, whose counts leave their buffers out).
    pub affine_rounds: u32,
    /// Entries a thread of those rounds takes (`gpu.experimental.msm_affine_per`, compiled in).
    pub affine_per: u32,
    /// Whether each round runs as three kernels (`gpu.experimental.msm_affine_split`).
    pub affine_split: bool,
    /// The order of the bucket sort's scatter (`gpu.msm_scatter_order`).
    pub scatter_order: MsmScatterOrder,
    /// Where the window-order scatter takes its digits from (`gpu.msm_scatter_digits`).
    pub scatter_digits: MsmScatterDigits,
    /// Slices of each window of the stored-digit scatter (`gpu.msm_scatter_parts`).
    pub scatter_parts: u32,
    /// Whether an MSM's pieces share their buckets (`gpu.msm_piece_buckets`).
    pub piece_buckets: MsmPieceBuckets,
    /// How the first piece is sized (`gpu.msm_first_piece`).
    pub first_piece: MsmFirstPiece,
    /// Elements (log2) per `ntt_pass` block (`gpu.ntt_block`); host side only, so the GPU
    /// bench may change it between transforms ([`crate::gpu::CudaBackend::set_ntt_block`]).
    pub ntt_block: std::sync::atomic::AtomicU32,
    /// Radix of the `ntt_pass` butterflies (`gpu.ntt_radix`), host side only as the block
    /// ([`crate::gpu::CudaBackend::set_ntt_radix`]).
    pub ntt_radix: std::sync::atomic::AtomicU32,
    /// Columns of an `ntt_pass` block (`gpu.ntt_columns`), host side only as the block
    /// ([`crate::gpu::CudaBackend::set_ntt_columns`]).
    pub ntt_columns: std::sync::atomic::AtomicU32,
    /// Whether the twiddle table is split in two parts (`gpu.ntt_twiddles` for this device's
    /// memory or limit).
    pub twiddles_split: bool,
    /// Threads of this device's own for its host work (density filtering, staging copies) when
    /// `gpu.host_threads` is set; otherwise rayon's global pool. Measured on the 2-GPU host
    /// (BENCHMARKS.md, "H200 — GPU knob defaults"), 8 threads per device gave 19 % fewer proofs per
    /// hour with one GPU than the global pool, so the global pool is the default. Only work that
    /// takes no lock runs on it: a pool thread blocked on the state mutex could be the one whose
    /// stack holds it (rayon threads pick up queued jobs while they wait).
    pub host_pool: Option<rayon::ThreadPool>,
}

impl Device {
    /// Where this device splits a twiddle table of 2^log_tw (0: one part).
    pub(crate) fn twiddle_split(&self, log_tw: u32) -> u32 {
        crate::gpu::plan::twiddle_split(log_tw, self.twiddles_split)
    }

    /// Device bytes of the twiddle table serving NTTs up to 2^log_tw, in this device's layout.
    pub(crate) fn twiddle_bytes(&self, log_tw: u32) -> u64 {
        crate::gpu::plan::twiddle_bytes(log_tw, self.twiddle_split(log_tw))
    }

    /// Opens `ordinal`, compiles (or loads from the cache) the kernels for its architecture with
    /// the knobs of `opts`, and loads them. Returns the device and the architecture.
    pub(crate) fn open(ordinal: usize, opts: &GpuOptions) -> GpuResult<(Self, String)> {
        // SAFETY: only probes whether libcuda can be opened; nothing else touches the driver
        // before it (CudaContext::new panics without the library).
        if !unsafe { cudarc::driver::sys::is_culib_present() } {
            return Err(GpuError::NoDevice {
                reason: "no CUDA driver (libcuda) found".into(),
            });
        }
        let count = CudaContext::device_count().map_err(drv("cuDeviceGetCount"))?;
        if ordinal >= count.max(0) as usize {
            return Err(GpuError::NoDevice {
                reason: format!("device {ordinal} requested, {count} present"),
            });
        }
        let ctx = CudaContext::new(ordinal).map_err(drv("cuCtxCreate"))?;
        let (major, minor) = ctx
            .compute_capability()
            .map_err(drv("compute capability"))?;
        let arch = format!("compute_{major}{minor}");
        let sms = ctx
            .attribute(
                cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
            )
            .map_err(drv("multiprocessor count"))?;
        let ptx = kernels::compile_ptx(&arch, opts)?;
        let module = ctx.load_module(ptx).map_err(drv("cuModuleLoadData"))?;
        let f = |name: &'static str| module.load_function(name).map_err(drv(name));
        // The kernels of one group: G1's have no suffix, G2's end in `_g2`.
        let group = |g2: bool| -> GpuResult<GroupKernels> {
            let pick = |g1: &'static str, g2name: &'static str| f(if g2 { g2name } else { g1 });
            Ok(GroupKernels {
                accumulate: pick("msm_accumulate", "msm_accumulate_g2")?,
                chains: pick("msm_chains", "msm_chains_g2")?,
                finalize: pick("msm_finalize", "msm_finalize_g2")?,
                accumulate_seeded: pick("msm_accumulate_seeded", "msm_accumulate_seeded_g2")?,
                finalize_seeded: pick("msm_finalize_seeded", "msm_finalize_seeded_g2")?,
                reduce_level: pick("msm_reduce_level", "msm_reduce_level_g2")?,
                ones: pick("msm_ones", "msm_ones_g2")?,
                sum: pick("ec_sum", "ec_sum_g2")?,
            })
        };
        let k = Kernels {
            ntt_pass: f("ntt_pass")?,
            ntt_pass_r4: f("ntt_pass_r4")?,
            ntt_coset_h: f("ntt_coset_h")?,
            ntt_coset_h2: f("ntt_coset_h2")?,
            fr_bitrev: f("fr_bitrev")?,
            fr_powers: f("fr_powers")?,
            msm_count: f("msm_count")?,
            msm_scatter: f("msm_scatter")?,
            msm_scatter_window: f("msm_scatter_window")?,
            msm_count_store: f("msm_count_store")?,
            msm_scatter_stored: f("msm_scatter_stored")?,
            msm_nontrivial: f("msm_nontrivial")?,
            msm_seg_keys: f("msm_seg_keys")?,
            msm_pairs_count: f("msm_pairs_count")?,
            msm_pairs_round: f("msm_pairs_round")?,
            msm_pairs_den: f("msm_pairs_den")?,
            msm_batch_inverse: f("msm_batch_inverse")?,
            msm_pairs_finish: f("msm_pairs_finish")?,
            scan_block: f("scan_block")?,
            scan_add: f("scan_add")?,
            density_popc: f("density_popc")?,
            density_gather: f("density_gather")?,
            packed_expand: f("packed_expand")?,
            spmv: [f("spmv_u8")?, f("spmv_u16")?, f("spmv_u32")?],
            abc_check: f("abc_check")?,
            g1: group(false)?,
            g2: group(true)?,
        };
        // Lower is higher: (least, greatest).
        let (_, greatest) = cudarc::driver::result::stream::get_priority_range()
            .map_err(drv("cuCtxGetStreamPriorityRange"))?;
        // The witness's MSMs ahead of H's beside them: a stream of the highest priority.
        let stream = match opts.capped_h_beside == CappedHBeside::WitnessFirst {
            true => ctx
                .new_stream_with_priority(greatest)
                .map_err(drv("cuStreamCreateWithPriority"))?,
            false => ctx.default_stream(),
        };
        // A second stream puts cudarc in multi-stream mode: every buffer then carries events
        // that order its uses across the two streams.
        let copy = ctx.new_stream().map_err(drv("cuStreamCreate"))?;
        let h = match opts.h_stream {
            HStream::Compute => stream.clone(),
            HStream::Own => ctx
                .new_stream_with_priority(greatest)
                .map_err(drv("cuStreamCreateWithPriority"))?,
        };
        let host_pool = match opts.host_threads {
            Some(n) => Some(
                rayon::ThreadPoolBuilder::new()
                    .num_threads(n)
                    .thread_name(move |i| format!("baton-cuda{ordinal}-host{i}"))
                    .build()
                    .map_err(|e| GpuError::Internal(format!("host thread pool: {e}")))?,
            ),
            None => None,
        };
        let pool = Pool::open(&ctx, opts.memory_pool).map_err(drv("memory pool"))?;
        let (_, total) = ctx.mem_get_info().map_err(drv("cuMemGetInfo"))?;
        let memory = opts.memory_limit.unwrap_or(u64::MAX).min(total as u64);
        let dev = Device {
            ordinal,
            pool,
            ctx,
            stream,
            copy,
            h,
            h_own: opts.h_stream == HStream::Own,
            warm_keys: opts.warm_keys,
            peak_used: std::sync::atomic::AtomicU64::new(0),
            uploaded: std::sync::atomic::AtomicU64::new(0),
            k,
            sms: sms.max(1) as u32,
            msm_window: opts.window_rule(),
            msm_pieces: opts.msm_pieces,
            capped_cut: opts.capped_cut,
            capped_recording: opts.capped_recording,
            msm_phases: std::env::var_os("BATON_MSM_PHASES").is_some(),
            upload_trace: std::env::var_os("BATON_UPLOAD_TRACE").is_some(),
            keyless: opts.msm_scatter == MsmScatter::Starts,
            affine_rounds: match opts.memory_limit {
                Some(_) => 0,
                None => opts.msm_affine_rounds,
            },
            affine_per: opts.msm_affine_per,
            affine_split: opts.msm_affine_split,
            scatter_order: opts.msm_scatter_order,
            scatter_digits: opts.msm_scatter_digits,
            scatter_parts: opts.msm_scatter_parts,
            piece_buckets: opts.msm_piece_buckets,
            first_piece: opts.msm_first_piece,
            ntt_block: std::sync::atomic::AtomicU32::new(opts.ntt_block),
            ntt_radix: std::sync::atomic::AtomicU32::new(opts.ntt_radix),
            ntt_columns: std::sync::atomic::AtomicU32::new(opts.ntt_columns),
            twiddles_split: opts.ntt_twiddles.split(memory),
            host_pool,
        };
        Ok((dev, arch))
    }

    /// This device with a compute and a copy stream of their own (its H stream the compute
    /// one): an MSM queued on it runs beside this device's work, the kernels, pool and knobs
    /// shared. Its counters start at zero; the caller adds them to this device's.
    pub(crate) fn twin(&self) -> GpuResult<Device> {
        let stream = self.ctx.new_stream().map_err(drv("cuStreamCreate"))?;
        let copy = self.ctx.new_stream().map_err(drv("cuStreamCreate"))?;
        let atomic32 = |a: &std::sync::atomic::AtomicU32| {
            std::sync::atomic::AtomicU32::new(a.load(std::sync::atomic::Ordering::Relaxed))
        };
        Ok(Device {
            ordinal: self.ordinal,
            ctx: self.ctx.clone(),
            pool: self.pool.clone(),
            h: stream.clone(),
            stream,
            copy,
            h_own: false,
            warm_keys: self.warm_keys,
            peak_used: std::sync::atomic::AtomicU64::new(0),
            uploaded: std::sync::atomic::AtomicU64::new(0),
            k: self.k.clone(),
            sms: self.sms,
            msm_window: self.msm_window,
            msm_pieces: self.msm_pieces,
            capped_cut: self.capped_cut,
            capped_recording: self.capped_recording,
            msm_phases: self.msm_phases,
            upload_trace: self.upload_trace,
            keyless: self.keyless,
            affine_rounds: self.affine_rounds,
            affine_per: self.affine_per,
            affine_split: self.affine_split,
            scatter_order: self.scatter_order,
            scatter_digits: self.scatter_digits,
            scatter_parts: self.scatter_parts,
            piece_buckets: self.piece_buckets,
            first_piece: self.first_piece,
            ntt_block: atomic32(&self.ntt_block),
            ntt_radix: atomic32(&self.ntt_radix),
            ntt_columns: atomic32(&self.ntt_columns),
            twiddles_split: self.twiddles_split,
            host_pool: None,
        })
    }

    /// Runs `f` on the host pool, if there is one. `f` must not take the state lock.
    pub(crate) fn on_host<R: Send>(&self, f: impl FnOnce() -> R + Send) -> R {
        match &self.host_pool {
            Some(p) => p.install(f),
            None => f(),
        }
    }

    /// Launches `f` with the shape of a checked `launch` (see `gpu::launch`); `push` adds the
    /// arguments in the kernel's order, the buffers the check was made for.
    pub(crate) fn launch<'a>(
        &'a self,
        f: &'a CudaFunction,
        launch: crate::gpu::error::GpuResult<Launch>,
        push: impl FnOnce(&mut LaunchArgs<'a>),
    ) -> GpuResult<()> {
        self.launch_on(Lane::Compute, f, launch, push)
    }

    /// [`Device::launch`] on the stream of `lane` (the copy lane runs only the small kernels
    /// that must not wait behind the compute stream's queue, such as an MSM piece's count).
    pub(crate) fn launch_on<'a>(
        &'a self,
        lane: Lane,
        f: &'a CudaFunction,
        launch: crate::gpu::error::GpuResult<Launch>,
        push: impl FnOnce(&mut LaunchArgs<'a>),
    ) -> GpuResult<()> {
        launch_checked(launch, |l| {
            let (grid, block, smem) = l.dims();
            let cfg = LaunchConfig {
                grid_dim: (grid, 1, 1),
                block_dim: (block, 1, 1),
                shared_mem_bytes: smem,
            };
            let mut b = self.lane(lane).launch_builder(f);
            push(&mut b);
            // SAFETY: the launch was checked against the lengths of the buffers passed (each
            // buffer holds what the kernel reads or writes for this grid), and `push` adds them
            // in the order of the kernel's signature in kernels/*.cu (kernels/NOTES.md).
            unsafe { b.launch(cfg) }
                .map(|_| ())
                .map_err(drv(l.kernel()))
        })
    }

    /// The stream of `lane`.
    pub(crate) fn lane(&self, lane: Lane) -> &Arc<CudaStream> {
        match lane {
            Lane::Compute => &self.stream,
            Lane::Copy => &self.copy,
            Lane::H => &self.h,
        }
    }
}
