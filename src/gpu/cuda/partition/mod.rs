//! The device-resident partition: the private witness uploaded once (in the pieces of L's
//! MSM, each piece's kernels starting once its part is up, where L runs in pieces), the MSMs
//! that need only it (L, A, B_G1, B_G2; the A and B densities applied on the device) run while a, b, c
//! upload on the copy stream from a second thread (each transformed to the coset as soon as
//! it is there), then H finished and kept on the device for its MSM (with `gpu.h_stream =
//! "own"`, the default, all of H runs on a stream of its own as soon as a, b, c are up,
//! beside the witness's MSMs, and H's MSM waits for it); only the window sums of
//! each MSM come back. The few public-input terms run on the CPU. Memory for the whole call is
//! asked of the memory policy before anything is uploaded. Base sets that do not fit resident
//! beside the call (a key larger than `gpu.memory_limit` leaves room for) stream from the
//! page-locked key during their MSMs; a partition whose own buffers do not fit fails with
//! out-of-memory with the caller's buffers untouched (the stage then takes the per-call path).

mod msms;
mod prepare;
mod shape;
mod upload;

use std::sync::atomic::Ordering;
use std::time::Instant;

use cudarc::driver::CudaSlice;

use self::msms::Sets;
use self::shape::queries;
pub(crate) use self::shape::Shape;
pub use self::upload::DeviceAbc;
pub(crate) use self::upload::DeviceAux;
use self::upload::{AbcSource, HDone, HostAux, HostClock};
use super::backend::CudaBackend;
use super::calls::no_fallback;
use super::device::{drv, Lane};
use super::memory::{staging_of, State};
use super::witness::density_words;
use crate::gpu::error::GpuError;
use crate::gpu::host::G1;
use crate::gpu::plan::{self, MIN_GPU_MSM};
use crate::groth16::error::Result;
use crate::groth16::key::ProvingKey;
use crate::groth16::prover::{Abc, G1Sums, Witness};
use crate::stages::partition::{AbcInput, PartitionProver, PartitionSums, PartitionTimes};

