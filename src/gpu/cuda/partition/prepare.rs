//! What a partition call asks of the memory policy before it takes anything: twiddles, H
//! tables, every base set it reads resident where they fit beside the call (the rest stream
//! from the host during the call, [`crate::gpu::cuda::streamed`]), and room for its own
//! buffers. The same steps, without evicting anything, make a key resident ahead of its
//! partitions.

use super::shape::{every_msm_resident, queries, QueryBases, ResidentMsms, Shape};
use crate::gpu::cuda::backend::{CudaBackend, MAX_GPU_LOG_N};
use crate::gpu::cuda::device::Device;
use crate::gpu::cuda::memory::{BasesKey, State};
use crate::gpu::error::{GpuError, GpuResult};
use crate::gpu::host::{GpuGroup, G1, G2};
use crate::gpu::options::{CappedCut, CappedRecording};
use crate::gpu::plan::{self, Cut, Streams, STREAM_ROOM};
use crate::groth16::domain::Domain;
use crate::groth16::key::ProvingKey;
use blstrs::{G1Affine, G2Affine};

/// Room asked for a domain's H tables while they are made (two scale tables and 1/Z, with
/// slack for the upload).
const H_TABLES_ROOM: u64 = crate::gpu::plan::H_TABLES_BYTES;

/// The order in which a partition's base sets are kept resident when not all of them fit
/// (indices into `[H, L, A, B_G1, B_G2]`, [`ResidentMsms`]): first the sets whose MSMs have
/// mostly 0/1 scalars in a PoRep witness (L, A, B_G1: fast kernels that could not hide their
/// bases' copy), then H, then B_G2, the largest, whose streamed MSM runs at its G2 kernels'
/// rate (2^26: 0.25 s at 40 GB/s), so that streaming it costs least a byte (BENCHMARKS.md,
/// "H100 — partition under gpu.memory_limit").
const KEEP_ORDER: [usize; 5] = [1, 2, 3, 0, 4];

/// A call's G1 queries and its B_G2 query, when asked for.
type Queries<'q, 'a> = (
    &'q [QueryBases<'a, G1Affine>],
    Option<&'q QueryBases<'a, G2Affine>>,
);

/// What [`CudaBackend::prepare`] left the call: the resident sets it reads, the bytes kept
/// free for the MSMs whose bases stream (0 when every set is resident), and how its MSMs are
/// cut (`gpu.msm_pieces`, or lean where the device is short of memory).
pub(crate) struct Prepared {
    pub keys: Vec<BasesKey>,
    pub stream_room: u64,
    pub cut: Cut,
    /// A second streaming room, for H's MSM beside the witness's (0: H's MSM after them).
    pub h_room: u64,
}

impl Prepared {
    /// Whether the call's set `key` is resident (else its bases stream).
    pub fn resident(&self, key: &BasesKey) -> bool {
        self.keys.contains(key)
    }
}

impl CudaBackend {
    /// Twiddles, H tables and every base set of the call that fits resident beside the call's
    /// own buffers, then room for those buffers (and for streaming the other sets' bases).
    /// `on_device`: bytes of those buffers that are on the device already (a, b, c evaluated
    /// there, [`Shape::abc_bytes`]): the room asked is the call's peak less them, else a
    /// partition from device a/b/c would ask for them twice and stream a set that fits. Out of
    /// memory here (the call's own buffers do not fit even with no set resident) leaves
    /// everything of the caller's untouched.
    ///
    /// `recording`: the resident recording those a, b, c were evaluated from, which the key's
    /// next partition evaluates from too. Under `gpu.capped_recording = "spare"` it stays
    /// while the call can do without evicting it: sets that fit only by evicting it stream,
    /// and the call's own sets are given up for its room first ([`CappedRecording`]).
    pub(super) fn prepare(
        &self,
        st: &mut State,
        sh: &Shape,
        queries: Queries<'_, '_>,
        with_b_g2: bool,
        on_device: u64,
        recording: Option<u64>,
    ) -> GpuResult<Prepared> {
        let unspared = st.in_use_recording;
        if self.dev.capped_recording == CappedRecording::Spare {
            st.in_use_recording = unspared.or(recording);
        }
        let prepared = self.prepare_sparing(st, sh, queries, with_b_g2, on_device, unspared);
        st.in_use_recording = unspared;
        prepared
    }

