//! The device MSM launch sequence of kernels/NOTES.md: the window (from n, or from a device
//! count of the scalars other than 0 and 1), count digits, scan, scatter (with keys, or
//! keyless and the segments' first buckets after it), accumulate buckets in segments,
//! finalize, reduce windows level by level ([`crate::gpu::plan::reduce_plan`]), and sum the
//! bases of the ones. Returns the `nwin + 1` XYZZ sums for the host to combine. The pieces of
//! an MSM cut into pieces share their buckets ([`BucketRun`]).

use cudarc::driver::{CudaSlice, CudaView, PushKernelArg};

use super::clock::{phase, PhaseClock};
use super::device::{drv, Device, DeviceGroup, Lane};
use crate::gpu::error::{GpuError, GpuResult};
use crate::gpu::host::XYZZ_LIMBS as G1_XYZZ_LIMBS;
use crate::gpu::launch::{self, AccKeys, SCAN_SPAN};
use crate::gpu::options::{MsmPieceBuckets, MsmScatterDigits};
use crate::gpu::plan::{self, MsmShape, MSM_SEGMENT};

/// The buckets of an MSM cut into pieces, kept between pieces of one window shape: each piece
/// after the first adds its digits' bases to what the earlier ones left there
/// (`msm_accumulate_seeded`), and one reduction at the end serves them all, where every piece
/// of its own would reduce its buckets (9.3 ms for the 6.8 million buckets of c = 20).
pub(crate) struct BucketRun {
    shape: MsmShape,
    buckets: CudaSlice<u64>,
}

impl Device {
    /// Inclusive prefix sum of the first `m` entries of `data`, recursively over block sums.
    pub(crate) fn scan(&self, data: &mut CudaSlice<u32>, m: usize) -> GpuResult<()> {
        let m32 = m as u32;
        let nb = m.div_ceil(SCAN_SPAN);
        if nb <= 1 {
            let null = 0u64;
            let l = launch::scan("scan_block", m, data.len(), None);
            return self.launch(&self.k.scan_block, l, |b| {
                b.arg(&mut *data).arg(&m32).arg(&null);
            });
        }
        // One sum per block, written by `scan_block` before anything reads them.
        let mut sums = self.alloc_scratch::<u32>(nb, "scan block sums")?;
        let l = launch::scan("scan_block", m, data.len(), Some(sums.len()));
        self.launch(&self.k.scan_block, l, |b| {
            b.arg(&mut *data).arg(&m32).arg(&mut sums);
        })?;
        self.scan(&mut sums, nb)?;
        let l = launch::scan("scan_add", m, data.len(), Some(sums.len()));
        self.launch(&self.k.scan_add, l, |b| {
            b.arg(&mut *data).arg(&m32).arg(&sums);
        })
    }

    /// How many of the first n scalars are neither 0 nor 1 (the ones that make digits),
    /// counted on the device on the stream of `lane`; waits for the count, so for everything
    /// queued on that stream before it.
    fn count_nontrivial(
        &self,
        lane: Lane,
        scalars: &CudaView<'_, u64>,
        n: usize,
    ) -> GpuResult<usize> {
        let mut count = self.alloc_zeros_on::<u32>(lane, 1, "MSM scalar count")?;
        let n32 = n as u32;
        let l = launch::msm_nontrivial(n, scalars.len(), count.len());
        self.launch_on(lane, &self.k.msm_nontrivial, l, |b| {
            b.arg(scalars).arg(&n32).arg(&mut count);
        })?;
        let host = self.download_now(lane, &count, "download scalar count")?;
        Ok(host.first().copied().unwrap_or(0) as usize)
    }

    /// The window and the shape of an MSM over the first n of `scalars`, as `gpu.msm_window`
    /// says for `like` scalars (n itself, or the equal share of a piece): from `like`, or from
    /// the device's count of the scalars that make digits (on the stream of `lane`), scaled to
    /// `like` (the entry buffers then hold only theirs).
    pub(crate) fn shape<G: DeviceGroup>(
        &self,
        lane: Lane,
        scalars: &CudaView<'_, u64>,
        n: usize,
        like: usize,
    ) -> GpuResult<MsmShape> {
        let counted = match self.msm_window.counts(like) {
            true => Some(self.count_nontrivial(lane, scalars, n)?),
            false => None,
        };
        Ok(self.shape_counted::<G>(n, like, counted))
    }

