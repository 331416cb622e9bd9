//! MSMs over bases the device cannot hold beside what it keeps (a key larger than
//! `gpu.memory_limit` leaves room for, a 16-32 GiB card): the points stream from the host in
//! equal pieces through a few rotating device slots ([`plan::streamed_pieces`]), piece k + 1
//! uploading on the copy stream while the compute stream sums piece k into the buckets the
//! pieces share. The scalars stream with them when they are on the host (the per-call path) or
//! are read in place when already on the device (a partition call). The device holds one
//! piece's scratch and the slots, never the bases whole.

use blstrs::Scalar;
use cudarc::driver::{CudaEvent, CudaSlice, CudaView};

use super::backend::CudaBackend;
use super::device::{drv, Device, DeviceGroup, Lane};
use super::memory::{staging_of, State};
use super::pieces::Pieces;
use super::staging::Staging;
use crate::gpu::error::{GpuError, GpuResult};
use crate::gpu::host::{self, FR_LIMBS};
use crate::gpu::options::MsmFirstPiece;
use crate::gpu::plan::{self, MsmShape, Streams, STREAM_SLOTS};

/// Where a streamed MSM's scalars are.
enum Scalars<'a, 'v> {
    /// On the host: they go up with their points.
    Host(&'a [u64]),
    /// On the device already: read where they are.
    Device(&'a CudaView<'v, u64>),
}

impl CudaBackend {
    /// Σ used[i]·bases[i] with `bases` (at least as many as `used`) and `used` streamed from
    /// the host. Takes the room the device has free now; where that is below the smallest
    /// pieces, evicts least recently used resident sets for them, and fails with
    /// out-of-memory naming the bytes the smallest pieces need when even that is not enough.
    pub(super) fn msm_streamed<G: DeviceGroup>(
        &self,
        st: &mut State,
        bases: &[G::Affine],
        used: &[Scalar],
    ) -> GpuResult<G::Proj> {
        let dev = &self.dev;
        let n = used.len();
        let rule = dev.msm_window;
        let what = Streams::PointsAndScalars;
        let most = MsmShape::max_points(plan::window_for(rule, n, n)).min(n);
        let room = |st: &State| -> GpuResult<u64> {
            Ok(match st.fits(dev, self.cap(), u64::MAX)? {
                Ok(()) => u64::MAX,
                Err(usable) => usable,
            })
        };
        let pieces = match plan::streamed_pieces::<G>(n, most, room(st)?, rule, what) {
            Ok(k) => k,
            Err(minimum) => {
                st.make_room(dev, self.cap(), minimum, &[], "streamed MSM")?;
                let free = room(st)?;
                plan::streamed_pieces::<G>(n, most, free, rule, what).map_err(|need_bytes| {
                    GpuError::OutOfMemory {
                        what: "streamed MSM",
                        need_bytes,
                        free_bytes: free,
                    }
                })?
            }
        };
        let staging = staging_of(&mut st.staging, dev);
        let scalars = Scalars::Host(host::scalars_as_u64(used));
        self.stream_pieces::<G>(staging, &bases[..n], scalars, n, pieces)
    }

    /// Σ scalars[i]·bases[i] over the first n of `scalars`, already on the device, with the
    /// points streamed from the host (DMA straight from a page-locked key, else pageable
    /// copies; never the staging, which a partition's a/b/c upload may hold) through slots
    /// within `room` bytes, which the caller made free for them. With `filler`, H's MSM
    /// keeps pace with this one's uploads, its pieces queued between this one's.
    pub(super) fn msm_streamed_device<G: DeviceGroup>(
        &self,
        room: u64,
        bases: &[G::Affine],
        scalars: &CudaView<'_, u64>,
        n: usize,
        mut filler: Option<&mut Filler<'_, '_, '_>>,
    ) -> GpuResult<G::Proj> {
        let rule = self.dev.msm_window;
        let most = MsmShape::max_points(plan::window_for(rule, n, n)).min(n);
        let pieces = plan::streamed_pieces::<G>(n, most, room, rule, Streams::Points).map_err(
            |need_bytes| GpuError::OutOfMemory {
                what: "streamed MSM of a partition",
                need_bytes,
                free_bytes: room,
            },
        )?;
        check_lengths(bases.len(), scalars.len(), n)?;
        let t = std::time::Instant::now();
        let mut s =
            Streamer::<G>::new(&self.dev, &bases[..n], Scalars::Device(scalars), n, pieces)?;
        let point = (G::AFFINE_LIMBS * 8) as u64;
        while !s.done() {
            s.queue_next(None)?;
            if let Some(f) = filler.as_deref_mut() {
                f.catch_up(s.queued_points() as u64 * point)?;
            }
        }
        let with_h = filler.as_ref().map_or(0, |f| f.s.next);
        if let Some(f) = filler {
            f.done += n as u64 * point;
        }
        let sum = s.sum()?;
        // Where a capped partition's time goes (BATON_LOG=...,baton::gpu::cuda::streamed=debug):
        // each streamed MSM's wall time from its counts to its sum, and H's pieces queued
        // between its own by then.
        tracing::debug!(
            group = G::NAME,
            points = n,
            pieces,
            room,
            h_pieces_by_then = with_h,
            seconds = t.elapsed().as_secs_f64(),
            gb_per_s = (n as u64 * point) as f64 / t.elapsed().as_secs_f64().max(1e-9) / 1e9,
            "streamed MSM of a partition"
        );
        Ok(sum)
    }

