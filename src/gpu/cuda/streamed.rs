//! MSMs over bases the device cannot hold beside what it keeps (a key larger than
//! `gpu.memory_limit` leaves room for, a 16-32 GiB card): the points stream from the host in
//! equal pieces through a few rotating device slots ([`plan::streamed_pieces`]), piece k + 1
//! uploading on the copy stream while the compute stream sums piece k into the buckets the
//! pieces share. The scalars stream with them when they are on the host (the per-call path) or
//! are read in place when already on the device (a partition call). The device holds one
//! piece's scratch and the slots, never the bases whole.

use blstrs::Scalar;
use cudarc::driver::{CudaEvent, CudaView};

use super::backend::CudaBackend;
use super::device::{drv, Device, DeviceGroup, Lane};
use super::memory::{staging_of, State};
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
        self.stream_pieces::<G>(dev, staging, &bases[..n], scalars, n, pieces)
    }

    /// Σ scalars[i]·bases[i] over the first n of `scalars`, already on the device, with the
    /// points streamed from the host (DMA straight from a page-locked key, else pageable
    /// copies; never the staging, which a partition's a/b/c upload may hold) through slots
    /// within `room` bytes, which the caller made free for them; on `dev`'s streams (the
    /// backend's device, or its [`Device::twin`]).
    pub(super) fn msm_streamed_device<G: DeviceGroup>(
        &self,
        dev: &Device,
        room: u64,
        bases: &[G::Affine],
        scalars: &CudaView<'_, u64>,
        n: usize,
    ) -> GpuResult<G::Proj> {
        let rule = dev.msm_window;
        let most = MsmShape::max_points(plan::window_for(rule, n, n)).min(n);
        let pieces = plan::streamed_pieces::<G>(n, most, room, rule, Streams::Points).map_err(
            |need_bytes| GpuError::OutOfMemory {
                what: "streamed MSM of a partition",
                need_bytes,
                free_bytes: room,
            },
        )?;
        if bases.len() < n || scalars.len() < n * FR_LIMBS {
            return Err(GpuError::Internal(format!(
                "streamed MSM of {n} points over {} bases and {} scalars",
                bases.len(),
                scalars.len() / FR_LIMBS
            )));
        }
        let t = std::time::Instant::now();
        let sum =
            self.stream_pieces::<G>(dev, None, &bases[..n], Scalars::Device(scalars), n, pieces)?;
        // Where a capped partition's time goes (BATON_LOG=...,baton::gpu::cuda::streamed=debug):
        // each streamed MSM's wall time from its counts to its sum, and its bases' rate.
        let bytes = (n * G::AFFINE_LIMBS * 8) as f64;
        let seconds = t.elapsed().as_secs_f64();
        tracing::debug!(
            group = G::NAME,
            points = n,
            pieces,
            room,
            seconds,
            gb_per_s = bytes / seconds.max(1e-9) / 1e9,
            beside = !std::ptr::eq(dev, &self.dev),
            "streamed MSM of a partition"
        );
        Ok(sum)
    }

    /// The n points of `bases` (and host scalars with them) up in `pieces` equal pieces
    /// through [`STREAM_SLOTS`] rotating slots, each piece summed into the buckets the pieces
    /// share as soon as it is up.
    fn stream_pieces<G: DeviceGroup>(
        &self,
        dev: &Device,
        mut staging: Option<&mut Staging>,
        bases: &[G::Affine],
        scalars: Scalars<'_, '_>,
        n: usize,
        pieces: usize,
    ) -> GpuResult<G::Proj> {
        let most = MsmShape::max_points(plan::window_for(dev.msm_window, n, n)).min(n);
        let bounds = plan::piece_bounds(n, pieces, MsmFirstPiece::Equal, most);
        let share = n.div_ceil(pieces);
        let longest = bounds.iter().map(|(lo, hi)| hi - lo).max().unwrap_or(0);
        let limbs = G::AFFINE_LIMBS;
        // Device scalars: every piece's window counted up front, one wait.
        let shapes = match &scalars {
            Scalars::Device(s) => Some(dev.piece_shapes::<G>(s, &bounds, share)?),
            Scalars::Host(_) => None,
        };
        let host_scalars = matches!(scalars, Scalars::Host(_));
        let mut slots = Vec::with_capacity(STREAM_SLOTS);
        for _ in 0..STREAM_SLOTS.min(bounds.len()) {
            let points =
                dev.alloc_scratch_on::<u64>(Lane::Copy, longest * limbs, "streamed bases")?;
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
        // When the kernels of the piece a slot held last are done: the next upload into that
        // slot waits for them on the copy stream.
        let mut read: Vec<Option<CudaEvent>> = slots.iter().map(|_| None).collect();
        let points = G::affine_limbs(bases);
        let copy = dev.lane(Lane::Copy);
        let mut p = dev.pieces();
        for (i, &(lo, hi)) in bounds.iter().enumerate() {
            let k = i % slots.len();
            if let Some(ev) = read[k].take() {
                copy.wait(&ev).map_err(drv("stream wait"))?;
            }
            let (db, ds) = &mut slots[k];
            let len = hi - lo;
            let mut b_dst = db.slice_mut(..len * limbs);
            dev.upload_staged(
                copy,
                staging.as_deref_mut(),
                &points[lo * limbs..hi * limbs],
                &mut b_dst,
                "upload bases",
            )?;
            let b = db.slice(..len * limbs);
            match (&scalars, ds, &shapes) {
                (Scalars::Host(src), Some(ds), _) => {
                    let mut s_dst = ds.slice_mut(..len * FR_LIMBS);
                    dev.upload_staged(
                        copy,
                        staging.as_deref_mut(),
                        &src[lo * FR_LIMBS..hi * FR_LIMBS],
                        &mut s_dst,
                        "upload scalars",
                    )?;
                    let s = ds.slice(..len * FR_LIMBS);
                    // Counted on the copy stream: it waits for this piece's upload only.
                    let sh = dev.shape::<G>(Lane::Copy, &s, len, share)?;
                    dev.piece::<G>(&mut p, &b, &s, len, &sh)?;
                }
                (Scalars::Device(src), None, Some(shapes)) => {
                    let s = src.slice(lo * FR_LIMBS..hi * FR_LIMBS);
                    dev.piece::<G>(&mut p, &b, &s, len, &shapes[i])?;
                }
                _ => return Err(GpuError::Internal("streamed MSM slots".into())),
            }
            read[k] = Some(dev.stream.record_event(None).map_err(drv("event"))?);
        }
        let acc = dev.pieces_sum::<G>(p)?;
        // The slots outlive every kernel that reads them (the sum waited for the last).
        drop(slots);
        Ok(acc)
    }
}
