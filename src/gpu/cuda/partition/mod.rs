//! The device-resident partition: a, b, c and the private witness uploaded once on the copy
//! stream (each transform starts as soon as its input is there), H computed and kept on the
//! device for its MSM, the A and B densities applied there, and only the window sums of each
//! MSM downloaded. The few public-input terms run on the CPU. Memory for the whole call is
//! asked of the memory policy before anything is uploaded, so a partition that does not fit
//! fails with out-of-memory with the caller's buffers untouched (the stage then falls back).

mod msms;
mod prepare;
mod shape;
mod upload;

use std::time::{Duration, Instant};

use cudarc::driver::CudaSlice;

use self::shape::{queries, Shape};
pub use self::upload::DeviceAbc;
pub(crate) use self::upload::DeviceAux;
use self::upload::HostClock;
use super::backend::CudaBackend;
use super::calls::no_fallback;
use super::device::Lane;
use super::memory::State;
use super::witness::density_words;
use crate::cs::Density;
use crate::error::Result;
use crate::gpu::error::{GpuError, GpuResult};
use crate::gpu::host::{self, G1, G2};
use crate::gpu::plan::MIN_GPU_MSM;
use crate::key::ProvingKey;
use crate::partition::{AbcInput, PartitionProver, PartitionSums, PartitionTimes};
use crate::prover::{Abc, G1Sums, Witness};

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
        let (g1q, g2q) = queries(pk, &sh, with_b_g2);
        let mut clock = HostClock::default();
        let mut guard = self.state()?;
        let st: &mut State = &mut guard;
        self.dev
            .peak_used
            .store(0, std::sync::atomic::Ordering::Relaxed);
        let keys = self.prepare(st, pk, &sh, &g1q, g2q.as_ref(), with_b_g2)?;
        let prepare = start.elapsed();
        // From here the host buffers may be taken: no error may send the call elsewhere.
        let (h, kept) = self
            .device_h(st, &sh, input, abc_done, &mut clock)
            .map_err(no_fallback)?;
        let uploads = || -> GpuResult<_> {
            let words = [&w.a_aux_density, &w.b_aux_density].map(density_words);
            // a/b/c evaluated on the device kept the witness they came from (the same one:
            // a/b/c of another witness could not make a valid proof with this one either).
            if let Some(k) = kept.filter(|k| k.scalars == w.aux.len()) {
                return Ok((k.limbs, Duration::ZERO, words));
            }
            let staging = st.staging(&self.dev);
            let src = host::scalars_as_u64(&w.aux);
            let mut aux =
                self.dev
                    .alloc_scratch_on::<u64>(Lane::Copy, src.len().max(1), "witness")?;
            let t = self.dev.upload_staged(
                &self.dev.copy,
                staging,
                src,
                &mut aux.slice_mut(..),
                "upload witness",
            )?;
            Ok((aux, t, words))
        };
        let (aux, t, words) = uploads().map_err(no_fallback)?;
        clock.0 += t;
        let upload = start.elapsed();
        self.dev.note_usage();
        self.dev
            .stream
            .synchronize()
            .map_err(|e| no_fallback(super::device::drv("synchronize")(e)))?;
        let h_done = start.elapsed();
        let st: &State = st;
        let dev_words = |w: &[u32]| self.dev.upload_small(w).map_err(no_fallback);
        let filter = |d: &Density, w: &[u32]| -> Result<Option<CudaSlice<u64>>> {
            if d.count() < MIN_GPU_MSM {
                return Ok(None);
            }
            let words = dev_words(w)?;
            let f = self.dev.filter(&aux.slice(..), &words, sh.m_aux, d.count());
            Ok(Some(f.map_err(no_fallback)?))
        };
        let hs = self
            .device_msm::<G1>(st, &keys[0], &h.slice(..), sh.n - 1)
            .map_err(no_fallback)?;
        let l = if sh.m_aux < MIN_GPU_MSM {
            crate::msm::msm_g1(&pk.l, &w.aux, None)?
        } else {
            self.device_msm::<G1>(st, &keys[1], &aux.slice(..), sh.m_aux)
                .map_err(no_fallback)?
        };
        drop(h);
        let fa = filter(&w.a_aux_density, &words[0])?;
        let a_aux = self.aux_msm::<G1>(
            st,
            &keys[2],
            &w.a_aux_density,
            fa.as_ref(),
            g1q[2].points,
            &w.aux,
            crate::msm::msm_g1,
        )?;
        drop(fa);
        let fb = filter(&w.b_aux_density, &words[1])?;
        let b_aux = self.aux_msm::<G1>(
            st,
            &keys[3],
            &w.b_aux_density,
            fb.as_ref(),
            g1q[3].points,
            &w.aux,
            crate::msm::msm_g1,
        )?;
        let b2_aux = match (&g2q, keys.get(4)) {
            (Some(q), Some(key)) => Some(self.aux_msm::<G2>(
                st,
                key,
                &w.b_aux_density,
                fb.as_ref(),
                q.points,
                &w.aux,
                crate::msm::msm_g2,
            )?),
            _ => None,
        };
        let msms = start.elapsed() - h_done;
        // The public-input terms: a handful of points, on the CPU.
        let (a_in, b_in, b2_in) = clock.time(|| -> Result<_> {
            let inputs = &w.inputs;
            let bd = Some(&w.b_input_density);
            Ok((
                crate::msm::msm_g1(&pk.a[..sh.a_split], inputs, None)?,
                crate::msm::msm_g1(&pk.b_g1[..sh.b_split], inputs, bd)?,
                match with_b_g2 {
                    true => Some(crate::msm::msm_g2(&pk.b_g2[..sh.b_split], inputs, bd)?),
                    false => None,
                },
            ))
        })?;
        let g1 = G1Sums {
            h: hs,
            l,
            a: a_in + a_aux,
            b_g1: b_in + b_aux,
        };
        let b_g2 = match (b2_in, b2_aux) {
            (Some(i), Some(a)) => Some(i + a),
            _ => None,
        };
        Ok(PartitionSums {
            g1,
            b_g2,
            times: PartitionTimes {
                prepare,
                upload,
                h: h_done,
                msms,
                host: clock.0,
            },
            peak_device_bytes: self
                .dev
                .peak_used
                .load(std::sync::atomic::Ordering::Relaxed),
        })
    }
}

impl PartitionProver for CudaBackend {
    fn evaluate_abc(
        &self,
        recording: &crate::compiled::Recording,
        inputs: &[blstrs::Scalar],
        aux: &[blstrs::Scalar],
    ) -> Result<Box<dyn std::any::Any + Send>> {
        Ok(Box::new(CudaBackend::evaluate_abc(
            self, recording, inputs, aux,
        )?))
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
}
