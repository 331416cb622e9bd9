//! The per-call paths of the CUDA backend: H from host a/b/c, and one MSM from host scalars
//! over resident (or loose) bases, or over bases streamed from the host where the device
//! cannot hold them ([`super::streamed`]); each on the CPU when the device memory does not fit
//! even that.

use blstrs::Scalar;
use cudarc::driver::CudaSlice;
use group::Group;

use super::backend::CudaBackend;
use super::device::{self, DeviceGroup, Lane};
use super::memory::{staging_of, BasesKey, StagingSlot, State};

use super::staging::Staging;
use crate::gpu::error::{GpuError, GpuResult};
use crate::gpu::host::{self, FR_LIMBS};
use crate::gpu::plan::{self, MsmShape, MIN_GPU_MSM};
use crate::groth16::backend::{Bases, Query};
use crate::groth16::cs::Density;
use crate::groth16::domain::Domain;
use crate::groth16::error::{Error, Result};

/// An error after the host buffers started changing: it must not send the call to the CPU
/// (which would read them), so out of memory becomes a plain failure.
pub(super) fn no_fallback(e: GpuError) -> GpuError {
    match e {
        GpuError::OutOfMemory {
            what,
            need_bytes,
            free_bytes,
        } => GpuError::Driver {
            call: what,
            detail: format!("out of memory after the results began to arrive ({need_bytes} bytes needed, {free_bytes} free)"),
        },
        other => other,
    }
}

impl CudaBackend {
    pub(super) fn try_compute_h(
        &self,
        domain: &Domain,
        a: &mut Vec<Scalar>,
        b: &[Scalar],
        c: &[Scalar],
    ) -> GpuResult<()> {
        let log_n = domain.log_size();
        let n = domain.size();
        let cap = self.cap();
        let mut guard = self.state()?;
        let st: &mut State = &mut guard;
        let tab_need = if st.tables.contains_key(&log_n) {
            0
        } else {
            plan::H_TABLES_BYTES
        };
        // a, b, c on the device at once; where they do not fit, two buffers (c follows b into
        // the second, see kernels/NOTES.md): a third less memory for one launch more. Two
        // buffers that fit beside the resident bases beat three that evict some (the next
        // MSM would upload or stream those again).
        let buf = 32 * n as u64;
        st.ensure_twiddles(&self.dev, cap, log_n, 2 * buf + tab_need)?;
        // Three only where they fit as things are; else room for two, evicting only if even
        // those do not fit.
        let three = st.fits(&self.dev, cap, 3 * buf + tab_need)?.is_ok();
        if !three {
            st.make_room(&self.dev, cap, 2 * buf + tab_need, &[], "H buffers")?;
        }
        if tab_need > 0 {
            let t = self.dev.h_tables(domain)?;
            st.tables.insert(log_n, t);
        }
        let inputs: &[&[Scalar]] = match three {
            true => &[&a[..], b, c],
            false => &[&a[..], b],
        };
        let State {
            staging,
            twiddles,
            tables,
            ..
        } = st;
        let mut bufs = Vec::with_capacity(3);
        for v in inputs {
            let mut d = self.dev.alloc_zeros::<u64>(n * FR_LIMBS, "H input")?;
            self.upload_h_input(staging, v, &mut d)?;
            bufs.push(d);
        }
        let (Some(tw), Some(tabs)) = (twiddles.as_ref(), tables.get(&log_n)) else {
            return Err(GpuError::Internal("twiddles or H tables missing".into()));
        };
        let lane = Lane::Compute;
        match &mut bufs[..] {
            [da, db, dc] => self.dev.h_pipeline(lane, da, db, dc, tw, tabs, log_n)?,
            [x, y] => {
                self.dev.h_to_coset(lane, x, tw, tabs, log_n)?;
                self.dev.h_to_coset(lane, y, tw, tabs, log_n)?;
                self.dev.h_combine2(lane, x, y, tabs, log_n, 0)?;
                // c into b's buffer, zeroed first where c is shorter than the domain.
                if c.len() < n {
                    self.dev
                        .stream
                        .memset_zeros(y)
                        .map_err(device::drv("cuMemsetD8Async"))?;
                }
                self.upload_h_input(staging, c, y)?;
                self.dev.h_to_coset(lane, y, tw, tabs, log_n)?;
                self.dev.h_combine2(lane, x, y, tabs, log_n, 1)?;
                self.dev.h_back(lane, x, y, tw, tabs, log_n)?;
            }
            _ => return Err(GpuError::Internal("H buffer count".into())),
        }
        // From here `a` changes, so no failure may fall back to the CPU (which would read it).
        self.dev
            .stream
            .synchronize()
            .map_err(device::drv("synchronize"))?;
        a.resize(n - 1, Scalar::from(0u64));
        // h is in the second buffer either way.
        let out = bufs[1].slice(0..(n - 1) * FR_LIMBS);
        let staging = staging_of(staging, &self.dev);
        self.dev
            .download_staged(staging, &out, host::scalars_as_u64_mut(a), "download h")
            .map_err(no_fallback)
    }