    /// [`CudaBackend::prepare`] with the state's recording spared, as it is until the call
    /// cannot fit with every set streamed; then only `unspared` is.
    fn prepare_sparing(
        &self,
        st: &mut State,
        sh: &Shape,
        (g1, g2): Queries<'_, '_>,
        with_b_g2: bool,
        on_device: u64,
        unspared: Option<u64>,
    ) -> GpuResult<Prepared> {
        let (dev, cap) = (&self.dev, self.cap());
        let knob = Cut::Knob(dev.msm_pieces);
        // The call's bytes with the MSMs of `resident` over resident bases (the others'
        // scratch is in the stream room).
        let call_of = |cut, resident| {
            sh.need_bytes(resident, dev.msm_window, cut)
                .saturating_sub(on_device)
        };
        let every = every_msm_resident(with_b_g2);
        let knob_call = call_of(knob, every);
        // Counted before anything is uploaded: a set uploaded by a try that then cannot keep
        // it would be uploaded and given up again by every partition.
        if self.all_fit(st, sh, g1, g2, knob_call)? {
            if let Ok(p) = self.all_resident(st, sh, (g1, g2), knob_call, knob)? {
                return Ok(p);
            }
        }
        // Short of memory: lean pieces, whose smaller scratch may keep more sets resident
        // (`gpu.capped_cut = "lean"`); "knob" keeps the knob's cut and its overlaps, "overlap"
        // the lean pieces with the overlaps, where that call fits with every set streamed.
        let none = [false; 5];
        let cut = match dev.capped_cut {
            CappedCut::Knob if self.fits_streaming(st, sh, (g1, g2), call_of(knob, none))? => knob,
            CappedCut::Overlap
                if self.fits_streaming(st, sh, (g1, g2), call_of(Cut::Overlap, none))? =>
            {
                Cut::Overlap
            }
            _ => Cut::Lean,
        };
        let call = call_of(cut, every);
        // When some set must stream, the resident ones leave its slots their full room: a
        // set kept in the slots' room cuts every streamed MSM into small pieces, which cost
        // more than streaming that set too (BENCHMARKS.md, "H100 — partition under
        // gpu.memory_limit"). Each set is tried beside the call as it would be with that set
        // and those kept before it resident, the rest streamed (their scratch in that room).
        let all_fit = self.all_fit(st, sh, g1, g2, call)?;
        let beside = |resident| match all_fit {
            true => call,
            false => call_of(cut, resident) + STREAM_ROOM,
        };
        let keys = self.key_resident(st, sh, g1, g2, &beside)?;
        let mut keys = match self.every_set(st, (g1, g2), keys, call, cut)? {
            Ok(p) => return Ok(p),
            Err(keys) => keys,
        };
        // Some sets stream: the call needs room for their slots too, up to [`STREAM_ROOM`],
        // at least the smallest pieces of the largest set that streams. Other keys' sets go
        // for that least room only; then this call's resident sets, the last kept first.
        let least = |keys: &[BasesKey]| least_streamed(dev, (g1, g2), keys);
        loop {
            let call = call_of(cut, resident_msms((g1, g2), &keys));
            let least = least(&keys);
            // H's MSM beside the witness's: a second streaming room, where a witness set streams
            // too (else H's MSM has nothing to hide beside); the witness's room then needs only
            // its own sets' least pieces.
            let beside = self.h_beside(g1, &keys, cut).and_then(|h| {
                let w = least_streamed(dev, (g1.get(1..).unwrap_or(&[]), g2), &keys);
                (w > 0).then_some((w, h))
            });
            let (w_least, h_least) = beside.map_or((least, None), |(w, h)| (w, Some(h)));
            let want = call + STREAM_ROOM * (1 + u64::from(h_least.is_some()));
            let fits = st.fits(dev, cap, want)?;
            if fits.is_ok() || h_least.is_some() && st.fits(dev, cap, call + STREAM_ROOM)?.is_ok() {
                let spare = fits
                    .map_or_else(|usable| usable, |()| want)
                    .saturating_sub(call);
                let (stream_room, h_room) = plan::split_rooms(spare, w_least, h_least);
                return Ok(Prepared {
                    keys,
                    stream_room,
                    cut,
                    h_room,
                });
            }
            match st.make_room(dev, cap, call + least, &keys, "partition") {
                Ok(()) => {
                    let usable = match st.fits(dev, cap, want)? {
                        Ok(()) => want,
                        Err(usable) => usable,
                    };
                    let spare = usable.saturating_sub(call);
                    let (stream_room, h_room) = plan::split_rooms(spare, w_least, h_least);
                    return Ok(Prepared {
                        keys,
                        stream_room,
                        cut,
                        h_room,
                    });
                }
                Err(e) if e.is_out_of_memory() => {}
                Err(e) => return Err(e),
            }
            match keys.pop() {
                Some(k) => {
                    st.bases.remove(&k);
                }
                // The last resort: the spared recording goes too.
                None if st.in_use_recording != unspared => st.in_use_recording = unspared,
                None => {
                    let usable = st.fits(dev, cap, call + least)?.err().unwrap_or(0);
                    return Err(GpuError::OutOfMemory {
                        what: "partition with its bases streamed",
                        need_bytes: call + least,
                        free_bytes: usable,
                    });
                }
            }
        }
    }