    /// [`Device::shape`] of n scalars of which `counted` make digits (`None`: not counted).
    pub(crate) fn shape_counted<G: DeviceGroup>(
        &self,
        n: usize,
        like: usize,
        counted: Option<usize>,
    ) -> MsmShape {
        let order = self.scatter_order;
        match counted.filter(|_| self.msm_window.counts(like)) {
            Some(k) => {
                let k = k.min(n);
                let k_like = (k as u128 * like as u128 / n.max(1) as u128) as usize;
                MsmShape::for_group::<G>(n, plan::window_for(self.msm_window, like, k_like))
                    .with_nontrivial(k)
                    .scattered_by_window(plan::scatter_by_window(order, n, Some(k)))
            }
            None => MsmShape::for_group::<G>(n, plan::window_for(self.msm_window, like, like))
                .scattered_by_window(plan::scatter_by_window(order, n, None)),
        }
    }

    /// XYZZ window sums (`nwin` windows, then the sum over scalars equal to one) of
    /// Σ scalars[i]·bases[i], i < n, and the window c they were made with. `bases` and
    /// `scalars` hold at least n points and n scalars (checked); n·nwin < 2^32.
    pub(crate) fn msm<G: DeviceGroup>(
        &self,
        bases: &CudaView<'_, u64>,
        scalars: &CudaView<'_, u64>,
        n: usize,
    ) -> GpuResult<(Vec<u64>, u32)> {
        let (out, c) = self.msm_launch::<G>(bases, scalars, n)?;
        Ok((self.download_sums(&out)?, c))
    }

    /// Window sums left on the device by [`Device::msm_launch`], downloaded (waits for them).
    pub(crate) fn download_sums(&self, out: &CudaSlice<u64>) -> GpuResult<Vec<u64>> {
        self.download_now(Lane::Compute, out, "download window sums")
    }

    /// `buf` copied to the host after everything queued on the stream of `lane` (waits for it). The
    /// stream is drained first, then the copy into pageable memory is made, so that the copy never
    /// waits inside the driver behind running kernels while another thread (the partition's a/b/c
    /// uploads) needs the driver. On the H200 one a/b/c buffer's upload per partition still spends
    /// 270-350 ms in its own driver calls (`BATON_UPLOAD_TRACE`; docs/bench-log/2026-12-02.md, "Why
    /// a, b, c uploaded slowly beside the MSMs"); this drain did not measurably change that.
    pub(crate) fn download_now<T: cudarc::driver::DeviceRepr + Default + Clone>(
        &self,
        lane: Lane,
        buf: &CudaSlice<T>,
        what: &'static str,
    ) -> GpuResult<Vec<T>> {
        let on = self.lane(lane);
        on.synchronize().map_err(drv("synchronize"))?;
        let host = on.clone_dtoh(buf).map_err(drv(what))?;
        on.synchronize().map_err(drv("synchronize"))?;
        Ok(host)
    }

    /// [`Device::msm`] without the download: the window sums stay on the device, the kernels
    /// queued on the compute stream (a window counted on the device waits for the count, so
    /// for the kernels queued before it). The caller downloads them with
    /// [`Device::download_sums`]; meanwhile the host is free for the next upload.
    pub(crate) fn msm_launch<G: DeviceGroup>(
        &self,
        bases: &CudaView<'_, u64>,
        scalars: &CudaView<'_, u64>,
        n: usize,
    ) -> GpuResult<(CudaSlice<u64>, u32)> {
        let mut clock = PhaseClock::start(&self.stream, self.msm_phases);
        let sh = self.shape::<G>(Lane::Compute, scalars, n, n)?;
        phase(&mut clock, "window");
        let out = self.msm_queue::<G>(bases, scalars, n, &sh, &mut clock)?;
        if let Some(clock) = clock {
            // Timing only: the report needs the events done.
            self.stream.synchronize().map_err(drv("synchronize"))?;
            clock.report();
        }
        Ok((out, sh.c))
    }