    /// `v` (at most the buffer's length) into the H input buffer `d` on the compute stream.
    fn upload_h_input(
        &self,
        staging: &mut StagingSlot,
        v: &[Scalar],
        d: &mut CudaSlice<u64>,
    ) -> GpuResult<()> {
        if v.is_empty() {
            return Ok(());
        }
        self.dev
            .upload_staged(
                &self.dev.stream,
                staging_of(staging, &self.dev),
                host::scalars_as_u64(v),
                &mut d.slice_mut(..),
                "upload abc",
            )
            .map(|_| ())
    }

    fn try_msm<G: DeviceGroup>(
        &self,
        bases: &Bases<'_, G::Affine>,
        used: &[Scalar],
    ) -> GpuResult<G::Proj> {
        let n = used.len();
        // The window from n is the largest any count of the chunk's scalars can choose, so the
        // chunk fits one launch sequence under either rule.
        let chunk = MsmShape::max_points(plan::window_for(self.dev.msm_window, n, n)).min(n);
        let scratch = plan::msm_scratch_bound::<G>(chunk, self.dev.msm_window) + 32 * n as u64;
        let limbs = G::AFFINE_LIMBS;
        let mut guard = self.state()?;
        let st: &mut State = &mut guard;
        let cacheable = bases.key_id != 0 && bases.query != Query::Other;
        // Bases that do not fit beside the resident sets of their own key (other keys' sets
        // may go) stream from the host instead: evicting a set of the same key to make room
        // would only have its next MSM upload it again, every partition.
        let (key, loose) = if cacheable {
            let key: BasesKey = (bases.key_id, bases.query, bases.offset, bases.points.len());
            let limbs = G::affine_limbs(bases.points);
            let own: Vec<BasesKey> = st
                .bases
                .keys()
                .filter(|k| k.0 == bases.key_id && **k != key)
                .copied()
                .collect();
            match st.make_resident(&self.dev, self.cap(), key, limbs, scratch, &own) {
                Ok(()) => (Some(key), None),
                Err(e) if e.is_out_of_memory() => {
                    return self.msm_streamed::<G>(st, &bases.points[..n], used)
                }
                Err(e) => return Err(e),
            }
        } else {
            let bytes = (n * limbs * 8) as u64;
            match st.make_room(&self.dev, self.cap(), bytes + scratch, &[], "MSM bases") {
                Ok(()) => {}
                Err(e) if e.is_out_of_memory() => {
                    return self.msm_streamed::<G>(st, &bases.points[..n], used)
                }
                Err(e) => return Err(e),
            }
            let src = G::affine_limbs(&bases.points[..n]);
            let (d, _) = st.upload_new(&self.dev, Lane::Compute, src, "upload bases")?;
            (None, Some(d))
        };
        let src = host::scalars_as_u64(used);
        let points = match (&key, &loose) {
            (Some(k), _) => st.bases.get(k).map(|r| &r.points),
            (None, l) => l.as_ref(),
        }
        .ok_or_else(|| GpuError::Internal("resident bases vanished".into()))?;
        let staging = staging_of(&mut st.staging, &self.dev);
        let pieces = plan::msm_pieces(n, self.dev.msm_pieces, chunk);
        if pieces > 1 {
            return self.msm_pieces::<G>(points, staging, src, pieces, chunk);
        }
        let (scalars, _) = self
            .dev
            .upload_new(Lane::Compute, staging, src, "upload scalars")?;
        let mut acc = G::Proj::identity();
        let mut start = 0;
        while start < n {
            let len = chunk.min(n - start);
            let b = points.slice(start * limbs..(start + len) * limbs);
            let s = scalars.slice(start * FR_LIMBS..(start + len) * FR_LIMBS);
            let (out, c) = self.dev.msm::<G>(&b, &s, len)?;
            acc += host::combine_windows::<G>(&out, c);
            start += len;
        }
        Ok(acc)
    }
}