impl CudaBackend {
    fn partition(
        &self,
        pk: &ProvingKey,
        input: AbcInput<'_>,
        w: &Witness,
        with_b_g2: bool,
        abc_done: &mut dyn FnMut(Abc),
    ) -> Result<PartitionSums> {
        let start = Instant::now();
        let sh = Shape::of(pk, w, with_b_g2)?;
        let (g1q, g2q) = queries(pk, sh.a_split, sh.b_split, with_b_g2);
        let mut clock = HostClock::default();
        let mut guard = self.state()?;
        let st: &mut State = &mut guard;
        self.dev.peak_used.store(0, Ordering::Relaxed);
        // a, b, c evaluated on the device are there already: the call asks room for the rest.
        // (A witness kept with them is still asked for again: conservative, and left as it
        // was until a device run measures the change on the uncapped C2 path.)
        let (on_device, recording) = match &input {
            AbcInput::Device(d) => (
                sh.abc_bytes(),
                d.downcast_ref::<DeviceAbc>().and_then(DeviceAbc::recording),
            ),
            AbcInput::Host(_) => (0, None),
        };
        let prep = self.prepare(
            st,
            &sh,
            (&g1q, g2q.as_ref()),
            with_b_g2,
            on_device,
            recording,
        )?;
        // Which cut a call took and what it kept (BATON_LOG=...,baton::gpu::cuda::partition=debug):
        // a capped call's rows depend on both.
        tracing::debug!(
            log_n = sh.log_n,
            cut = ?prep.cut,
            resident_sets = prep.keys.len(),
            stream_room = prep.stream_room,
            h_room = prep.h_room,
            "partition call prepared"
        );
        if prep.stream_room > 0 {
            // Bases that stream go by DMA from the key itself (once per key).
            self.pin_key_host(pk);
        }
        let prepare = start.elapsed();
        // From here the host buffers may be taken: no error may send the call elsewhere.
        let (host_abc, bufs, kept) = match AbcSource::of(input, &sh, self.dev.ordinal) {
            Ok(AbcSource::Host(abc)) => (Some(abc), None, None),
            Ok(AbcSource::Device(d)) => {
                let (bufs, kept) = d.into_parts();
                (None, Some(bufs), kept)
            }
            Err(e) => return Err(no_fallback(e).into()),
        };
        // Taken before any kernel of the call frees scratch (see `Device::abc_buffers`); L's
        // first pieces run while the witness still uploads.
        let mut bufs = match bufs {
            Some(b) => b,
            None => self.dev.abc_buffers(sh.n).map_err(no_fallback)?,
        };
        let words = [&w.a_aux_density, &w.b_aux_density].map(density_words);
        // Host a, b, c go up on the copy stream from a second thread while this one runs the
        // witness's MSMs on the compute stream: they need no H, and the uploads (6 GiB at
        // 2^26) hide behind them.
        let State {
            staging,
            twiddles,
            tables,
            bases,
            ..
        } = st;
        let (Some(tw), Some(tabs)) = (twiddles.as_ref(), tables.get(&sh.log_n)) else {
            return Err(
                no_fallback(GpuError::Internal("twiddles or H tables missing".into())).into(),
            );
        };
        let dev = &self.dev;
        let log_n = sh.log_n;
        // With H on its own stream, a, b, c already on the device go through all of H now,
        // beside the witness's upload and MSMs.
        if host_abc.is_none() && dev.h_own {
            let [a, b, c] = &mut bufs;
            dev.h_pipeline(Lane::H, a, b, c, tw, tabs, log_n)
                .map_err(no_fallback)?;
        }
        // Short of memory (the lean cut): all of H first, and a and c back in the pool before
        // the witness goes up, so that a, b, c and the witness are never on the device
        // together (`Shape::need_bytes`). Costs the overlap of the a/b/c upload with the
        // witness's MSMs.
        let mut host_abc = host_abc;
        let mut bufs = Some(bufs);
        let mut h_first = None;
        let mut abc_upload = std::time::Duration::ZERO;
        let mut kept = kept;
        if prep.cut.h_first() {
            // A witness kept on the device beside a/b/c evaluated there goes too: it goes up
            // again from the host after H.
            kept = None;
            let mut three = bufs
                .take()
                .ok_or_else(|| no_fallback(GpuError::Internal("a/b/c buffers".into())))?;
            let done = match (host_abc.take(), dev.h_own) {
                (Some(abc), _) => {
                    let t = Instant::now();
                    // Each buffer goes to the coset as soon as its copy is done (its kernels
                    // wait for that copy), so a's and b's transforms run while b and c upload:
                    // nothing else is on the device yet.
                    let coset =
                        |d: &mut CudaSlice<u64>| dev.h_to_coset(Lane::H, d, tw, tabs, log_n);
                    clock.0 += dev
                        .abc_upload(staging_of(staging, dev), abc, &mut three, coset)
                        .map_err(no_fallback)?;
                    abc_upload = t.elapsed();
                    // The device no longer reads host a, b, c.
                    abc_done(std::mem::take(abc));
                    HDone::Coset
                }
                (None, true) => HDone::All,
                (None, false) => HDone::Nothing,
            };
            let h = dev
                .h_of(three, done, tw, tabs, log_n)
                .map_err(no_fallback)?;
            // a and c (and a kept witness) are freed on their streams once H's kernels are
            // done: wait for all of them, so that the witness takes their room instead of more.
            for s in [&dev.h, &dev.copy, &dev.stream] {
                s.synchronize()
                    .map_err(|e| no_fallback(drv("synchronize")(e)))?;
            }
            h_first = Some(h);
        }
        let host_aux = HostAux::new(w);
        let kept = kept.filter(|k| k.scalars == host_aux.len());
        let l_pieces = prep.cut.pieces(sh.m_aux);
        let witness_staging = staging_of(staging, &self.dev);
        let l_key = g1q[1].key();
        let (aux, l_run, t) = match kept {
            // L in pieces from the plain host witness (its bases resident): each piece's
            // kernels start once its part of the witness is up. A packed one is expanded on
            // the device whole (its upload is a 24th-48th of the plain one's).
            None if host_aux.packed().is_none()
                && sh.m_aux >= MIN_GPU_MSM
                && l_pieces > 1
                && prep.resident(&l_key) =>
            {
                let (aux, run, t) = self
                    .witness_with_l(witness_staging, bases, &l_key, host_aux.get(), l_pieces)
                    .map_err(no_fallback)?;
                (aux, Some(run), t)
            }
            kept => {
                let (aux, t) = self
                    .witness_on_device(witness_staging, &host_aux, kept)
                    .map_err(no_fallback)?;
                (aux, None, t)
            }
        };
        clock.0 += t;
        // The witness is up (with L in pieces: its last piece queued, the first ones done).
        let witness_up = start.elapsed();
        let sets = Sets {
            bases,
            stream_room: prep.stream_room,
            cut: prep.cut,
        };
        // H is done (the lean cut): its streamed MSM (kernel-bound) may run on the twin's streams
        // beside the witness's (bound by their bases' copies).
        let (hq, h_room, h_n) = (&g1q[0], prep.h_room, sh.n - 1);
        let twin = self.twin.as_ref().filter(|_| h_room > 0);
        let beside = twin.zip(h_first.as_ref());
        let (wit, witness_done, uploaded, h_beside) = std::thread::scope(|s| {
            // No thread (none could be made): H's MSM after the witness's, in both rooms.
            let h_run = beside.and_then(|(twin, h)| {
                let run = move || {
                    let (pts, sc) = (hq.points(), h.slice(..));
                    let sum = self.msm_streamed_device::<G1>(twin, h_room, pts, &sc, h_n);
                    // Its slots' frees done before the next call counts the pool's bytes.
                    twin.synchronize()?;
                    sum.map(|sum| (sum, twin))
                };
                std::thread::Builder::new().spawn_scoped(s, run).ok()
            });
            let up = host_abc.as_deref().zip(bufs.as_mut()).map(|(abc, bufs)| {
                s.spawn(move || {
                    let t = Instant::now();
                    // Each buffer's transform to the coset is queued on H's stream once its
                    // copy is done, so the device has the work of a and b in hand while c
                    // still uploads. Under `h_stream = "compute"` that stream is the compute
                    // stream, where a transform queued before its copy ended would hold the
                    // witness's MSM kernels back. With H on its own stream, the rest of H
                    // follows at once, beside the MSMs.
                    let coset = |d: &mut CudaSlice<u64>| {
                        dev.copy.synchronize().map_err(drv("synchronize"))?;
                        dev.h_to_coset(Lane::H, d, tw, tabs, log_n)
                    };
                    let host = dev.abc_upload(staging_of(staging, dev), abc, bufs, coset)?;
                    if dev.h_own {
                        let [a, b, c] = bufs;
                        dev.h_finish(Lane::H, a, b, c, tw, tabs, log_n)?;
                    }
                    Ok((host, t.elapsed()))
                })
            });
            let wit = self.witness_msms(
                &sets,
                &sh,
                w,
                &host_aux,
                &aux,
                l_run,
                &words,
                &g1q,
                g2q.as_ref(),
            );
            let witness_done = start.elapsed();
            let uploaded = up.map(|t| {
                t.join().unwrap_or_else(|_| {
                    Err(GpuError::Internal(
                        "the a/b/c upload thread panicked".into(),
                    ))
                })
            });
            let h_beside = h_run.map(|t| {
                t.join().unwrap_or_else(|_| {
                    Err(GpuError::Internal("the thread of H's MSM panicked".into()))
                })
            });
            (wit, witness_done, uploaded, h_beside)
        });
        let h_beside = h_beside.map(|r| r.map(|(sum, twin)| self.h_beside_done(twin, sum)));
        // Host a, b, c were transformed to the coset as they arrived.
        let on_coset = uploaded.is_some();
        if let Some(r) = uploaded {
            let (host, wall) = r.map_err(no_fallback)?;
            clock.0 += host;
            abc_upload = wall;
            if let Some(abc) = host_abc {
                // The device no longer reads host a, b, c.
                abc_done(std::mem::take(abc));
            }
        }
        let wit = wit?;
        drop(aux);
        let upload = start.elapsed();
        let done = match (dev.h_own, on_coset) {
            (true, _) => HDone::All,
            (false, true) => HDone::Coset,
            (false, false) => HDone::Nothing,
        };
        let h = match (h_first, bufs) {
            (Some(h), _) => h,
            (None, Some(bufs)) => dev
                .h_of(bufs, done, tw, tabs, sh.log_n)
                .map_err(no_fallback)?,
            (None, None) => {
                return Err(no_fallback(GpuError::Internal("a/b/c buffers".into())).into())
            }
        };
        dev.note_usage();
        // H's MSM (compute stream) starts once all of H is done.
        for s in [&dev.h, &dev.stream] {
            s.synchronize()
                .map_err(|e| no_fallback(drv("synchronize")(e)))?;
        }
        let h_done = start.elapsed();
        let hs = match h_beside {
            Some(sum) => sum,
            None => {
                // Both rooms are free now (h_room: 0 unless no thread could be made beside).
                let sets = Sets {
                    stream_room: sets.stream_room + h_room,
                    ..sets
                };
                self.device_msm::<G1>(&sets, hq, &h.slice(..), h_n)
            }
        }
        .map_err(no_fallback)?;
        drop(h);
        let msms = (witness_done - witness_up) + (start.elapsed() - h_done);
        // The public-input terms: a handful of points, on the CPU.
        let (a_in, b_in, b2_in) = clock.time(|| -> Result<_> {
            let inputs = &w.inputs;
            let bd = Some(&w.b_input_density);
            Ok((
                crate::groth16::msm::msm_g1(&pk.a[..sh.a_split], inputs, None)?,
                crate::groth16::msm::msm_g1(&pk.b_g1[..sh.b_split], inputs, bd)?,
                match with_b_g2 {
                    true => Some(crate::groth16::msm::msm_g2(
                        &pk.b_g2[..sh.b_split],
                        inputs,
                        bd,
                    )?),
                    false => None,
                },
            ))
        })?;
        let g1 = G1Sums {
            h: hs,
            l: wit.l,
            a: a_in + wit.a,
            b_g1: b_in + wit.b,
        };
        let b_g2 = match (b2_in, wit.b2) {
            (Some(i), Some(a)) => Some(i + a),
            _ => None,
        };
        Ok(PartitionSums {
            g1,
            b_g2,
            times: PartitionTimes {
                prepare,
                upload,
                abc_upload,
                h: h_done - upload,
                msms,
                host: clock.0,
                device_abc: std::time::Duration::ZERO,
            },
            peak_device_bytes: self.dev.peak_used.load(Ordering::Relaxed),
            streamed_sets: g1q.len() + usize::from(g2q.is_some()) - prep.keys.len(),
        })
    }
}