    /// The kernels of one piece of shape `sh` (from [`Device::shape`] with the share, or
    /// [`Device::piece_shapes`]), queued on the compute stream without the host waiting on
    /// it, so the next piece's upload overlaps them. The piece adds its digits to the buckets of `run`, which earlier pieces of the
    /// same window shape left there, or starts the run (the caller ends a run of another
    /// shape with [`Device::reduce_run`] first). Returns the buffer of its window sums: the
    /// ones' sum at the end, the windows at infinity (zeros) until a run's reduction writes
    /// them. With `BATON_MSM_PHASES` the clock comes back for a report after the caller's
    /// download.
    pub(crate) fn msm_launch_piece<G: DeviceGroup>(
        &self,
        bases: &CudaView<'_, u64>,
        scalars: &CudaView<'_, u64>,
        n: usize,
        sh: &MsmShape,
        run: &mut Option<BucketRun>,
    ) -> GpuResult<(CudaSlice<u64>, Option<PhaseClock<'_>>)> {
        let mut clock = PhaseClock::start(&self.stream, self.msm_phases);
        if let Some(c) = clock.as_mut() {
            c.shape = Some((n, *sh, G::NAME));
        }
        let seeded = run.is_some();
        let r = match run {
            Some(r) if self.piece_joins(r, sh) => r,
            Some(_) => {
                return Err(GpuError::Internal(
                    "an MSM piece of another window shape than its bucket run".into(),
                ))
            }
            None => run.insert(BucketRun {
                shape: *sh,
                buckets: self.alloc_buckets::<G>(sh)?,
            }),
        };
        self.msm_buckets::<G>(bases, scalars, n, sh, &mut r.buckets, seeded, &mut clock)?;
        let mut out = self.alloc_window_sums::<G>(sh)?;
        self.msm_ones::<G>(bases, scalars, n, sh, &mut out)?;
        phase(&mut clock, "ones");
        Ok((out, clock))
    }

    /// Whether a piece of shape `sh` adds to the buckets of `run` (`gpu.msm_piece_buckets`,
    /// and the same window shape).
    pub(crate) fn piece_joins(&self, run: &BucketRun, sh: &MsmShape) -> bool {
        self.piece_buckets == MsmPieceBuckets::Shared && run.shape.shares_buckets(sh)
    }

    /// Ends a bucket run: its window sums into the first `nwin` points of `out` (the window
    /// sums of the run's last piece, whose clock gets the step), queued on the compute stream.
    pub(crate) fn reduce_run<G: DeviceGroup>(
        &self,
        run: BucketRun,
        out: &mut CudaSlice<u64>,
        clock: &mut Option<PhaseClock<'_>>,
    ) -> GpuResult<()> {
        self.reduce::<G>(&run.shape, &run.buckets, out)?;
        phase(clock, "reduce");
        Ok(())
    }

    /// Room for the `nbk` XYZZ buckets of shape `sh`.
    fn alloc_buckets<G: DeviceGroup>(&self, sh: &MsmShape) -> GpuResult<CudaSlice<u64>> {
        self.alloc_scratch::<u64>(sh.nbk as usize * G::XYZZ_LIMBS, "MSM buckets")
    }

    /// `nwin + 1` window sums at infinity (zeros), for an MSM of shape `sh`.
    fn alloc_window_sums<G: DeviceGroup>(&self, sh: &MsmShape) -> GpuResult<CudaSlice<u64>> {
        self.alloc_zeros::<u64>((sh.nwin as usize + 1) * G::XYZZ_LIMBS, "MSM window sums")
    }