    /// H's MSM over its streamed bases (`h` its n scalars, on the device) as the [`Filler`] of
    /// the witness's streamed MSMs, which upload `total` bytes of bases in all, within `room`
    /// bytes; `None` where that room cannot hold H's smallest pieces.
    pub(super) fn filler<'a, 'v>(
        &'a self,
        room: u64,
        bases: &'a [blstrs::G1Affine],
        h: &'a CudaView<'v, u64>,
        n: usize,
        total: u64,
    ) -> GpuResult<Option<Filler<'a, 'v, 'a>>> {
        use crate::gpu::host::G1;
        let rule = self.dev.msm_window;
        let most = MsmShape::max_points(plan::window_for(rule, n, n)).min(n);
        let Ok(pieces) = plan::streamed_pieces::<G1>(n, most, room, rule, Streams::Points) else {
            return Ok(None);
        };
        check_lengths(bases.len(), h.len(), n)?;
        tracing::debug!(
            h_points = n,
            h_pieces = pieces,
            room,
            witness_bytes = total,
            "H's streamed MSM queued between the witness's streamed MSMs"
        );
        Ok(Some(Filler {
            s: Streamer::new(&self.dev, &bases[..n], Scalars::Device(h), n, pieces)?,
            total,
            done: 0,
        }))
    }

    /// The n points of `bases` (and host scalars with them) up in `pieces` equal pieces
    /// through [`STREAM_SLOTS`] rotating slots, each piece summed into the buckets the pieces
    /// share as soon as it is up.
    fn stream_pieces<G: DeviceGroup>(
        &self,
        mut staging: Option<&mut Staging>,
        bases: &[G::Affine],
        scalars: Scalars<'_, '_>,
        n: usize,
        pieces: usize,
    ) -> GpuResult<G::Proj> {
        let mut s = Streamer::<G>::new(&self.dev, bases, scalars, n, pieces)?;
        while !s.done() {
            s.queue_next(staging.as_deref_mut())?;
        }
        s.sum()
    }
}

/// An MSM over `n` bases (and scalars) `bases_len` long or more, `scalars_limbs` limbs of
/// device scalars: refused when either is short.
fn check_lengths(bases_len: usize, scalars_limbs: usize, n: usize) -> GpuResult<()> {
    if bases_len < n || scalars_limbs < n * FR_LIMBS {
        return Err(GpuError::Internal(format!(
            "streamed MSM of {n} points over {bases_len} bases and {} scalars",
            scalars_limbs / FR_LIMBS
        )));
    }
    Ok(())
}

/// H's streamed MSM, dense and so bound by its kernels, run as filler between the pieces of
/// the witness's streamed MSMs, mostly 0/1 and so bound by their uploads: each of those queues
/// H's pieces as its own go up, H's share of pieces queued kept to the share of the witness's
/// streamed bytes queued, so that the device sums H while their bases upload and the copy
/// engine uploads theirs while H's kernels run (BENCHMARKS.md, "partition under
/// gpu.memory_limit").
pub(super) struct Filler<'a, 'v, 'd> {
    s: Streamer<'a, 'v, 'd, crate::gpu::host::G1>,
    /// Bytes of bases the witness's streamed MSMs upload in all, and those done so far.
    total: u64,
    done: u64,
}

impl Filler<'_, '_, '_> {
    /// Queues H's pieces until its share queued reaches the share of the witness's streamed
    /// bytes queued (those done and `extra` more).
    fn catch_up(&mut self, extra: u64) -> GpuResult<()> {
        let target = (self.done + extra) as f64 / self.total.max(1) as f64;
        while !self.s.done() && self.s.progress() < target {
            self.s.queue_next(None)?;
        }
        Ok(())
    }

    /// H's MSM: its remaining pieces queued, then its sum.
    pub(super) fn finish(mut self) -> GpuResult<blstrs::G1Projective> {
        let (t, left) = (std::time::Instant::now(), self.s.bounds.len() - self.s.next);
        while !self.s.done() {
            self.s.queue_next(None)?;
        }
        let sum = self.s.sum()?;
        tracing::debug!(
            pieces_left = left,
            seconds = t.elapsed().as_secs_f64(),
            "H's streamed MSM finished after the witness's"
        );
        Ok(sum)
    }
}

/// One streamed MSM in flight: its pieces' bounds and shapes, the rotating slots its points
/// (and host scalars) upload into, and the pieces queued so far.
struct Streamer<'a, 'v, 'd, G: DeviceGroup> {
    dev: &'d Device,
    bounds: Vec<(usize, usize)>,
    share: usize,
    points: &'a [u64],
    scalars: Scalars<'a, 'v>,
    /// Device scalars: every piece's window counted up front, one wait.
    shapes: Option<Vec<MsmShape>>,
    slots: Vec<(CudaSlice<u64>, Option<CudaSlice<u64>>)>,
    /// When the kernels of the piece a slot held last are done: the next upload into that
    /// slot waits for them on the copy stream.
    read: Vec<Option<CudaEvent>>,
    p: Pieces<'d>,
    next: usize,
    _group: std::marker::PhantomData<G>,
}

