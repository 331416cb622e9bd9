//! a, b, c and the witness on the device: a [`DeviceAbc`] handed by the caller, or host
//! vectors uploaded on the copy stream; then H from a, b, c, kept on the device for its MSM.

use std::time::{Duration, Instant};

use cudarc::driver::CudaSlice;

use blstrs::Scalar;

use super::shape::Shape;
use crate::gpu::cuda::backend::CudaBackend;
use crate::gpu::cuda::device::{Device, Lane};
use crate::gpu::cuda::ntt::{HTables, Twiddles};
use crate::gpu::cuda::staging::Staging;
use crate::gpu::error::{GpuError, GpuResult};
use crate::gpu::host::{self, FR_LIMBS};
use crate::groth16::error::Result;
use crate::groth16::msm::Scalars;
use crate::groth16::packed::PackedScalars;
use crate::groth16::prover::{Abc, Witness};
use crate::stages::partition::AbcInput;

/// a, b, c of one partition in device memory: 2^log_n Fr each, natural order, zero-padded.
/// For a/b/c evaluated on the device (a recorded R1CS times the witness); pass it as
/// [`AbcInput::Device`]. When evaluated there it also keeps the witness it was evaluated from,
/// so that the partition call does not upload the same witness a second time.
pub struct DeviceAbc {
    log_n: u32,
    device: usize,
    bufs: [CudaSlice<u64>; 3],
    aux: Option<DeviceAux>,
    /// The resident recording they were evaluated from, if any.
    recording: Option<u64>,
}

/// The private witness on the device: its u64 limbs (at least one) and how many scalars.
pub(crate) struct DeviceAux {
    pub limbs: CudaSlice<u64>,
    pub scalars: usize,
}

impl DeviceAbc {
    /// log2 of the domain the buffers hold.
    pub fn log_n(&self) -> u32 {
        self.log_n
    }

    /// a, b, c of 2^log_n Fr each (u64 limbs) on device `device`, evaluated from resident
    /// recording `recording` when there was one.
    pub(crate) fn from_parts(
        log_n: u32,
        device: usize,
        bufs: [CudaSlice<u64>; 3],
        aux: Option<DeviceAux>,
        recording: Option<u64>,
    ) -> Self {
        DeviceAbc {
            log_n,
            device,
            bufs,
            aux,
            recording,
        }
    }

    /// The id of the recording a, b, c were evaluated from, if any.
    pub(crate) fn recording(&self) -> Option<u64> {
        self.recording
    }

    /// The three buffers and the witness, when kept.
    pub(super) fn into_parts(self) -> ([CudaSlice<u64>; 3], Option<DeviceAux>) {
        (self.bufs, self.aux)
    }

    /// The three buffers.
    pub(crate) fn buffers(&self) -> [&CudaSlice<u64>; 3] {
        [&self.bufs[0], &self.bufs[1], &self.bufs[2]]
    }
}

/// Host wall time spent, to report the host share of a partition.
#[derive(Default)]
pub(crate) struct HostClock(pub Duration);

impl HostClock {
    pub fn time<T>(&mut self, f: impl FnOnce() -> T) -> T {
        let t = Instant::now();
        let r = f();
        self.0 += t.elapsed();
        r
    }
}

/// Where a partition's a, b, c are, checked against its domain: the caller's host vectors, or
/// device buffers with the witness they were evaluated from, when kept.
pub(super) enum AbcSource<'a> {
    Host(&'a mut Abc),
    Device(Box<DeviceAbc>),
}

impl<'a> AbcSource<'a> {
    /// The input checked: host vectors no longer than the domain, device buffers of this
    /// domain on this device.
    pub fn of(input: AbcInput<'a>, sh: &Shape, device: usize) -> GpuResult<Self> {
        match input {
            AbcInput::Device(any) => {
                let d = any.downcast::<DeviceAbc>().map_err(|_| {
                    GpuError::Internal("device a/b/c of another backend type".into())
                })?;
                if d.log_n != sh.log_n || d.device != device {
                    return Err(GpuError::Internal(format!(
                        "device a/b/c of 2^{} on device {}, partition of 2^{} on device {}",
                        d.log_n, d.device, sh.log_n, device
                    )));
                }
                Ok(AbcSource::Device(d))
            }
            AbcInput::Host(abc) => {
                if let Some(long) = [&abc.a, &abc.b, &abc.c].iter().find(|v| v.len() > sh.n) {
                    return Err(GpuError::BufferTooShort {
                        kernel: "partition",
                        arg: "domain (a, b or c is longer)",
                        have: sh.n,
                        need: long.len(),
                    });
                }
                Ok(AbcSource::Host(abc))
            }
        }
    }
}

/// How much of H a partition's a, b, c buffers went through before [`Device::h_of`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum HDone {
    /// Still evaluations on the domain.
    Nothing,
    /// Each on the coset ([`Device::h_to_coset`]).
    Coset,
    /// All of H queued ([`Device::h_finish`]): `b` holds it.
    All,
}

impl Device {
    /// Three zeroed device buffers of n Fr each, for a, b, c. Taken before any kernel of the
    /// call frees its scratch: a buffer the copy stream took from the pool after a kernel's
    /// scratch went back to it on the compute stream could make the uploads wait for that
    /// kernel (the pool's reuse dependency). On the H200 the uploads beside the MSMs took
    /// about 600 ms at 2^26 either way, against 252 ms alone (docs/bench-log/2026-12-02.md,
    /// "Why a, b, c uploaded slowly beside the MSMs").
    pub(crate) fn abc_buffers(&self, n: usize) -> GpuResult<[CudaSlice<u64>; 3]> {
        let one = || self.alloc_zeros_on::<u64>(Lane::Copy, n * FR_LIMBS, "a/b/c");
        Ok([one()?, one()?, one()?])
    }