    /// The kernels of one MSM of window shape `sh`, queued on the compute stream; returns the
    /// buffer its window sums will be in.
    fn msm_queue<'a, G: DeviceGroup>(
        &'a self,
        bases: &CudaView<'_, u64>,
        scalars: &CudaView<'_, u64>,
        n: usize,
        sh: &MsmShape,
        clock: &mut Option<PhaseClock<'a>>,
    ) -> GpuResult<CudaSlice<u64>> {
        if let Some(c) = clock.as_mut() {
            c.shape = Some((n, *sh, G::NAME));
        }
        let mut buckets = self.alloc_buckets::<G>(sh)?;
        self.msm_buckets::<G>(bases, scalars, n, sh, &mut buckets, false, clock)?;
        let mut out = self.alloc_window_sums::<G>(sh)?;
        self.reduce::<G>(sh, &buckets, &mut out)?;
        phase(clock, "reduce");
        drop(buckets);
        self.msm_ones::<G>(bases, scalars, n, sh, &mut out)?;
        phase(clock, "ones");
        Ok(out)
    }

    /// Count, scan, scatter, accumulate and finalize: every bucket of `buckets` (`sh.nbk`
    /// points) set to the sum of its digits' bases, or with `seeded` that sum added to what
    /// the bucket held (the pieces of a bucket run after its first).
    #[allow(clippy::too_many_arguments)]
    fn msm_buckets<'a, G: DeviceGroup>(
        &'a self,
        bases: &CudaView<'_, u64>,
        scalars: &CudaView<'_, u64>,
        n: usize,
        sh: &MsmShape,
        buckets: &mut CudaSlice<u64>,
        seeded: bool,
        clock: &mut Option<PhaseClock<'a>>,
    ) -> GpuResult<()> {
        let gk = G::kernels(&self.k);
        let (n32, c, nwin, nbk, seg) = (n as u32, sh.c, sh.nwin, sh.nbk, MSM_SEGMENT as u32);
        let mut counts = self.alloc_zeros::<u32>(nbk as usize + 1, "MSM bucket counts")?;
        // Every entry of the scratch buffers below that a kernel reads was written by an earlier
        // one: scatter fills vals (and keys) up to counts[nbk], msm_seg_keys every segment
        // below it; accumulate and finalize write every bucket (seeded: add to it), and
        // finalize reads only the segment pieces accumulate wrote.
        // The keys: one per entry, or with the keyless scatter one first bucket per segment.
        let keys_len = if self.keyless {
            sh.nseg as usize
        } else {
            sh.entries
        };
        let mut keys = self.alloc_scratch::<u32>(keys_len, "MSM keys")?;
        let mut vals = self.alloc_scratch::<u32>(sh.entries, "MSM values")?;
        // The segments' first and last pieces in one buffer, which lends the stored digits
        // room: the accumulation writes it only after the scatter has read them.
        let half = sh.nseg as usize * G::XYZZ_LIMBS;
        let mut segs = self.alloc_scratch::<u64>(2 * half, "MSM segments")?;
        let stored = sh.by_window
            && self.scatter_digits == MsmScatterDigits::Stored
            && sh.stored_digits_fit(n);
        let digits = 2 * segs.len();
        if stored {
            let l = launch::msm_count_store(n, sh, scalars.len(), counts.len(), digits);
            self.launch(&self.k.msm_count_store, l, |b| {
                b.arg(scalars).arg(&n32).arg(&c).arg(&nwin).arg(&mut counts);
                b.arg(&mut segs);
            })?;
        } else {
            let l = launch::msm_digits("msm_count", n, sh, scalars.len(), counts.len(), None);
            self.launch(&self.k.msm_count, l, |b| {
                b.arg(scalars).arg(&n32).arg(&c).arg(&nwin).arg(&mut counts);
            })?;
        }
        phase(clock, "count");
        self.scan(&mut counts, nbk as usize + 1)?;
        phase(clock, "scan");
        let null = 0u64;
        // A window of c bits has 2^(c-1) buckets to share out.
        let parts = self.scatter_parts.min(1 << (c - 1));
        let kv = ((!self.keyless).then_some(keys.len()), vals.len());
        // The three scatters take the same arguments but their source: scalars, or digits.
        let (scatter, l) = if stored {
            let l = launch::msm_scatter_stored(n, sh, digits, counts.len(), kv, parts);
            (&self.k.msm_scatter_stored, l)
        } else if sh.by_window {
            let l = launch::msm_digits(
                "msm_scatter_window",
                n,
                sh,
                scalars.len(),
                counts.len(),
                Some(kv),
            );
            (&self.k.msm_scatter_window, l)
        } else {
            let l = launch::msm_digits("msm_scatter", n, sh, scalars.len(), counts.len(), Some(kv));
            (&self.k.msm_scatter, l)
        };
        self.launch(scatter, l, |b| {
            if stored {
                b.arg(&segs);
            } else {
                b.arg(scalars);
            }
            b.arg(&n32).arg(&c).arg(&nwin).arg(&mut counts);
            if self.keyless {
                b.arg(&null);
            } else {
                b.arg(&mut keys);
            }
            b.arg(&mut vals);
            if stored {
                b.arg(&parts);
            }
        })?;
        phase(clock, "scatter");
        // Batch-affine rounds (G1, `gpu.experimental.msm_affine_rounds`): the accumulation then
        // walks the rounds' points, values, starts (and keys) under their shape.
        let mut paired = match self.affine_rounds > 0 && sh.xyzz_limbs == G1_XYZZ_LIMBS {
            true => self.msm_pairs(bases, &vals, &counts, sh)?,
            false => None,
        };
        phase(clock, "pairs");
        let mut pkeys = paired.as_mut().and_then(|p| p.keys.take());
        let pview = paired.as_ref().map(|p| p.points.as_view());
        let (n, bases, vals, counts, sh) = match (&paired, &pview) {
            (Some(p), Some(v)) => (p.shape.entries, v, &p.vals, &p.counts, &p.shape),
            _ => (n, bases, &vals, &counts, sh),
        };
        let keys = match pkeys.as_mut() {
            Some(k) => k,
            None => &mut keys,
        };
        let acc_keys = if self.keyless {
            let l = launch::msm_seg_keys(sh, counts.len(), keys.len());
            self.launch(&self.k.msm_seg_keys, l, |b| {
                b.arg(counts).arg(&nbk).arg(&seg).arg(&mut *keys);
            })?;
            AccKeys::Segments(keys.len())
        } else {
            AccKeys::Entries(keys.len())
        };
        phase(clock, "seg_keys");
        let (mut pfirst, mut plast) = segs.split_at_mut(half);
        let seg_lens = [pfirst.len(), plast.len()];
        let (accumulate, finalize) = if seeded {
            (&gk.accumulate_seeded, &gk.finalize_seeded)
        } else {
            (&gk.accumulate, &gk.finalize)
        };
        let l = launch::msm_accumulate(
            n,
            sh,
            G::AFFINE_LIMBS,
            bases.len(),
            acc_keys,
            vals.len(),
            counts.len(),
            buckets.len(),
            seg_lens,
        );
        self.launch(accumulate, l, |b| {
            b.arg(bases)
                .arg(&*keys)
                .arg(vals)
                .arg(counts)
                .arg(&nbk)
                .arg(&seg);
            b.arg(&mut *buckets).arg(&mut pfirst).arg(&mut plast);
        })?;
        phase(clock, "accumulate");
        // Every scratch buffer of the sequence is alive here: the call's peak.
        self.note_usage();
        for span in launch::msm_chain_spans(sh) {
            let l = launch::msm_chains(sh, span, acc_keys, counts.len(), seg_lens[0]);
            self.launch(&gk.chains, l, |b| {
                b.arg(counts).arg(&nbk).arg(&seg).arg(&*keys).arg(&span);
                b.arg(&mut pfirst);
            })?;
        }
        phase(clock, "chains");
        let l = launch::msm_finalize(sh, counts.len(), buckets.len(), seg_lens);
        self.launch(finalize, l, |b| {
            b.arg(counts).arg(&nbk).arg(&seg).arg(&mut *buckets);
            b.arg(&mut pfirst).arg(&mut plast);
        })?;
        phase(clock, "finalize");
        Ok(())
    }
}