impl CudaBackend {
    /// An MSM of n host scalars cut into `pieces` (each within one launch sequence): piece k's
    /// scalars are copied into the staging and uploaded on the copy lane while the device runs
    /// piece k − 1's kernels (queued without a download; cudarc orders each piece's kernels
    /// after its upload), and every piece's window sums are downloaded at the end. The host
    /// waits on nothing the compute stream holds before the downloads: a piece's window count
    /// runs on the copy lane. Consecutive pieces whose counts chose the same window add to one
    /// set of buckets ([`super::msm::BucketRun`]), reduced once after the last of them.
    ///
    /// Every piece's scalar buffer is allocated before the first kernel is queued: a buffer
    /// taken from the pool on the copy lane after a piece's scratch went back to it on the
    /// compute lane would make the copy wait for that piece's kernels (the pool's reuse
    /// dependency), and the uploads would no longer overlap them. Each piece has its own
    /// buffer so that cudarc's per-buffer events order piece k's upload after nothing but
    /// its own allocation.
    fn msm_pieces<G: DeviceGroup>(
        &self,
        points: &CudaSlice<u64>,
        mut staging: Option<&mut Staging>,
        src: &[u64],
        pieces: usize,
        chunk: usize,
    ) -> GpuResult<G::Proj> {
        let limbs = G::AFFINE_LIMBS;
        let n = src.len() / FR_LIMBS;
        let bounds = plan::piece_bounds(n, pieces, self.dev.first_piece, chunk);
        // Every piece's window is the one an equal share would get, so that a small first
        // piece adds to the same buckets as the others.
        let share = n.div_ceil(pieces);
        let mut bufs = Vec::with_capacity(pieces);
        for &(lo, hi) in &bounds {
            let len = (hi - lo) * FR_LIMBS;
            bufs.push(
                self.dev
                    .alloc_scratch_on::<u64>(Lane::Copy, len, "upload scalars")?,
            );
        }
        let mut p = self.dev.pieces();
        for (&(lo, hi), d) in bounds.iter().zip(bufs.iter_mut()) {
            let piece = &src[lo * FR_LIMBS..hi * FR_LIMBS];
            // Written whole by the upload.
            self.dev.upload_staged(
                self.dev.lane(Lane::Copy),
                staging.as_deref_mut(),
                piece,
                &mut d.slice_mut(..),
                "upload scalars",
            )?;
            let b = points.slice(lo * limbs..hi * limbs);
            let scalars = d.slice(..);
            // Counted on the copy lane: it waits for this piece's upload only, not for the
            // previous pieces' kernels.
            let sh = self.dev.shape::<G>(Lane::Copy, &scalars, hi - lo, share)?;
            self.dev.piece::<G>(&mut p, &b, &scalars, hi - lo, &sh)?;
        }
        // The scalar buffers (`bufs`) outlive every download: no free can race the kernels
        // that read them.
        let acc = self.dev.pieces_sum::<G>(p)?;
        drop(bufs);
        Ok(acc)
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

/// The CPU MSM a device MSM falls back to.
pub(super) type CpuMsm<G> = fn(
    &[<G as host::GpuGroup>::Affine],
    &[Scalar],
    Option<&Density>,
) -> Result<<G as host::GpuGroup>::Proj>;

impl CudaBackend {
    /// An MSM of group `G` on the device, on `cpu` below [`MIN_GPU_MSM`] used scalars or when
    /// the device memory does not fit it.
    pub(super) fn msm<G: DeviceGroup>(
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
            Err(e) if e.is_out_of_memory() => {
                self.fall_back(what, &e);
                cpu(bases.points, scalars, density)
            }
            Err(e) => Err(e.into()),
        }
    }
}