impl PartitionProver for CudaBackend {
    fn evaluate_abc(
        &self,
        recording: &crate::compiled::Recording,
        inputs: &[blstrs::Scalar],
        aux: crate::groth16::msm::Scalars<'_>,
    ) -> Result<Box<dyn std::any::Any + Send>> {
        Ok(Box::new(CudaBackend::evaluate_abc(
            self, recording, inputs, aux,
        )?))
    }

    /// A packed witness goes up as bits and dense values and is expanded on the device
    /// ([`CudaBackend::evaluate_abc`]), kept there for the partition's MSMs.
    fn reads_packed(&self) -> bool {
        true
    }

    fn prove_partition(
        &self,
        pk: &ProvingKey,
        abc: AbcInput<'_>,
        w: &Witness,
        with_b_g2: bool,
        abc_done: &mut dyn FnMut(Abc),
    ) -> Result<PartitionSums> {
        let n = pk.h.len() as u64 + 1;
        if n > 1 << super::backend::MAX_GPU_LOG_N {
            // The NTT tables stop at 2^28: no room for it on any device (the per-call path
            // then computes H on the CPU).
            return Err(GpuError::OutOfMemory {
                what: "a/b/c of a domain above the GPU NTT's 2^28",
                need_bytes: 3 * 32 * n,
                free_bytes: 0,
            }
            .into());
        }
        self.partition(pk, abc, w, with_b_g2, abc_done)
    }