    /// Whether every base set of `g1` and `g2` can be resident beside `call` bytes: those not
    /// resident yet, with `sh`'s twiddles and H tables if missing, fit in what is free now and
    /// what evicting other keys' sets and idle recordings would give back
    /// ([`State::evictable_bytes`]). A count only; nothing is uploaded or evicted.
    fn all_fit(
        &self,
        st: &mut State,
        sh: &Shape,
        g1: &[QueryBases<'_, G1Affine>],
        g2: Option<&QueryBases<'_, G2Affine>>,
        call: u64,
    ) -> GpuResult<bool> {
        let (bases, tables) = absent(&self.dev, st, sh, g1, g2);
        st.could_fit(
            &self.dev,
            self.cap(),
            call + bases + tables,
            &own_keys(g1, g2),
        )
    }

    /// Whether a call of `call` bytes fits with every set of `g1` and `g2` streamed (beside the
    /// smallest pieces of the largest, and `sh`'s twiddles and H tables if missing), in what is
    /// free now and what evicting any set or idle recording would give back. A count only.
    fn fits_streaming(
        &self,
        st: &mut State,
        sh: &Shape,
        (g1, g2): Queries<'_, '_>,
        call: u64,
    ) -> GpuResult<bool> {
        let least = least_streamed(&self.dev, (g1, g2), &[]);
        let (_, tables) = absent(&self.dev, st, sh, g1, g2);
        st.could_fit(&self.dev, self.cap(), call + least + tables, &[])
    }

    /// The sets [`CudaBackend::key_resident`] keeps beside a call of `call` bytes cut as `cut`:
    /// `Ok` when that is all of them and the call fits beside them, else `Err` with the keys
    /// of those kept.
    fn all_resident(
        &self,
        st: &mut State,
        sh: &Shape,
        (g1, g2): Queries<'_, '_>,
        call: u64,
        cut: Cut,
    ) -> GpuResult<Result<Prepared, Vec<BasesKey>>> {
        let keys = self.key_resident(st, sh, g1, g2, &|_| call)?;
        self.every_set(st, (g1, g2), keys, call, cut)
    }

    /// `Ok` when `keys` are every set of `g1` and `g2` and a call of `call` bytes fits beside
    /// them, else `Err(keys)`.
    fn every_set(
        &self,
        st: &mut State,
        (g1, g2): Queries<'_, '_>,
        keys: Vec<BasesKey>,
        call: u64,
        cut: Cut,
    ) -> GpuResult<Result<Prepared, Vec<BasesKey>>> {
        if keys.len() < g1.len() + usize::from(g2.is_some()) {
            return Ok(Err(keys));
        }
        match st.make_room(&self.dev, self.cap(), call, &keys, "partition") {
            Ok(()) => Ok(Ok(Prepared {
                keys,
                stream_room: 0,
                cut,
                h_room: 0,
            })),
            Err(e) if e.is_out_of_memory() => Ok(Err(keys)),
            Err(e) => Err(e),
        }
    }

    /// Twiddles and H tables for `sh`'s domain, then the base sets of `g1` and `g2` in
    /// [`KEEP_ORDER`], each with room beside it for `beside(resident)` more bytes (`resident`:
    /// the MSMs of the sets kept so far and its own) and without evicting any set of this
    /// call; returns the keys of the sets kept resident, in that order. A set that does not
    /// fit is left out (its MSM streams its bases); the ones after it are still tried.
    fn key_resident(
        &self,
        st: &mut State,
        sh: &Shape,
        g1: &[QueryBases<'_, G1Affine>],
        g2: Option<&QueryBases<'_, G2Affine>>,
        beside: &dyn Fn(ResidentMsms) -> u64,
    ) -> GpuResult<Vec<BasesKey>> {
        let (dev, cap) = (&self.dev, self.cap());
        st.ensure_twiddles(dev, cap, sh.log_n, 0)?;
        if !st.tables.contains_key(&sh.log_n) {
            st.make_room(dev, cap, H_TABLES_ROOM, &[], "H tables")?;
            let domain = Domain::for_size(sh.n).map_err(|e| GpuError::Internal(e.to_string()))?;
            let t = dev.h_tables(&domain)?;
            st.tables.insert(sh.log_n, t);
        }
        // None of this call's own sets is evicted for another of them: a set that does not fit
        // beside those already resident streams, and the resident ones stay for the next
        // partition (else each call would evict and upload again). Only `prepare` gives up
        // its own sets, when the call lacks room.
        let own = own_keys(g1, g2);
        let mut keys = Vec::new();
        let mut resident = [false; 5];
        for i in KEEP_ORDER {
            let (key, limbs) = match (g1.get(i), i) {
                (Some(q), _) => (q.key(), G1::affine_limbs(q.whole)),
                (None, 4) => match g2 {
                    Some(q) => (q.key(), G2::affine_limbs(q.whole)),
                    None => continue,
                },
                (None, _) => continue,
            };
            let mut with = resident;
            with[i] = true;
            match st.make_resident(dev, cap, key, limbs, beside(with), &own) {
                Ok(()) => {
                    keys.push(key);
                    resident = with;
                }
                Err(e) if e.is_out_of_memory() => {}
                Err(e) => return Err(e),
            }
        }
        Ok(keys)
    }

    /// Makes `pk`'s bases (B_G2's too with `with_b_g2`), the twiddles and H tables of its
    /// domain resident ahead of its partitions, when all of it fits in the device's free
    /// memory beside the largest partition the key can have, without evicting anything.
    /// Returns the bytes of bases uploaded: 0 when they were resident already, when they do
    /// not fit (the first partition then makes room as usual), for a key no partition call
    /// can take, or with `gpu.warm_keys = false`.
    pub(crate) fn warm_key(&self, pk: &ProvingKey, with_b_g2: bool) -> GpuResult<u64> {
        let Some(sh) = Shape::largest(pk).filter(|sh| sh.log_n <= MAX_GPU_LOG_N) else {
            return Ok(0);
        };
        if !self.dev.warm_keys {
            return Ok(0);
        }
        let (g1, g2) = queries(pk, 0, 0, with_b_g2);
        let mut guard = self.state()?;
        let st: &mut State = &mut guard;
        let (bases, tables) = absent(&self.dev, st, &sh, &g1, g2.as_ref());
        if bases == 0 {
            return Ok(0);
        }
        let call = sh.need_bytes(
            every_msm_resident(with_b_g2),
            self.dev.msm_window,
            Cut::Knob(self.dev.msm_pieces),
        );
        let need = bases + tables + call;
        if let Err(usable) = st.fits(&self.dev, self.cap(), need)? {
            tracing::info!(
                device = self.dev.ordinal,
                need_bytes = need,
                usable_bytes = usable,
                "key not made resident ahead: it would evict other bases"
            );
            return Ok(0);
        }
        self.key_resident(st, &sh, &g1, g2.as_ref(), &|_| call)?;
        Ok(bases)
    }
}

/// What a call over `sh` with these sets would upload first: the bytes of the sets not
/// resident, and of the twiddles and H tables its domain lacks.
fn absent(
    dev: &Device,
    st: &State,
    sh: &Shape,
    g1: &[QueryBases<'_, G1Affine>],
    g2: Option<&QueryBases<'_, G2Affine>>,
) -> (u64, u64) {
    let missing = |key: BasesKey, bytes: usize| match st.bases.contains_key(&key) {
        true => 0,
        false => bytes as u64,
    };
    let bases = g1
        .iter()
        .map(|q| missing(q.key(), size_of_val(q.whole)))
        .chain(g2.map(|q| missing(q.key(), size_of_val(q.whole))))
        .sum();
    let twiddles = match st.needs_twiddles(sh.log_n) {
        true => dev.twiddle_bytes(sh.log_n),
        false => 0,
    };
    let tables = match st.tables.contains_key(&sh.log_n) {
        true => 0,
        false => H_TABLES_ROOM,
    };
    (bases, twiddles + tables)
}

/// Device bytes the smallest streamed pieces of the largest set of `g1` and `g2` not among
/// `resident` need: the least room a call that streams them must keep.
fn least_streamed(dev: &Device, (g1, g2): Queries<'_, '_>, resident: &[BasesKey]) -> u64 {
    let rule = dev.msm_window;
    g1.iter()
        .filter(|q| !resident.contains(&q.key()))
        .map(|q| plan::streamed_minimum::<G1>(q.points().len(), rule, Streams::Points))
        .chain(
            g2.filter(|q| !resident.contains(&q.key()))
                .map(|q| plan::streamed_minimum::<G2>(q.points().len(), rule, Streams::Points)),
        )
        .max()
        .unwrap_or(0)
}

/// Which MSMs of a call over `g1` and `g2` read resident bases when `keys` are resident.
fn resident_msms((g1, g2): Queries<'_, '_>, keys: &[BasesKey]) -> ResidentMsms {
    let mut resident = [false; 5];
    for (r, q) in resident.iter_mut().zip(g1) {
        *r = keys.contains(&q.key());
    }
    resident[4] = g2.is_some_and(|q| keys.contains(&q.key()));
    resident
}

/// The keys of a call's own base sets.
fn own_keys(
    g1: &[QueryBases<'_, G1Affine>],
    g2: Option<&QueryBases<'_, G2Affine>>,
) -> Vec<BasesKey> {
    g1.iter()
        .map(|q| q.key())
        .chain(g2.map(|q| q.key()))
        .collect()
}