    /// a, b, c copied into `bufs` (from [`Device::abc_buffers`]) on the copy stream, through
    /// `staging` when there is one, `then` called on each buffer once its copy is queued;
    /// returns the host time spent copying. Kernels on the compute stream that use the
    /// buffers wait for the copies (cudarc records their writes).
    pub(crate) fn abc_upload(
        &self,
        mut staging: Option<&mut Staging>,
        abc: &Abc,
        bufs: &mut [CudaSlice<u64>; 3],
        mut then: impl FnMut(&mut CudaSlice<u64>) -> GpuResult<()>,
    ) -> GpuResult<Duration> {
        let mut host_time = Duration::ZERO;
        for (v, d) in [&abc.a, &abc.b, &abc.c].into_iter().zip(bufs.iter_mut()) {
            host_time += self.upload_staged(
                &self.copy,
                staging.as_deref_mut(),
                host::scalars_as_u64(v),
                &mut d.slice_mut(..),
                "upload a/b/c",
            )?;
            then(d)?;
        }
        Ok(host_time)
    }

    /// H from a, b, c on the device (consumed), as far as `done` says they went already: the
    /// returned buffer holds h's n coefficients (the last one zero), the rest queued on the
    /// stream of [`Lane::H`].
    pub(super) fn h_of(
        &self,
        bufs: [CudaSlice<u64>; 3],
        done: HDone,
        tw: &Twiddles,
        tabs: &HTables,
        log_n: u32,
    ) -> GpuResult<CudaSlice<u64>> {
        let [mut a, mut b, mut c] = bufs;
        match done {
            HDone::Nothing => self.h_pipeline(Lane::H, &mut a, &mut b, &mut c, tw, tabs, log_n)?,
            HDone::Coset => self.h_finish(Lane::H, &mut a, &mut b, &c, tw, tabs, log_n)?,
            HDone::All => {}
        }
        Ok(b)
    }
}

impl CudaBackend {
    /// Copies host a/b/c to the device as a [`DeviceAbc`] (tests of the device-input path;
    /// a/b/c evaluated on the device fill one the same way).
    pub fn upload_abc(&self, abc: &Abc) -> Result<DeviceAbc> {
        let n = abc.a.len().max(abc.b.len()).max(abc.c.len()).max(2);
        let n = n.next_power_of_two();
        let mut st = self.state()?;
        let mut bufs = self.dev.abc_buffers(n)?;
        self.dev
            .abc_upload(st.staging(&self.dev), abc, &mut bufs, |_| Ok(()))?;
        Ok(DeviceAbc::from_parts(
            n.trailing_zeros(),
            self.dev.ordinal,
            bufs,
            None,
            None,
        ))
    }

    /// The private witness on the device: `kept` when a/b/c evaluated on the device kept the
    /// same witness (a/b/c of another could not make a valid proof with this one either),
    /// else uploaded now through `staging` (a packed one as its bits and dense values,
    /// expanded on the device); with the host time spent copying.
    pub(super) fn witness_on_device(
        &self,
        staging: Option<&mut Staging>,
        aux: &HostAux<'_>,
        kept: Option<DeviceAux>,
    ) -> GpuResult<(CudaSlice<u64>, Duration)> {
        if let Some(k) = kept.filter(|k| k.scalars == aux.len()) {
            return Ok((k.limbs, Duration::ZERO));
        }
        if let Some(p) = aux.packed() {
            return self.dev.expand_packed(staging, p);
        }
        let src = host::scalars_as_u64(aux.get());
        let mut d = self
            .dev
            .alloc_scratch_on::<u64>(Lane::Copy, src.len().max(1), "witness")?;
        let t = self.dev.upload_staged(
            &self.dev.copy,
            staging,
            src,
            &mut d.slice_mut(..),
            "upload witness",
        )?;
        Ok((d, t))
    }
}

/// A partition's private variables plain on the host, made only where a path reads them: a
/// witness that arrived packed ([`crate::stages::partition::PartitionProver::reads_packed`])
/// and was expanded on the device for a/b/c is expanded there again where the call needs it
/// again (the lean cut's second upload), and unpacked on the host only for an MSM below the
/// GPU threshold (once, for this call).
pub(crate) struct HostAux<'w> {
    w: &'w Witness,
    plain: std::cell::OnceCell<std::borrow::Cow<'w, [Scalar]>>,
}

impl<'w> HostAux<'w> {
    pub(crate) fn new(w: &'w Witness) -> Self {
        HostAux {
            w,
            plain: std::cell::OnceCell::new(),
        }
    }

    /// Private variables held (without unpacking).
    pub(crate) fn len(&self) -> usize {
        self.w.aux_len()
    }

    /// The packed witness, when it arrived packed: the device expands it from these.
    pub(crate) fn packed(&self) -> Option<&'w PackedScalars> {
        match self.w.aux_scalars() {
            Scalars::Packed(p) => Some(p),
            Scalars::Plain(_) => None,
        }
    }

    /// The plain values, unpacked on the first call where the witness is packed.
    pub(crate) fn get(&self) -> &[Scalar] {
        self.plain.get_or_init(|| {
            if !self.w.is_plain() {
                tracing::debug!(
                    values = self.w.aux_len(),
                    "packed witness unpacked on the host for this partition call"
                );
            }
            self.w.plain_aux()
        })
    }
}