    fn check_limit(&self, pk: &ProvingKey, with_b_g2: bool) -> Result<()> {
        let Some(limit_bytes) = self.memory_limit_bytes() else {
            return Ok(());
        };
        let log_n = (pk.h.len() + 1).next_power_of_two().trailing_zeros();
        if log_n > super::backend::MAX_GPU_LOG_N {
            return Ok(());
        }
        let g1 = [pk.h.len(), pk.l.len(), pk.a.len(), pk.b_g1.len()];
        let g2 = if with_b_g2 { pk.b_g2.len() } else { 0 };
        let (minimum_bytes, why) = plan::partition_minimum(
            log_n,
            self.dev.twiddle_bytes(log_n),
            g1.into_iter().max().unwrap_or(0),
            g2,
            self.dev.msm_window,
        );
        if limit_bytes >= minimum_bytes {
            return Ok(());
        }
        Err(GpuError::BelowMinimum {
            device: self.dev.ordinal,
            limit_bytes,
            minimum_bytes,
            log_n,
            why,
        }
        .into())
    }

    fn prepare_streaming(&self, pk: &ProvingKey) {
        self.pin_key_host(pk);
    }

    fn warm(&self, pk: &ProvingKey, with_b_g2: bool) -> Result<u64> {
        Ok(self.warm_key(pk, with_b_g2)?)
    }
}