impl<'a, 'v, 'd, G: DeviceGroup> Streamer<'a, 'v, 'd, G> {
    fn new(
        dev: &'d Device,
        bases: &'a [G::Affine],
        scalars: Scalars<'a, 'v>,
        n: usize,
        pieces: usize,
    ) -> GpuResult<Self> {
        let most = MsmShape::max_points(plan::window_for(dev.msm_window, n, n)).min(n);
        let bounds = plan::piece_bounds(n, pieces, MsmFirstPiece::Equal, most);
        let share = n.div_ceil(pieces);
        let longest = bounds.iter().map(|(lo, hi)| hi - lo).max().unwrap_or(0);
        let shapes = match &scalars {
            Scalars::Device(s) => Some(dev.piece_shapes::<G>(s, &bounds, share)?),
            Scalars::Host(_) => None,
        };
        let host_scalars = matches!(scalars, Scalars::Host(_));
        let mut slots = Vec::with_capacity(STREAM_SLOTS);
        for _ in 0..STREAM_SLOTS.min(bounds.len()) {
            let points = dev.alloc_scratch_on::<u64>(
                Lane::Copy,
                longest * G::AFFINE_LIMBS,
                "streamed bases",
            )?;
            let scalars = match host_scalars {
                true => Some(dev.alloc_scratch_on::<u64>(
                    Lane::Copy,
                    longest * FR_LIMBS,
                    "streamed scalars",
                )?),
                false => None,
            };
            slots.push((points, scalars));
        }
        Ok(Streamer {
            dev,
            read: slots.iter().map(|_| None).collect(),
            bounds,
            share,
            points: G::affine_limbs(bases),
            scalars,
            shapes,
            slots,
            p: dev.pieces(),
            next: 0,
            _group: std::marker::PhantomData,
        })
    }

    fn done(&self) -> bool {
        self.next >= self.bounds.len()
    }

    /// Points of the pieces queued so far.
    fn queued_points(&self) -> usize {
        self.next
            .checked_sub(1)
            .and_then(|i| self.bounds.get(i))
            .map_or(0, |&(_, hi)| hi)
    }

    /// The share of its pieces queued so far.
    fn progress(&self) -> f64 {
        self.next as f64 / self.bounds.len().max(1) as f64
    }

    /// The next piece: its upload into the next slot (once that slot's last kernels are
    /// done), then its kernels, which wait for that upload.
    fn queue_next(&mut self, staging: Option<&mut Staging>) -> GpuResult<()> {
        let dev = self.dev;
        let (i, limbs) = (self.next, G::AFFINE_LIMBS);
        let Some(&(lo, hi)) = self.bounds.get(i) else {
            return Ok(());
        };
        self.next += 1;
        let k = i % self.slots.len();
        let copy = dev.lane(Lane::Copy);
        if let Some(ev) = self.read[k].take() {
            copy.wait(&ev).map_err(drv("stream wait"))?;
        }
        let mut staging = staging;
        let (db, ds) = &mut self.slots[k];
        let len = hi - lo;
        let mut b_dst = db.slice_mut(..len * limbs);
        dev.upload_staged(
            copy,
            staging.as_deref_mut(),
            &self.points[lo * limbs..hi * limbs],
            &mut b_dst,
            "upload bases",
        )?;
        let b = db.slice(..len * limbs);
        match (&self.scalars, ds, &self.shapes) {
            (Scalars::Host(src), Some(ds), _) => {
                let mut s_dst = ds.slice_mut(..len * FR_LIMBS);
                dev.upload_staged(
                    copy,
                    staging,
                    &src[lo * FR_LIMBS..hi * FR_LIMBS],
                    &mut s_dst,
                    "upload scalars",
                )?;
                let s = ds.slice(..len * FR_LIMBS);
                // Counted on the copy stream: it waits for this piece's upload only.
                let sh = dev.shape::<G>(Lane::Copy, &s, len, self.share)?;
                dev.piece::<G>(&mut self.p, &b, &s, len, &sh)?;
            }
            (Scalars::Device(src), None, Some(shapes)) => {
                let s = src.slice(lo * FR_LIMBS..hi * FR_LIMBS);
                dev.piece::<G>(&mut self.p, &b, &s, len, &shapes[i])?;
            }
            _ => return Err(GpuError::Internal("streamed MSM slots".into())),
        }
        self.read[k] = Some(dev.stream.record_event(None).map_err(drv("event"))?);
        Ok(())
    }

    /// The MSM's sum, once every piece is queued; the slots outlive every kernel that reads
    /// them (the sum waits for the last).
    fn sum(self) -> GpuResult<G::Proj> {
        let acc = self.dev.pieces_sum::<G>(self.p)?;
        drop(self.slots);
        Ok(acc)
    }
}
