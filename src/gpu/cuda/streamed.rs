//! MSMs over bases the device cannot hold beside what it keeps (a key larger than
//! `gpu.memory_limit` leaves room for, a 16-32 GiB card): the points and scalars stream from
//! the host in equal pieces through a few rotating device slots ([`plan::streamed_pieces`]),
//! piece k + 1 uploading on the copy stream while the compute stream sums piece k into the
//! buckets the pieces share. The device holds one piece's scratch and the slots, never the
//! bases whole.

use blstrs::Scalar;
use cudarc::driver::CudaEvent;

use super::backend::CudaBackend;
use super::device::{drv, DeviceGroup, Lane};
use super::memory::{staging_of, State};
use crate::gpu::error::{GpuError, GpuResult};
use crate::gpu::host::{self, FR_LIMBS};
use crate::gpu::options::MsmFirstPiece;
use crate::gpu::plan::{self, MsmShape, STREAM_SLOTS};

impl CudaBackend {
    /// Σ used[i]·bases[i] with `bases` (at least as many as `used`) streamed from the host.
    /// Takes the room the device has free now; where that is below the smallest pieces,
    /// evicts least recently used resident sets for them, and fails with out-of-memory naming
    /// the bytes the smallest pieces need when even that is not enough.
    pub(super) fn msm_streamed<G: DeviceGroup>(
        &self,
        st: &mut State,
        bases: &[G::Affine],
        used: &[Scalar],
    ) -> GpuResult<G::Proj> {
        let dev = &self.dev;
        let n = used.len();
        let rule = dev.msm_window;
        let most = MsmShape::max_points(plan::window_for(rule, n, n)).min(n);
        let room = |st: &State| -> GpuResult<u64> {
            Ok(match st.fits(dev, self.cap(), u64::MAX)? {
                Ok(()) => u64::MAX,
                Err(usable) => usable,
            })
        };
        let pieces = match plan::streamed_pieces::<G>(n, most, room(st)?, rule) {
            Ok(k) => k,
            Err(minimum) => {
                st.make_room(dev, self.cap(), minimum, &[], "streamed MSM")?;
                let free = room(st)?;
                plan::streamed_pieces::<G>(n, most, free, rule).map_err(|need_bytes| {
                    GpuError::OutOfMemory {
                        what: "streamed MSM",
                        need_bytes,
                        free_bytes: free,
                    }
                })?
            }
        };
        let bounds = plan::piece_bounds(n, pieces, MsmFirstPiece::Equal, most);
        let share = n.div_ceil(pieces);
        let longest = bounds.iter().map(|(lo, hi)| hi - lo).max().unwrap_or(0);
        let limbs = G::AFFINE_LIMBS;
        let mut slots = Vec::with_capacity(STREAM_SLOTS);
        for _ in 0..STREAM_SLOTS.min(bounds.len()) {
            slots.push((
                dev.alloc_scratch_on::<u64>(Lane::Copy, longest * limbs, "streamed bases")?,
                dev.alloc_scratch_on::<u64>(Lane::Copy, longest * FR_LIMBS, "streamed scalars")?,
            ));
        }
        // When the kernels of the piece a slot held last are done: the next upload into that
        // slot waits for them on the copy stream.
        let mut read: Vec<Option<CudaEvent>> = slots.iter().map(|_| None).collect();
        let (points, scalars) = (G::affine_limbs(bases), host::scalars_as_u64(used));
        let mut staging = staging_of(&mut st.staging, dev);
        let copy = dev.lane(Lane::Copy);
        let mut p = dev.pieces();
        for (i, &(lo, hi)) in bounds.iter().enumerate() {
            let k = i % slots.len();
            if let Some(ev) = read[k].take() {
                copy.wait(&ev).map_err(drv("stream wait"))?;
            }
            let (db, ds) = &mut slots[k];
            let len = hi - lo;
            let (b_src, s_src) = (
                &points[lo * limbs..hi * limbs],
                &scalars[lo * FR_LIMBS..hi * FR_LIMBS],
            );
            let mut b_dst = db.slice_mut(..len * limbs);
            dev.upload_staged(
                copy,
                staging.as_deref_mut(),
                b_src,
                &mut b_dst,
                "upload bases",
            )?;
            let mut s_dst = ds.slice_mut(..len * FR_LIMBS);
            dev.upload_staged(
                copy,
                staging.as_deref_mut(),
                s_src,
                &mut s_dst,
                "upload scalars",
            )?;
            let (b, s) = (db.slice(..len * limbs), ds.slice(..len * FR_LIMBS));
            // Counted on the copy stream: it waits for this piece's upload only.
            let sh = dev.shape::<G>(Lane::Copy, &s, len, share)?;
            dev.piece::<G>(&mut p, &b, &s, len, &sh)?;
            read[k] = Some(dev.stream.record_event(None).map_err(drv("event"))?);
        }
        let acc = dev.pieces_sum::<G>(p)?;
        // The slots outlive every kernel that reads them (the sum waited for the last).
        drop(slots);
        Ok(acc)
    }
}
